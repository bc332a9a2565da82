package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"
	"time"
)

// A stream leaves its write deadline set on the connection (so that the
// server's last bytes, the final chunk and trailers, are bounded too); the
// next request on the same keep-alive connection must not inherit it, or a
// slow but healthy answer would be cut off. net/http clears the deadline
// after each response; this guards that the gateway can rely on it.
func TestWriteDeadlineClearedBetweenRequests(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/stream", func(w http.ResponseWriter, _ *http.Request) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		_, _ = io.WriteString(w, "stream")
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(300 * time.Millisecond) // well past the stream's deadline
		_, _ = io.WriteString(w, "slow")
	})
	srv := httptest.NewServer(New(mux, time.Second, Options{}).Handler())
	defer srv.Close()
	c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}, Timeout: time.Minute}
	for i, path := range []string{"/stream", "/slow"} {
		reused := false
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(ci httptrace.GotConnInfo) { reused = ci.Reused },
		})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != path[1:] {
			t.Fatalf("%s: %q, %v", path, b, err)
		}
		if i == 1 && !reused {
			t.Fatal("the second request did not reuse the connection; the test proves nothing")
		}
	}
}
