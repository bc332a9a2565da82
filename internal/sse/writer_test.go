package sse

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A client that takes nothing makes a write with a timeout fail, as too
// slow, instead of blocking the handler for good; one that goes away is not
// "too slow".
func TestWriterTimeout(t *testing.T) {
	errc := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		sw := NewWriter(w)
		sw.SetTimeout(100 * time.Millisecond)
		payload := bytes.Repeat([]byte("x"), 64<<10)
		for {
			if err := sw.Data(payload); err != nil {
				errc <- err
				return
			}
			if err := sw.Flush(); err != nil {
				errc <- err
				return
			}
		}
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL) // and never read the body
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	select {
	case err := <-errc:
		if !TooSlow(err) {
			t.Fatalf("write failed with %v, want a timeout", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the write never timed out")
	}
	if TooSlow(io.ErrClosedPipe) || TooSlow(errors.New("write: broken pipe")) {
		t.Error("other write errors count as too slow")
	}
}

// writeCounter is a ResponseWriter that records each write and flush.
type writeCounter struct {
	h       http.Header
	writes  []string
	flushes int
}

func (c *writeCounter) Header() http.Header { return c.h }
func (c *writeCounter) WriteHeader(int)     {}
func (c *writeCounter) Write(b []byte) (int, error) {
	c.writes = append(c.writes, string(b))
	return len(b), nil
}
func (c *writeCounter) FlushError() error { c.flushes++; return nil }

// Events queued between flushes reach the response in one write, byte for
// byte; a burst past maxPending is written without waiting for the flush.
func TestWriterCoalesces(t *testing.T) {
	c := &writeCounter{h: http.Header{}}
	w := NewWriter(c)
	_ = w.Data([]byte(`{"a":1}`))
	_ = w.Event("e", []byte(`{"b":2}`))
	_ = w.Done()
	if len(c.writes) != 0 {
		t.Fatalf("written before the flush: %q", c.writes)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "data: {\"a\":1}\n\nevent: e\ndata: {\"b\":2}\n\ndata: [DONE]\n\n"
	if len(c.writes) != 1 || c.writes[0] != want || c.flushes != 1 {
		t.Fatalf("writes %q, %d flushes", c.writes, c.flushes)
	}
	if err := w.Flush(); err != nil || len(c.writes) != 1 || c.flushes != 2 {
		t.Fatalf("an empty flush wrote: %q, %v", c.writes, err)
	}

	c = &writeCounter{h: http.Header{}}
	w = NewWriter(c)
	payload := bytes.Repeat([]byte("x"), 1000)
	n := 0
	for len(c.writes) == 0 {
		if err := w.Data(payload); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != maxPending/len("data: \n\n"+string(payload))+1 || c.flushes != 0 {
		t.Fatalf("first write after %d events, %d flushes", n, c.flushes)
	}
	_ = w.Flush()
	total := 0
	for _, s := range c.writes {
		total += len(s)
	}
	if total != n*(len(payload)+8) {
		t.Fatalf("wrote %d bytes for %d events", total, n)
	}
}

// Queuing and flushing a stream's events allocates nothing in the steady
// state.
func TestWriterAllocs(t *testing.T) {
	c := &writeCounter{h: http.Header{}}
	w := NewWriter(c)
	payload := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" word"}}]}`)
	allocs := testing.AllocsPerRun(1000, func() {
		c.writes = c.writes[:0]
		_ = w.Data(payload)
		_ = w.Data(payload)
		_ = w.Flush()
	})
	if allocs > 1 { // the recorder's string copy of the write
		t.Fatalf("%v allocations per flush", allocs)
	}
}

// End writes what is queued without flushing, so that the server sends
// the last events with the response's end.
func TestWriterEnd(t *testing.T) {
	c := &writeCounter{h: http.Header{}}
	w := NewWriter(c)
	_ = w.Data([]byte(`{"a":1}`))
	_ = w.Done()
	if err := w.End(); err != nil {
		t.Fatal(err)
	}
	if want := "data: {\"a\":1}\n\ndata: [DONE]\n\n"; len(c.writes) != 1 || c.writes[0] != want || c.flushes != 0 {
		t.Fatalf("writes %q, %d flushes; want one write and no flush", c.writes, c.flushes)
	}
	if err := w.End(); err != nil || len(c.writes) != 1 {
		t.Fatalf("an empty End wrote: %q, %v", c.writes, err)
	}
}

// Through a real server, the last event and the end of the chunked body
// reach the client together: a client that reads up to [DONE] finds the
// body complete, and its connection is reused.
func TestWriterEndKeepsClientConnection(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sw := NewWriter(w)
		_ = sw.Data([]byte(`{"a":1}`))
		_ = sw.Flush()
		_ = sw.Done()
		_ = sw.End()
		time.Sleep(5 * time.Millisecond) // what the handler does after its last event
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	for i := 0; i < 3; i++ {
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		r := NewReader(resp.Body, 0)
		for {
			ev, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if string(ev.Data) == "[DONE]" {
				break
			}
		}
		r.Release()
		_ = resp.Body.Close() // at [DONE], as openai-go does
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for three streams, want 1", n)
	}
}
