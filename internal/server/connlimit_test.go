package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestDefaultMaxConns(t *testing.T) {
	for _, tt := range []struct {
		nofile uint64
		want   int
	}{
		{0, minConns}, {100, minConns}, {160, minConns}, {256, 64}, {1024, 448}, {65536, 32704}, {1048576, 524224},
		{1 << 62, 1 << 30},
	} {
		if got := DefaultMaxConns(tt.nofile); got != tt.want {
			t.Errorf("DefaultMaxConns(%d) = %d, want %d", tt.nofile, got, tt.want)
		}
	}
}

// limitedServer serves a handler with /healthz and /block (which waits
// for release) under a cap of max connections.
type limitedServer struct {
	t       *testing.T
	s       *Server
	addr    string
	release chan struct{}
	logs    *syncBuffer
	stop    func()
}

func startLimited(t *testing.T, max int) *limitedServer {
	t.Helper()
	ls := &limitedServer{t: t, release: make(chan struct{}), logs: &syncBuffer{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("/block", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-ls.release:
		case <-r.Context().Done():
		}
		_, _ = io.WriteString(w, "done\n")
	})
	ls.s = New(mux, 2*time.Second, Options{MaxConns: max, Logger: slog.New(slog.NewTextHandler(ls.logs, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ls.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ls.s.Serve(ctx, ln) }()
	ls.stop = func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("Serve did not return after shutdown")
		}
	}
	t.Cleanup(func() {
		if ls.stop != nil {
			ls.stop()
		}
	})
	return ls
}

// dial opens a raw connection and waits until the server tracks it.
func (ls *limitedServer) dial() net.Conn {
	ls.t.Helper()
	before := ls.tracked()
	c, err := net.Dial("tcp", ls.addr)
	if err != nil {
		ls.t.Fatal(err)
	}
	ls.t.Cleanup(func() { c.Close() })
	ls.eventually("the connection tracked", func() bool { return ls.tracked() > before || ls.s.ClosedIdle() > 0 })
	return c
}

// tracked is how many connections the limit holds.
func (ls *limitedServer) tracked() int {
	ls.s.limit.mu.Lock()
	defer ls.s.limit.mu.Unlock()
	return ls.s.limit.open
}

func (ls *limitedServer) eventually(what string, ok func() bool) {
	ls.t.Helper()
	deadline := time.Now().Add(30 * time.Second) // only a guard against hangs
	for !ok() {
		if time.Now().After(deadline) {
			ls.t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// get sends GET path on c (keep-alive) and returns the body.
func get(t *testing.T, c net.Conn, br *bufio.Reader, path string) string {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// closedByServer reports whether the server closed c: a read returns EOF
// (or a reset) rather than waiting. An open connection waits out the
// deadline; that is the only timing here, and it decides nothing but
// how long an open connection is watched.
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout()) && !errors.Is(err, os.ErrDeadlineExceeded)
}

func TestConnLimitClosesLongestIdle(t *testing.T) {
	ls := startLimited(t, 4)
	silent := ls.dial() // accepted, never sends a request: idle longest
	keepAlive := ls.dial()
	br := bufio.NewReader(keepAlive)
	if got := get(t, keepAlive, br, "/healthz"); got != "ok\n" {
		t.Fatalf("healthz: %q", got)
	}
	ls.eventually("the keep-alive connection idle", func() bool {
		ls.s.limit.mu.Lock()
		defer ls.s.limit.mu.Unlock()
		return ls.s.limit.idle.Len() == 2
	})
	later1, later2 := ls.dial(), ls.dial()
	if n := ls.tracked(); n != 4 {
		t.Fatalf("%d connections tracked, want 4", n)
	}

	// At the cap: a new connection is answered, and the one idle longest
	// (the silent one) is closed for it.
	fresh := ls.dial()
	if got := get(t, fresh, bufio.NewReader(fresh), "/healthz"); got != "ok\n" {
		t.Fatalf("healthz at the cap: %q", got)
	}
	if !closedByServer(silent) {
		t.Error("the connection idle longest is still open")
	}
	for name, c := range map[string]net.Conn{"keep-alive": keepAlive, "later": later1, "later 2": later2} {
		if closedByServer(c) {
			t.Errorf("the %s connection was closed; only the one idle longest should be", name)
		}
	}
	// Next in line: the keep-alive connection, idle since its answer.
	another := ls.dial()
	if got := get(t, another, bufio.NewReader(another), "/healthz"); got != "ok\n" {
		t.Fatalf("healthz: %q", got)
	}
	if !closedByServer(keepAlive) {
		t.Error("the keep-alive connection, idle longest now, is still open")
	}
	if n := ls.s.ClosedIdle(); n != 2 {
		t.Errorf("ClosedIdle = %d, want 2", n)
	}
	if n := ls.tracked(); n != 4 {
		t.Errorf("%d connections tracked, want the cap, 4", n)
	}
	ls.eventually("one WARN line", func() bool { return strings.Contains(ls.logs.String(), "max_connections") })
	if n := strings.Count(ls.logs.String(), "closed the longest idle"); n != 1 {
		t.Errorf("%d log lines about closed connections, want 1 a minute:\n%s", n, ls.logs.String())
	}
}

func TestConnLimitWaitsWhileAllBusy(t *testing.T) {
	ls := startLimited(t, 2)
	for range 2 {
		c := ls.dial()
		if _, err := io.WriteString(c, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	ls.eventually("both connections busy", func() bool {
		ls.s.limit.mu.Lock()
		defer ls.s.limit.mu.Unlock()
		return ls.s.limit.idle.Len() == 0 && ls.s.limit.open == 2
	})
	answered := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ls.addr + "/healthz")
		if err != nil {
			answered <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answered <- string(b)
	}()
	// No busy connection is closed, and none is accepted past the cap.
	select {
	case got := <-answered:
		t.Fatalf("answered %q while every connection was busy", got)
	case <-time.After(200 * time.Millisecond):
	}
	if n := ls.tracked(); n != 2 || ls.s.ClosedIdle() != 0 {
		t.Fatalf("%d tracked, %d closed; want 2 and none", n, ls.s.ClosedIdle())
	}
	close(ls.release) // the busy ones finish and go idle: room
	select {
	case got := <-answered:
		if got != "ok\n" {
			t.Fatalf("healthz: %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("healthz not answered once the busy connections ended")
	}
}

func TestConnLimitShutdownWithHeldConnections(t *testing.T) {
	ls := startLimited(t, 3)
	for range 3 {
		ls.dial()
	}
	held := make(chan struct{})
	go func() { // a connection waiting in the backlog for room
		c, err := net.Dial("tcp", ls.addr)
		if err == nil {
			defer c.Close()
		}
		close(held)
	}()
	<-held
	stop := ls.stop
	ls.stop = nil
	stop() // fails the test if Serve does not return
}

// syncBuffer is a bytes.Buffer safe for the logger's and the test's
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
