package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
)

// serve runs h behind the middleware on a loopback port until the test ends.
func serve(t *testing.T, h http.Handler, o Options) (*Server, string) {
	t.Helper()
	s := New(h, time.Second, o)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return s, ln.Addr().String()
}

// readAllHeld reads the body, holding each chunk like the API's readers do.
func readAllHeld(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	var b []byte
	buf := make([]byte, 4096)
	for {
		n, err := r.Body.Read(buf)
		if n > 0 {
			if herr := HoldBody(r.Context(), int64(n)); herr != nil {
				apierr.Write(w, herr)
				return nil, false
			}
			b = append(b, buf[:n]...)
		}
		if err == io.EOF {
			return b, true
		}
		if err != nil {
			apierr.Write(w, err)
			return nil, false
		}
	}
}

// rawRequest writes a POST with the declared length and the given start of
// its body on a new connection.
func rawRequest(t *testing.T, addr string, declared int, body string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /x HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", declared, body)
	return c, bufio.NewReader(c)
}

// readAnswer reads one response and its error code.
func readAnswer(t *testing.T, c net.Conn, rd *bufio.Reader) (*http.Response, string) {
	resp, body := readResponse(t, c, rd)
	var e struct {
		Error struct{ Type, Code string } `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	if e.Error.Code != "" && e.Error.Type == "" {
		t.Errorf("error without a type: %s", body)
	}
	return resp, e.Error.Code
}

// readResponse reads one response and its body.
func readResponse(t *testing.T, c net.Conn, rd *bufio.Reader) (*http.Response, []byte) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("answer cut: %v (%q)", err, b)
	}
	return resp, b
}

// closed reports whether the server closed c (EOF, not a timeout).
func closed(c net.Conn, rd *bufio.Reader) bool {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := rd.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// A body that has not arrived within the read timeout ends with 408, the
// error in the OpenAI shape, and the connection closed; one that arrives
// drip by drip is cut at the same absolute deadline.
func TestBodyReadTimeout(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := readAllHeld(w, r); ok {
			_, _ = w.Write(b)
		}
	})
	const timeout = 300 * time.Millisecond
	s, addr := serve(t, h, Options{ReadTimeout: timeout, BodyMemory: 1 << 20})

	start := time.Now()
	c, rd := rawRequest(t, addr, 20<<20, "{")
	resp, code := readAnswer(t, c, rd)
	took := time.Since(start)
	if resp.StatusCode != http.StatusRequestTimeout || code != apierr.CodeRequestTimeout || !resp.Close {
		t.Fatalf("answer %d %q Close=%v", resp.StatusCode, code, resp.Close)
	}
	if took < timeout || took > timeout+5*time.Second { // the failure is a connection left open
		t.Errorf("408 after %v, want about %v", took, timeout)
	}
	if !closed(c, rd) {
		t.Error("the connection stayed open after the 408")
	}

	// Drip: a byte every 50 ms never finishes 100 bytes within 300 ms.
	c, rd = rawRequest(t, addr, 100, "")
	go func() {
		for range 100 {
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	if resp, code := readAnswer(t, c, rd); resp.StatusCode != http.StatusRequestTimeout || code != apierr.CodeRequestTimeout {
		t.Fatalf("drip: %d %q", resp.StatusCode, code)
	}
	if held := s.BodyMemoryHeld(); held != 0 {
		t.Errorf("%d bytes still held after the requests ended", held)
	}
}

// The deadline is lifted once the body is read: an answer streamed for
// longer than the read timeout is not cut, its context is not cancelled,
// and the connection serves the next request.
func TestBodyDeadlineLiftedForStreams(t *testing.T) {
	const timeout = 200 * time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := readAllHeld(w, r); !ok {
			return
		}
		rc := http.NewResponseController(w)
		for i := range 8 {
			fmt.Fprintf(w, "chunk %d\n", i)
			_ = rc.Flush()
			time.Sleep(timeout / 2)
		}
		if err := r.Context().Err(); err != nil {
			fmt.Fprintf(w, "cancelled: %v\n", context.Cause(r.Context()))
		}
		fmt.Fprintln(w, "end")
	})
	_, addr := serve(t, h, Options{ReadTimeout: timeout})
	c, rd := rawRequest(t, addr, 2, "{}")
	for i := range 2 {
		start := time.Now()
		resp, body := readResponse(t, c, rd)
		if resp.StatusCode != 200 || !strings.HasSuffix(string(body), "chunk 7\nend\n") || time.Since(start) < 2*timeout {
			t.Fatalf("request %d: %d after %v: %q", i, resp.StatusCode, time.Since(start), body)
		}
		fmt.Fprintf(c, "POST /x HTTP/1.1\r\nHost: gw\r\nContent-Length: 2\r\n\r\n{}")
	}
}

// Past the memory budget a request gets 503 server_busy with Retry-After
// and a closed connection; what requests held is given back when they end.
func TestBodyMemoryBudget(t *testing.T) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := readAllHeld(w, r)
		if !ok {
			return
		}
		if strings.HasPrefix(string(b), "wait") {
			<-release
		}
		_, _ = w.Write([]byte("ok"))
	})
	s, addr := serve(t, h, Options{ReadTimeout: 5 * time.Second, BodyMemory: 64 << 10})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // runs before the server's cleanup waits for A

	// A holds 40 KB and waits; B needs 40 KB more and is refused.
	a, ard := rawRequest(t, addr, 40<<10, "wait"+strings.Repeat(" ", 40<<10-4))
	deadline := time.Now().Add(5 * time.Second)
	for s.BodyMemoryHeld() < 40<<10 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	b, brd := rawRequest(t, addr, 40<<10, strings.Repeat(" ", 40<<10))
	resp, code := readAnswer(t, b, brd)
	if resp.StatusCode != http.StatusServiceUnavailable || code != apierr.CodeServerBusy ||
		resp.Header.Get("Retry-After") != "2" || !resp.Close {
		t.Fatalf("over the budget: %d %q Retry-After=%q Close=%v", resp.StatusCode, code,
			resp.Header.Get("Retry-After"), resp.Close)
	}
	if !closed(b, brd) {
		t.Error("connection left open after 503")
	}
	unblock()
	if resp, _ := readAnswer(t, a, ard); resp.StatusCode != 200 {
		t.Fatalf("A: %d", resp.StatusCode)
	}
	// A ended: its bytes are free for the next request.
	c, crd := rawRequest(t, addr, 40<<10, strings.Repeat(" ", 40<<10))
	if resp, _ := readAnswer(t, c, crd); resp.StatusCode != 200 {
		t.Fatalf("after A ended: %d", resp.StatusCode)
	}
	for held := s.BodyMemoryHeld(); held != 0; held = s.BodyMemoryHeld() {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still held after every request ended", held)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Outside the middleware (handlers under test) nothing is held or refused.
func TestHoldBodyWithoutServer(t *testing.T) {
	if err := HoldBody(context.Background(), 1<<40); err != nil {
		t.Fatal(err)
	}
}
