package deploy

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/config"
)

// directives reads an nginx config into its simple directives, name →
// the arguments of each occurrence, whatever block they are in. Block
// openers (server {, location / {) are kept too, with their arguments.
func directives(src string) map[string][][]string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		line, _, _ = strings.Cut(line, "#")
		b.WriteString(line + "\n")
	}
	out := map[string][][]string{}
	for _, stmt := range strings.FieldsFunc(b.String(), func(r rune) bool { return r == ';' || r == '{' || r == '}' }) {
		fields := strings.Fields(stmt)
		if len(fields) > 0 {
			out[fields[0]] = append(out[fields[0]], fields[1:])
		}
	}
	return out
}

// only returns the arguments of a directive that must appear exactly once.
func only(t *testing.T, d map[string][][]string, name string) []string {
	t.Helper()
	if len(d[name]) != 1 {
		t.Errorf("nginx: %s appears %d times, want once", name, len(d[name]))
		return nil
	}
	return d[name][0]
}

var nginxSize = regexp.MustCompile(`^(\d+)([kKmMgG]?)$`)

// nginxBytes parses an nginx size (20m, 512k, 1024).
func nginxBytes(s string) (int64, error) {
	m := nginxSize.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not an nginx size", s)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	shift := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30}[strings.ToLower(m[2])]
	return n << shift, nil
}

// nginxDuration parses an nginx time (900s, 15m).
func nginxDuration(s string) (time.Duration, error) {
	if _, err := strconv.Atoi(s); err == nil {
		s += "s"
	}
	return time.ParseDuration(s)
}

// maxProviderTimeout is the longest a request may wait for its vendor: the
// longest silence a client connection may see.
func maxProviderTimeout(cfg *config.Config) time.Duration {
	var d time.Duration
	for _, p := range cfg.Providers {
		d = max(d, time.Duration(p.Timeout))
	}
	return d
}

// checkLoadBalancer: nginx sends to every replica on the gateway's port,
// streams without buffering, waits as long as a vendor may take, accepts
// the bodies the gateway accepts, and listens where Compose publishes it.
func checkLoadBalancer(t *testing.T, f composeFile, replicas []string, listen string, maxBody int64, vendorTimeout time.Duration, publicURL string) {
	t.Helper()
	lb, ok := f.Services["lb"]
	if !ok {
		t.Fatal("no service lb (the load balancer)")
	}
	src, ok := lb.mounts()["/etc/nginx/conf.d/default.conf"]
	if !ok {
		t.Fatal("lb: no config mounted at /etc/nginx/conf.d/default.conf")
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	d := directives(string(data))

	_, port, _ := net.SplitHostPort(listen)
	var servers []string
	for _, args := range d["server"] {
		if len(args) > 0 {
			servers = append(servers, args[0])
		}
	}
	var want []string
	for _, r := range replicas {
		want = append(want, r+":"+port)
	}
	slices.Sort(servers)
	if !slices.Equal(servers, want) {
		t.Errorf("nginx upstream servers %v, want every replica on the gateway's port %v", servers, want)
	}
	for _, r := range replicas {
		if lb.dependsOn()[r] == "" {
			t.Errorf("lb: does not depend on %s", r)
		}
	}

	for name, want := range map[string]string{"proxy_buffering": "off", "proxy_request_buffering": "off", "proxy_http_version": "1.1"} {
		if args := only(t, d, name); args != nil && (len(args) != 1 || args[0] != want) {
			t.Errorf("nginx: %s %v, want %s", name, args, want)
		}
	}
	for _, name := range []string{"proxy_read_timeout", "proxy_send_timeout"} {
		if args := only(t, d, name); args != nil {
			if v, err := nginxDuration(args[0]); err != nil || v <= vendorTimeout {
				t.Errorf("nginx: %s %s: a request may wait %s for its vendor (providers' timeout); want longer", name, args[0], vendorTimeout)
			}
		}
	}
	if args := only(t, d, "client_max_body_size"); args != nil {
		if n, err := nginxBytes(args[0]); err != nil || n < maxBody {
			t.Errorf("nginx: client_max_body_size %s is below the gateway's max_request_bytes %d", args[0], maxBody)
		}
	}

	// The published port is where public_url's default points.
	listens := only(t, d, "listen")
	u, err := url.Parse(publicURL)
	if err != nil || len(listens) == 0 {
		t.Fatalf("public URL %q, nginx listen %v", publicURL, listens)
	}
	if want := u.Port() + ":" + listens[0]; !slices.Contains(lb.Ports, want) {
		t.Errorf("lb ports %v: want %q (public URL %s → nginx listen %s)", lb.Ports, want, publicURL, listens[0])
	}
}

func TestNginxHelpers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{{"20m", 20 << 20, true}, {"512k", 512 << 10, true}, {"1024", 1024, true}, {"1G", 1 << 30, true}, {"20 m", 0, false}, {"", 0, false}} {
		got, err := nginxBytes(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("nginxBytes(%q) = %d, %v; want %d (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{{"900s", 900 * time.Second}, {"900", 900 * time.Second}, {"15m", 15 * time.Minute}} {
		if got, err := nginxDuration(tc.in); err != nil || got != tc.want {
			t.Errorf("nginxDuration(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	d := directives("upstream u {\n  server a:1 resolve; # b:2\n  server c:3;\n}\nserver { listen 80; location / { proxy_pass http://u; } }\n")
	if got := d["server"]; len(got) != 3 || got[0][0] != "a:1" || got[1][0] != "c:3" || len(got[2]) != 0 {
		t.Errorf("directives: server = %q", got)
	}
	if got := d["listen"]; len(got) != 1 || got[0][0] != "80" {
		t.Errorf("directives: listen = %q", got)
	}
}
