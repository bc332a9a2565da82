package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
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
	timers  chan func() // the callbacks of the timers the limit set
	ln      *countingListener
	stop    func()
}

// countingListener counts the connections the kernel handed over.
type countingListener struct {
	net.Listener
	mu       sync.Mutex
	accepted int
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.accepted++
		l.mu.Unlock()
	}
	return c, err
}

func (l *countingListener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepted
}

func startLimited(t *testing.T, max int) *limitedServer {
	t.Helper()
	ls := &limitedServer{t: t, release: make(chan struct{}), logs: &syncBuffer{}, timers: make(chan func(), 16)}
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
	// The WARN line's timer is the test's to fire.
	ls.s.limit.after = func(_ time.Duration, f func()) func() bool { ls.timers <- f; return func() bool { return true } }
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: inner}
	ls.ln = ln
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
	before, closed := ls.tracked(), ls.s.ClosedIdle()
	c, err := net.Dial("tcp", ls.addr)
	if err != nil {
		ls.t.Fatal(err)
	}
	ls.t.Cleanup(func() { c.Close() })
	ls.eventually("the connection accepted", func() bool { return ls.tracked() > before || ls.s.ClosedIdle() > closed })
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

// idleLen is how many connections the limit holds as idle.
func (ls *limitedServer) idleLen() int {
	ls.s.limit.mu.Lock()
	defer ls.s.limit.mu.Unlock()
	return ls.s.limit.idle.Len()
}

// closedLogged is the "closed" counts of the WARN lines so far.
func (ls *limitedServer) closedLogged() []uint64 {
	var out []uint64
	for _, line := range strings.Split(ls.logs.String(), "\n") {
		if !strings.Contains(line, "closed the longest idle") {
			continue
		}
		var n uint64
		if _, err := fmt.Sscanf(line[strings.Index(line, "closed=")+len("closed="):], "%d", &n); err != nil {
			ls.t.Fatalf("no count in %q", line)
		}
		out = append(out, n)
	}
	return out
}

// At the cap of 8, eight connections that never sent a request, then eight
// keep-alive ones that did: each newcomer is answered, and the one closed
// for it is always the one idle longest, never a more recent one.
func TestConnLimitClosesLongestIdle(t *testing.T) {
	const max = 8
	ls := startLimited(t, max)
	var silent, keepAlive []net.Conn
	for range max {
		silent = append(silent, ls.dial())
	}
	for i := range max {
		c := ls.dial()
		if got := get(t, c, bufio.NewReader(c), "/healthz"); got != "ok\n" {
			t.Fatalf("healthz on keep-alive connection %d at the cap: %q", i, got)
		}
		keepAlive = append(keepAlive, c)
		if !closedByServer(silent[i]) {
			t.Fatalf("silent connection %d, idle longest, is still open", i)
		}
		if i+1 < max && closedByServer(silent[i+1]) {
			t.Fatalf("silent connection %d was closed for keep-alive connection %d; only %d should be", i+1, i, i)
		}
	}
	ls.eventually("the keep-alive connections idle", func() bool { return ls.idleLen() == max })

	// Next in line: the first keep-alive connection, idle since its answer.
	fresh := ls.dial()
	if got := get(t, fresh, bufio.NewReader(fresh), "/healthz"); got != "ok\n" {
		t.Fatalf("healthz: %q", got)
	}
	if !closedByServer(keepAlive[0]) {
		t.Error("the keep-alive connection idle longest is still open")
	}
	for i, c := range keepAlive[1:] {
		if closedByServer(c) {
			t.Errorf("keep-alive connection %d was closed; only the one idle longest should be", i+1)
		}
	}
	if n := ls.s.ClosedIdle(); n != max+1 {
		t.Errorf("ClosedIdle = %d, want %d", n, max+1)
	}
	if n := ls.tracked(); n != max {
		t.Errorf("%d connections tracked, want the cap, %d", n, max)
	}

	// One WARN line at the first close; the rest wait for the minute's
	// timer, and that line counts them all.
	if got := ls.closedLogged(); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("closed counts logged before the timer: %v, want [1]", got)
	}
	(<-ls.timers)()
	if got := ls.closedLogged(); !slices.Equal(got, []uint64{1, max}) {
		t.Errorf("closed counts logged: %v, want [1 %d]", got, max)
	}
	if len(ls.timers) != 0 {
		t.Errorf("%d timers set for one pending line", 1+len(ls.timers))
	}
}

// The closes not logged yet when the server stops are logged then.
func TestConnLimitLogsTheRestAtShutdown(t *testing.T) {
	ls := startLimited(t, 1)
	for range 4 {
		ls.dial()
	}
	if n := ls.s.ClosedIdle(); n != 3 {
		t.Fatalf("ClosedIdle = %d, want 3", n)
	}
	stop := ls.stop
	ls.stop = nil
	stop()
	if got := ls.closedLogged(); !slices.Equal(got, []uint64{1, 2}) {
		t.Errorf("closed counts logged: %v, want [1 2]", got)
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
	ls.eventually("both connections busy", func() bool { return ls.idleLen() == 0 && ls.tracked() == 2 })
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
	// No busy connection is closed, and the newcomer is not served; it
	// is the one connection accepted past the cap.
	select {
	case got := <-answered:
		t.Fatalf("answered %q while every connection was busy", got)
	case <-time.After(200 * time.Millisecond):
	}
	if n := ls.tracked(); n != 2 || ls.s.ClosedIdle() != 0 || ls.ln.count() > 3 {
		t.Fatalf("%d tracked, %d closed, %d accepted; want 2, none and at most 3", n, ls.s.ClosedIdle(), ls.ln.count())
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

// Shutdown returns with connections held at the cap, idle or busy, and
// with Accept waiting for room.
func TestConnLimitShutdownWithHeldConnections(t *testing.T) {
	for _, tt := range []struct {
		name string
		busy bool
	}{{"idle", false}, {"busy, one waiting", true}} {
		t.Run(tt.name, func(t *testing.T) {
			ls := startLimited(t, 2)
			for range 2 {
				c := ls.dial()
				if tt.busy {
					if _, err := io.WriteString(c, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tt.busy {
				ls.eventually("both connections busy", func() bool { return ls.idleLen() == 0 })
			}
			c, err := net.Dial("tcp", ls.addr) // closes an idle one, or waits
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tt.busy {
				ls.eventually("Accept waiting for room", func() bool {
					ls.s.limit.mu.Lock()
					defer ls.s.limit.mu.Unlock()
					return ls.s.limit.waitc != nil && ls.s.limit.idle.Len() == 0
				})
			} else {
				ls.eventually("an idle connection closed", func() bool { return ls.s.ClosedIdle() == 1 })
			}
			stop := ls.stop
			ls.stop = nil
			stop() // fails the test if Serve does not return
		})
	}
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
