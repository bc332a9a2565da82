package app_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/config"
)

// Issue 11, finding 4: clients that declare large bodies and send nothing
// must not make the gateway allocate what they declare, nor keep their
// connections for ever.

// declaredAttack is one connection of the attack: a request to path that
// declares a 20 MiB body and sends one byte of it.
type declaredAttack struct {
	path, contentType, first string
}

var declaredAttacks = []declaredAttack{
	{"/v1/chat/completions", "application/json", "{"},
	{"/v1/embeddings", "application/json", "{"},
	{"/v1/completions", "application/json", "{"},
	{"/v1/responses", "application/json", "{"},
	{"/v1/audio/transcriptions", "multipart/form-data; boundary=xyz", "-"},
	{"/v1/images/edits", "multipart/form-data; boundary=xyz", "-"},
}

// openDeclared sends the attack's request head and first byte on a new
// connection.
func openDeclared(t *testing.T, addr, key string, a declaredAttack) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: 20971520\r\n\r\n%s",
		a.path, key, a.contentType, a.first)
	return c
}

// expectTimeout reads the answer on c: a 408 request_timeout in the OpenAI
// error shape, then the connection closed by the server.
func expectTimeout(c net.Conn) error {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	rd := bufio.NewReader(c)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		return fmt.Errorf("no answer: %w", err)
	}
	var e struct {
		Error struct{ Type, Code, Message string } `json:"error"`
	}
	err = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || err != nil || e.Error.Type != "invalid_request_error" ||
		e.Error.Code != "request_timeout" || !resp.Close {
		return fmt.Errorf("answer %d close=%v %+v %v", resp.StatusCode, resp.Close, e.Error, err)
	}
	if _, err := rd.ReadByte(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("connection not closed after the 408: %v", err)
	}
	return nil
}

// heapPeak samples the heap in use until stop is called, and returns the
// largest figure seen.
func heapPeak() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); <-finished; return peak.Load() }
}

