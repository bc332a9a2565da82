package sse

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
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
