package providertest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// LateEnd is a server in front of a fake upstream that ends each response
// a moment after the fake's last byte: the answer's bytes are flushed, then
// the body's end (an HTTP/1.1 chunked body's terminating chunk) follows
// after Delay, as over a real network. A client that closes a finished
// stream without reading that end loses the connection; Conns tells.
type LateEnd struct {
	*httptest.Server
	conns atomic.Int64
}

// NewLateEnd serves h (a fake upstream) with the body's end held back by
// delay; it is closed when the test ends.
func NewLateEnd(t testing.TB, h http.Handler, delay time.Duration) *LateEnd {
	l := &LateEnd{}
	l.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		time.Sleep(delay)
	}))
	l.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			l.conns.Add(1)
		}
	}
	l.Start()
	t.Cleanup(l.Close)
	return l
}

// Conns is the number of connections the server has accepted.
func (l *LateEnd) Conns() int { return int(l.conns.Load()) }

// Stream is what TwoStreams reads: a chat or Responses stream.
type Stream interface {
	Next() bool
	Err() error
	Close() error
}

// TwoStreams opens two streams one after the other, reading each to its
// end (whole) or only to its first event, and returns how many
// connections the server accepted for both: 1 when the first stream's
// connection was reused, 2 when it was given up.
func (l *LateEnd) TwoStreams(t testing.TB, whole bool, open func() (Stream, error)) int {
	t.Helper()
	for i := 0; i < 2; i++ {
		s, err := open()
		if err != nil {
			t.Fatalf("stream %d: %v", i+1, err)
		}
		for s.Next() && whole {
		}
		if err := s.Err(); err != nil {
			t.Fatalf("stream %d: %v", i+1, err)
		}
		_ = s.Close()
	}
	return l.Conns()
}