// TestBodyDeclaredSizeMemory repeats the attack in waves: 60
// connections (10 per body-reading endpoint) each declare a 20 MiB body
// and send one byte. Before the fix one wave took the heap to 1.2 GB (each
// JSON body's buffer was allocated from Content-Length) and the
// connections stayed open; now each wave ends with 408 and closed
// connections after read_timeout, and the heap stays far below 200 MB.
func TestBodyDeclaredSizeMemory(t *testing.T) {
	const readTimeout = 500 * time.Millisecond
	g := startGateway(t, func(c *config.Config) { c.ReadTimeout = config.Duration(readTimeout) })
	addr := strings.TrimPrefix(g.URL, "http://")
	key := g.keys["default"]

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapInuse
	stop := heapPeak()
	const waves, conns = 3, 60
	for wave := range waves {
		start := time.Now()
		cs := make([]net.Conn, conns)
		for i := range cs {
			cs[i] = openDeclared(t, addr, key, declaredAttacks[i%len(declaredAttacks)])
		}
		var wg sync.WaitGroup
		errs := make([]error, conns)
		for i, c := range cs {
			wg.Go(func() { errs[i] = expectTimeout(c) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("wave %d, %s: %v", wave, declaredAttacks[i%len(declaredAttacks)].path, err)
			}
		}
		if took := time.Since(start); took > readTimeout+5*time.Second {
			t.Errorf("wave %d took %v with read_timeout %v", wave, took, readTimeout)
		}
	}
	peak := stop()
	t.Logf("heap in use: %d MB before, %d MB at the peak of %d waves of %d connections declaring 20 MiB",
		before>>20, peak>>20, waves, conns)
	if peak > 200<<20 {
		t.Errorf("heap peaked at %d MB (limit 200 MB)", peak>>20)
	}
	// The gateway still answers.
	if _, err := chatOnce(g, key); err != nil {
		t.Fatalf("after the attack: %v", err)
	}
}

// chatOnce sends one small chat request and returns its status.
func chatOnce(g *gateway, key string) (int, error) {
	req, _ := http.NewRequest("POST", g.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		return resp.StatusCode, fmt.Errorf("status %d", resp.StatusCode)
	}
	return 200, nil
}

// Headers sent a byte at a time are cut at the header timeout (read_timeout
// when shorter than 10 s).
func TestBodySlowlorisHeaders(t *testing.T) {
	g := startGateway(t, func(c *config.Config) { c.ReadTimeout = config.Duration(300 * time.Millisecond) })
	c, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	go func() {
		for _, b := range []byte("POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nX-Slow: " + strings.Repeat("a", 200)) {
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.Copy(io.Discard, c)                        // until the server closes
	if took := time.Since(start); took > 8*time.Second { // the failure mode is open until the 10 s deadline
		t.Fatalf("a connection sending its headers slowly stayed open %v", took)
	}
}

// The read timeout covers the body only: a stream runs on long after it.
func TestBodyReadTimeoutSparesStreams(t *testing.T) {
	const readTimeout = 200 * time.Millisecond
	g := startGateway(t, func(c *config.Config) { c.ReadTimeout = config.Duration(readTimeout) })
	req, _ := http.NewRequest("POST", g.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"endless","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+g.keys["default"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	start := time.Now()
	for time.Since(start) < 5*readTimeout {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("stream cut after %v: %v", time.Since(start), err)
		}
		if strings.Contains(line, `"error"`) {
			t.Fatalf("stream ended with an error after %v: %s", time.Since(start), line)
		}
	}
}

// Past max_body_memory a request gets 503 server_busy with Retry-After and
// its connection closed; the budget frees up when requests end.
func TestBodyMemoryBudget(t *testing.T) {
	const size = 40 << 10
	g := startGateway(t, func(c *config.Config) {
		c.MaxRequestBytes = size
		c.MaxBodyMemory = 64 << 10
	})
	addr := strings.TrimPrefix(g.URL, "http://")
	key := g.keys["default"]
	body := `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`
	body += strings.Repeat(" ", size-len(body))
	head := fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", key, size)

	// A sends all but the last KiB of its body (the gateway holds 40 KiB
	// for it) and pauses.
	a, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, _ = io.WriteString(a, head+body[:size-1024])

	// B's body does not fit beside A's (retried while the gateway may not
	// have read A's bytes yet).
	var resp *http.Response
	var e struct {
		Error struct{ Type, Code string } `json:"error"`
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		time.Sleep(100 * time.Millisecond)
		b, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(b, head+body)
		_ = b.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err = http.ReadResponse(bufio.NewReader(b), nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		b.Close()
		if resp.StatusCode != 200 || time.Now().After(deadline) {
			break
		}
	}
	if resp.StatusCode != http.StatusServiceUnavailable || e.Error.Type != "server_error" || e.Error.Code != "server_busy" ||
		resp.Header.Get("Retry-After") == "" || !resp.Close {
		t.Fatalf("B: %d %+v Retry-After=%q close=%v", resp.StatusCode, e.Error, resp.Header.Get("Retry-After"), resp.Close)
	}

	// A finishes and is served; then the budget is free again.
	_, _ = io.WriteString(a, body[size-1024:])
	_ = a.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err = http.ReadResponse(bufio.NewReader(a), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("A: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := chatOnce(g, key); err != nil {
		t.Fatalf("after A: %v", err)
	}
}

// Uploads hold what they keep in memory (text fields, the in-memory part
// of files) against the same budget; what goes to temporary files does
// not count.
func TestBodyMemoryBudgetForms(t *testing.T) {
	g := startGateway(t, func(c *config.Config) {
		c.MaxRequestBytes = 40 << 10
		c.MaxBodyMemory = 64 << 10
	})
	field := strings.Repeat("x", 40<<10)
	for _, tc := range []struct {
		path  string
		parts []part
	}{
		{"/v1/audio/transcriptions", []part{textPart("model", "whisper-1"), filePart("file", "a.wav", "audio/wav", speechWAV(3*time.Second))}},
		{"/v1/images/edits", []part{textPart("x_one", field), textPart("x_two", field)}},
	} {
		ct, body := multipartBody(t, tc.parts...)
		req, _ := http.NewRequest("POST", g.URL+tc.path, strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+g.keys["default"])
		req.Header.Set("Content-Type", ct)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct{ Type, Code string } `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || e.Error.Code != "server_busy" || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s: %d %+v", tc.path, resp.StatusCode, e.Error)
		}
	}
}
