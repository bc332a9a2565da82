//go:build linux

package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestServeHoldsIdleConnectionsWithinFileLimit runs the binary with a file
// limit of 256 descriptors and holds 400 idle connections to it: the
// gateway caps its connections from the limit (max_connections 64),
// closing the longest idle for each newcomer, so /healthz and a real
// request are still answered and nothing fails with "too many open files".
// Without the cap the 256 descriptors run out and accept, the store and
// upstream dials fail with EMFILE.
func TestServeHoldsIdleConnectionsWithinFileLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to set the file limit with")
	}
	dir := t.TempDir()
	bin := buildModelgate(t, dir)
	cmd := exec.Command("sh", "-c", `ulimit -n 256 && exec "$0" serve --listen 127.0.0.1:0`, bin)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MODELGATE_CONFIG=")
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var (
		mu   sync.Mutex
		logs strings.Builder
	)
	addr := make(chan string, 1)
	logsDone := make(chan struct{}) // closed when the process closed stderr
	go func() {
		defer close(logsDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logs.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := addrLine.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	keyc := make(chan string, 1)
	go func() {
		b := make([]byte, 0, 4096)
		buf := make([]byte, 512)
		for {
			n, err := stdout.Read(buf)
			b = append(b, buf[:n]...)
			if k := regexp.MustCompile(`sk-mg-[0-9A-Za-z]+`).Find(b); k != nil {
				keyc <- string(k)
				_, _ = io.Copy(io.Discard, stdout)
				return
			}
			if err != nil {
				keyc <- ""
				return
			}
		}
	}()
	var base, secret string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not report its address")
	}
	if secret = <-keyc; secret == "" {
		t.Fatal("the first start printed no key")
	}
	mu.Lock()
	started := logs.String()
	mu.Unlock()
	if !strings.Contains(started, "max_connections=64") {
		t.Errorf("the start line does not give max_connections=64 ((256 - 128) / 2):\n%s", started)
	}

	// 400 connections that send nothing, as a flood of idle sockets would.
	host := strings.TrimPrefix(base, "http://")
	var idle []net.Conn
	for range 400 {
		c, err := net.DialTimeout("tcp", host, 10*time.Second)
		if err != nil {
			t.Fatalf("dial after %d connections: %v", len(idle), err)
		}
		idle = append(idle, c)
	}
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()

	client := &http.Client{Timeout: 30 * time.Second}
	for i := range 3 {
		resp, err := client.Get(base + "/healthz")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("healthz %d with 400 idle connections held: %v %v", i, resp, err)
		}
		resp.Body.Close()
		req, _ := http.NewRequest("POST", base+"/v1/chat/completions",
			strings.NewReader(`{"model":"demo-chat","messages":[{"role":"user","content":"Hello!"}]}`))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err = client.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("chat %d with 400 idle connections held: %v %v", i, resp, err)
		}
		resp.Body.Close()
	}
	// Of the 400, all but the newest few were closed to admit the others.
	closed := 0
	for _, c := range idle {
		_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF {
			closed++
		}
	}
	if closed < 400-64 {
		t.Errorf("%d of 400 idle connections closed, want at least %d", closed, 400-64)
	}

	// Stop it, so that it logs the closes the minute's line has not yet.
	for _, c := range idle {
		c.Close()
	}
	client.CloseIdleConnections()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-logsDone:
	case <-time.After(time.Minute):
		t.Fatal("the server did not stop after SIGTERM")
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(strings.ToLower(logs.String()), "too many open files") {
		t.Errorf("the log has EMFILE:\n%s", logs.String())
	}
	// Every close is counted in a WARN line: the first at once, the rest
	// when the minute is over or, as here, when the server stops.
	logged := 0
	for _, m := range closedCount.FindAllStringSubmatch(logs.String(), -1) {
		n, _ := strconv.Atoi(m[1])
		logged += n
	}
	if logged < closed {
		t.Errorf("the WARN lines count %d connections closed at the cap, the client saw %d closed:\n%s",
			logged, closed, logs.String())
	}
}

// closedCount finds the count in a WARN line about connections closed at
// the cap.
var closedCount = regexp.MustCompile(`closed the longest idle to admit new ones" closed=([0-9]+)`)
