package fetch

import (
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"testing"
)

func TestBlocked(t *testing.T) {
	t.Parallel()
	cases := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.1.2.3", true},
		{"::1", true},
		{"10.0.0.1", true},
		{"172.16.5.4", true},
		{"172.31.255.255", true},
		{"192.168.1.1", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"169.254.169.254", true},
		{"169.254.0.1", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"::", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"ff02::1", true},
		{"ff05::2", true},
		{"255.255.255.255", true},
		{"240.0.0.1", true},
		{"198.18.0.1", true},
		{"fec0::1", true},
		{"::127.0.0.1", true},            // IPv4-compatible
		{"::ffff:127.0.0.1", true},       // IPv4-mapped loopback
		{"::ffff:10.0.0.1", true},        // IPv4-mapped private
		{"::ffff:169.254.169.254", true}, // IPv4-mapped metadata
		{"::ffff:100.64.0.1", true},      // IPv4-mapped CGNAT
		{"::ffff:0.0.0.0", true},
		{"64:ff9b::a00:1", true},     // NAT64 of 10.0.0.1
		{"64:ff9b::a9fe:a9fe", true}, // NAT64 of 169.254.169.254
		{"2002:7f00:1::1", true},     // 6to4 of 127.0.0.1
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"93.184.216.34", false},
		{"100.63.255.255", false}, // just below CGNAT
		{"100.128.0.0", false},    // just above CGNAT
		{"172.32.0.1", false},     // just above 172.16/12
		{"169.255.0.1", false},
		{"2606:4700:4700::1111", false},
		{"::ffff:8.8.8.8", false},
		{"64:ff9b::808:808", false}, // NAT64 of 8.8.8.8
		{"2002:808:808::1", false},  // 6to4 of 8.8.8.8
	}
	for _, c := range cases {
		if got := blocked(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("blocked(%s) = %v, want %v", c.addr, got, c.want)
		}
	}
	if !blocked(netip.Addr{}) {
		t.Error("the zero Addr must be blocked")
	}
}

func TestBlockedHost(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"metadata.google.internal":  true,
		"METADATA.Google.Internal.": true,
		"metadata":                  true,
		"169.254.169.254":           true,
		"::1":                       true,
		"::ffff:127.0.0.1":          true,
		"10.0.0.1":                  true,
		"example.com":               false,
		"8.8.8.8":                   false,
		"localhost":                 false, // a name: refused at dial time instead
	}
	for host, want := range cases {
		if got := blockedHost(host); got != want {
			t.Errorf("blockedHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestCheckRedirect drives the redirect hook directly: no loopback target can
// be reached with AllowPrivate off, so this is where redirects to internal
// addresses, odd schemes and hop counting are pinned down.
func TestCheckRedirect(t *testing.T) {
	t.Parallel()
	f := New(Options{MaxRedirects: 2})
	via := func(n int) []*http.Request {
		rs := make([]*http.Request, n)
		for i := range rs {
			rs[i] = &http.Request{URL: &url.URL{Scheme: "https", Host: "example.com", Path: "/a"}}
		}
		return rs
	}
	cases := []struct {
		target string
		hops   int
		want   error
	}{
		{"https://example.com/b.png", 1, nil},
		{"https://example.com/b.png", 2, nil},
		{"https://example.com/b.png", 3, errTooManyHops},
		{"http://127.0.0.1/", 1, errBlocked},
		{"http://127.0.0.1:8080/x", 1, errBlocked},
		{"http://[::1]/", 1, errBlocked},
		{"http://[::ffff:127.0.0.1]/", 1, errBlocked},
		{"http://169.254.169.254/latest/meta-data", 1, errBlocked},
		{"http://metadata.google.internal/computeMetadata/v1/", 1, errBlocked},
		{"http://10.0.0.1/x", 1, errBlocked},
		{"ftp://example.com/a.png", 1, errScheme},
		{"file:///etc/passwd", 1, errScheme},
		{"gopher://example.com/", 1, errScheme},
		{"http:///nohost", 1, errNoHost},
	}
	for _, c := range cases {
		u, err := url.Parse(c.target)
		if err != nil {
			t.Fatal(err)
		}
		got := f.checkRedirect(&http.Request{URL: u}, via(c.hops))
		if !errors.Is(got, c.want) || (c.want == nil) != (got == nil) {
			t.Errorf("checkRedirect(%s, %d hops) = %v, want %v", c.target, c.hops, got, c.want)
		}
	}
}

func TestNoProxyFromEnvironment(t *testing.T) {
	t.Parallel()
	tr, ok := New(Options{}).client.Transport.(*http.Transport)
	if !ok || tr.Proxy != nil {
		t.Fatal("the transport must not use a proxy")
	}
}
