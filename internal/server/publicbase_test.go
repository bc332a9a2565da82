package server

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestOriginBase(t *testing.T) {
	proxies, err := ParseProxies([]string{"10.0.0.0/8", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 41234}
	tests := []struct {
		name   string
		origin Origin
		remote string
		local  net.Addr // nil: no connection (a handler called directly)
		tls    bool
		header map[string]string
		want   string
	}{
		{name: "public url wins over everything", origin: Origin{PublicURL: "https://gw.example.com/", Listen: "127.0.0.1:8080", TrustedProxies: proxies},
			remote: "10.1.2.3:5000", local: local, header: map[string]string{"X-Forwarded-Host": "evil.example"}, want: "https://gw.example.com"},
		{name: "listen host, connection port", origin: Origin{Listen: "localhost:0"}, remote: "127.0.0.1:5000", local: local, want: "http://localhost:41234"},
		{name: "unspecified listen host: the connection's", origin: Origin{Listen: ":8080"}, remote: "192.0.2.7:5000",
			local: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8080}, want: "http://192.0.2.1:8080"},
		{name: "ipv6 listener", origin: Origin{Listen: "[::1]:8080"}, remote: "[::1]:5000", local: &net.TCPAddr{IP: net.IPv6loopback, Port: 8080},
			want: "http://[::1]:8080"},
		{name: "no connection: the listen address", origin: Origin{Listen: "127.0.0.1:8080"}, remote: "127.0.0.1:5000", want: "http://127.0.0.1:8080"},
		{name: "zero origin, no connection", remote: "127.0.0.1:5000", want: "http://localhost"},
		{name: "forwarded headers from an untrusted peer are ignored", origin: Origin{Listen: "127.0.0.1:8080", TrustedProxies: proxies},
			remote: "192.0.2.7:5000", local: local, header: map[string]string{"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"},
			want: "http://127.0.0.1:41234"},
		{name: "no trusted proxies: ignored from loopback too", origin: Origin{Listen: "127.0.0.1:8080"},
			remote: "127.0.0.1:5000", local: local, header: map[string]string{"X-Forwarded-Host": "evil.example"}, want: "http://127.0.0.1:41234"},
		{name: "trusted proxy by prefix", origin: Origin{Listen: "127.0.0.1:8080", TrustedProxies: proxies}, remote: "10.9.8.7:5000", local: local,
			header: map[string]string{"X-Forwarded-Host": "gw.example.com", "X-Forwarded-Proto": "HTTPS, http"}, want: "https://gw.example.com"},
		{name: "trusted proxy by address", origin: Origin{Listen: "127.0.0.1:8080", TrustedProxies: proxies}, remote: "[::1]:5000", local: local,
			header: map[string]string{"X-Forwarded-Host": "gw.example.com:8443, other.example"}, want: "http://gw.example.com:8443"},
		{name: "trusted proxy, proto only", origin: Origin{Listen: "127.0.0.1:8080", TrustedProxies: proxies}, remote: "10.0.0.1:5000", local: local,
			header: map[string]string{"X-Forwarded-Proto": "https"}, want: "https://127.0.0.1:41234"},
		{name: "trusted proxy, unknown proto", origin: Origin{Listen: "127.0.0.1:8080", TrustedProxies: proxies}, remote: "10.0.0.1:5000", local: local,
			header: map[string]string{"X-Forwarded-Proto": "gopher"}, want: "http://127.0.0.1:41234"},
		{name: "trusted proxy, forwarded host with a path", origin: Origin{Listen: "127.0.0.1:8080", TrustedProxies: proxies}, remote: "10.0.0.1:5000",
			local: local, header: map[string]string{"X-Forwarded-Host": "evil.example/x"}, want: "http://127.0.0.1:41234"},
		{name: "trusted proxy, forwarded host with a user", origin: Origin{Listen: "127.0.0.1:8080", TrustedProxies: proxies}, remote: "10.0.0.1:5000",
			local: local, header: map[string]string{"X-Forwarded-Host": "gw@evil.example"}, want: "http://127.0.0.1:41234"},
		{name: "tls connection", origin: Origin{Listen: "127.0.0.1:8443"}, remote: "127.0.0.1:5000", local: local, tls: true, want: "https://127.0.0.1:41234"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/console/login/github", nil)
			r.Host = "evil.example" // never used
			r.RemoteAddr = tt.remote
			if tt.local != nil {
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tt.local))
			}
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			} else {
				r.TLS = nil
			}
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			got := tt.origin.Base(r)
			if got != tt.want {
				t.Errorf("Base = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "evil") {
				t.Errorf("Base %q took a forged host", got)
			}
		})
	}
}

// Over a real connection, a forged Host never reaches the base.
func TestOriginBaseOverTheWire(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(Origin{Listen: "127.0.0.1:0"}.Base(r)))
	}))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Host = "evil.example"
	req.Header.Set("X-Forwarded-Host", "evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if want := srv.URL; string(body) != want {
		t.Fatalf("base %q, want the listener's %q", body, want)
	}
}

func TestParseProxy(t *testing.T) {
	tests := []struct {
		in   string
		want string
		bad  bool
	}{
		{in: "10.0.0.1", want: "10.0.0.1/32"},
		{in: " 10.1.2.3/8 ", want: "10.0.0.0/8"},
		{in: "::1", want: "::1/128"},
		{in: "::ffff:10.0.0.1", want: "10.0.0.1/32"},
		{in: "fd00::/8", want: "fd00::/8"},
		{in: "proxy.internal", bad: true},
		{in: "10.0.0.0/33", bad: true},
		{in: "", bad: true},
	}
	for _, tt := range tests {
		p, err := ParseProxy(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("ParseProxy(%q) = %v, want an error", tt.in, p)
			}
			continue
		}
		if err != nil || p != netip.MustParsePrefix(tt.want) {
			t.Errorf("ParseProxy(%q) = %v, %v; want %s", tt.in, p, err, tt.want)
		}
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:8080": true, "LOCALHOST:1": true, "[::1]:8080": true, "127.1.2.3:80": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:8080": false, "10.0.0.5:8080": false, "gw.example.com:80": false, "nonsense": false,
	} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
