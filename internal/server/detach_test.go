package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
)

// A detached context outlives its client, keeps the request's values, and
// still ends when the server's drain period does, so work that reads on
// after a client left can never hold shutdown past its bound.
func TestDetach(t *testing.T) {
	type key struct{}
	detached := make(chan context.Context, 1)
	gone := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := Detach(context.WithValue(r.Context(), key{}, "v"))
		defer cancel(context.Canceled)
		w.WriteHeader(http.StatusOK)
		_ = http.NewResponseController(w).Flush()
		detached <- ctx
		<-r.Context().Done() // the client left
		close(gone)
		<-ctx.Done() // until shutdown ends the drain period
	})
	s := New(mux, 50*time.Millisecond, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	d := <-detached
	_ = conn.Close()
	<-gone
	if d.Err() != nil {
		t.Fatalf("the detached context ended with its client: %v", context.Cause(d))
	}
	if d.Value(key{}) != "v" {
		t.Error("the detached context lost the request's values")
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if !errors.Is(context.Cause(d), apierr.ErrShuttingDown) {
		t.Errorf("after shutdown the detached context's cause is %v, want %v", context.Cause(d), apierr.ErrShuttingDown)
	}
}

// Outside a Server (a handler tested alone) a detached context ends only
// by its cancel.
func TestDetachWithoutServer(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	d, cancel := Detach(parent)
	cancelParent()
	if d.Err() != nil {
		t.Fatal("the detached context ended with its parent")
	}
	cancel(errors.New("done"))
	if context.Cause(d) == nil || context.Cause(d).Error() != "done" {
		t.Errorf("cause %v", context.Cause(d))
	}
}
