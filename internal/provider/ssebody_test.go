package provider

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestSSEBodyFinish covers what Finish reads after a stream's last event:
// the body's end, so the connection is reused, but never more than
// drainLimit bytes nor longer than drainWait. Close alone (an error, a
// client that left) gives the connection up.
func TestSSEBodyFinish(t *testing.T) {
	const events = "data: {\"n\":1}\n\ndata: [DONE]\n\n"
	late := func(w http.ResponseWriter, r *http.Request) { time.Sleep(20 * time.Millisecond) }
	cases := []struct {
		name  string
		after func(w http.ResponseWriter, r *http.Request) // what the upstream does after [DONE]
		end   bool                                         // Finish (a clean end) or Close
		conns int                                          // connections for two requests
	}{
		{"end arrives late", late, true, 1},
		{"a comment, then the end", func(w http.ResponseWriter, r *http.Request) {
			late(w, r)
			_, _ = io.WriteString(w, ": bye\n\n")
			w.(http.Flusher).Flush()
			late(w, r)
		}, true, 1},
		{"body held open", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, true, 2},
		{"more than the limit", func(w http.ResponseWriter, r *http.Request) {
			late(w, r) // after the reader took what was there
			_, _ = io.WriteString(w, strings.Repeat(": padding\n", 2*drainLimit/10))
			w.(http.Flusher).Flush()
			late(w, r)
		}, true, 2},
		{"not ended (the client left)", late, false, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var conns atomic.Int64
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, events)
				w.(http.Flusher).Flush()
				tc.after(w, r)
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			for i := 0; i < 2; i++ {
				k := StartCall(context.Background(), 5*time.Second, 5*time.Second)
				req, _ := http.NewRequestWithContext(k.Ctx, http.MethodGet, srv.URL, nil)
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b := NewSSEBody(k, resp.Body)
				for {
					ev, err := b.R.Next()
					if err != nil {
						t.Fatalf("read: %v", err)
					}
					if string(ev.Data) == "[DONE]" {
						break
					}
				}
				if tc.end {
					b.Finish()
				} else if err := b.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				if !b.Closed() || b.Buffered() || b.R != nil {
					t.Errorf("not closed: Closed %v, Buffered %v, reader %v", b.Closed(), b.Buffered(), b.R != nil)
				}
				if err := context.Cause(k.Ctx); !errors.Is(err, context.Canceled) && !errors.Is(err, ErrIdleTimeout) {
					t.Errorf("exchange not released: %v", err)
				}
			}
			if got := conns.Load(); got != int64(tc.conns) {
				t.Errorf("%d connections for two requests, want %d", got, tc.conns)
			}
		})
	}
}
