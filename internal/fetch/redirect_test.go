package fetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestFetchRedirects(t *testing.T) {
	t.Parallel()
	pngData := encoded(t, "png")
	mux := http.NewServeMux()
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 0 {
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(pngData)
			return
		}
		http.Redirect(w, r, "/hop/"+strconv.Itoa(n-1), http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/a.png", http.StatusFound)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusMovedPermanently)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := New(Options{AllowPrivate: true, MaxRedirects: 3})
	cases := []struct{ path, want string }{
		{"/hop/3", ""},
		{"/hop/4", "more than 3 redirects"},
		{"/loop", "more than 3 redirects"},
		{"/ftp", "http or https"},
		{"/file", "http or https"},
	}
	for _, c := range cases {
		mime, _, err := f.Fetch(context.Background(), srv.URL+c.path)
		if c.want == "" {
			if err != nil || mime != "image/png" {
				t.Errorf("%s: got %q, %v", c.path, mime, err)
			}
			continue
		}
		wantErr(t, err, c.want)
	}
}

// TestFetchBlocked runs the guard for real (AllowPrivate off) against a live
// loopback server that must never see a request.
func TestFetchBlocked(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	p := strconv.Itoa(port)
	f := New(Options{Timeout: 2 * time.Second})
	cases := []struct{ url, want string }{
		{"http://127.0.0.1:" + p + "/", "not allowed"},
		{"http://localhost:" + p + "/", "not allowed"}, // resolved, then refused at dial time
		{"http://LocalHost:" + p + "/", "not allowed"},
		{"http://[::1]:" + p + "/", "not allowed"},
		{"http://[::ffff:127.0.0.1]:" + p + "/", "not allowed"},
		{"http://0.0.0.0:" + p + "/", "not allowed"},
		{"http://169.254.169.254/latest/meta-data", "not allowed"},
		{"http://metadata.google.internal/computeMetadata/v1/", "not allowed"},
		{"http://metadata/computeMetadata/v1/", "not allowed"},
		{"http://10.0.0.1/x", "not allowed"},
		{"http://100.64.0.1/x", "not allowed"},
		{"file:///etc/passwd", "http or https"},
		{"ftp://example.com/a.png", "http or https"},
		{"/relative.png", "http or https"},
		{"http://[::1", "not a valid"},
	}
	for _, c := range cases {
		_, _, err := f.Fetch(context.Background(), c.url)
		e := wantErr(t, err, c.want)
		for _, leak := range []string{"127.0.0.1", "::1"} {
			if strings.Contains(c.url, "localhost") && strings.Contains(e.Message, leak) {
				t.Errorf("%s: message %q leaks the resolved address", c.url, e.Message)
			}
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the blocked server got %d requests", n)
	}
}

// TestFetchRedirectBlockedAtDial follows a redirect from an allowed server to
// a refused one, both reached by name, so the refusal can only come from the
// dial-time check on the redirect hop.
func TestFetchRedirectBlockedAtDial(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	inner := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(inner.Close)
	innerPort := inner.Listener.Addr().(*net.TCPAddr).Port
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+strconv.Itoa(innerPort)+"/secret", http.StatusFound)
	}))
	t.Cleanup(outer.Close)
	outerPort := uint16(outer.Listener.Addr().(*net.TCPAddr).Port)

	f := New(Options{Timeout: 2 * time.Second})
	f.dialBlocked = func(ap netip.AddrPort) bool { return ap.Port() != outerPort }
	_, _, err := f.Fetch(context.Background(), "http://localhost:"+strconv.Itoa(int(outerPort))+"/")
	e := wantErr(t, err, "not allowed")
	if !errors.Is(e, errBlocked) {
		t.Fatalf("cause %v is not the guard", e.Err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the redirect target got %d requests", n)
	}
}
