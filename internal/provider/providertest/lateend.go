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
