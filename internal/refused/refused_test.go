package refused

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// syncBuffer is a bytes.Buffer safe for the logger and the test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.TrimSpace(b.b.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func newCounter(t *testing.T) (*Counter, *clock, *syncBuffer) {
	t.Helper()
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	buf := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	return New(Options{Logger: log, Now: clk.Now, Every: time.Minute}), clk, buf
}

func TestCounts(t *testing.T) {
	c, _, _ := newCounter(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 1000 {
				reason := []string{"invalid_api_key", "not_found"}[(i+j)%2]
				c.Add(reason, fmt.Sprintf("10.0.0.%d:%d", i, 40000+j))
			}
		}()
	}
	wg.Wait()
	c.Add("", "")
	got := c.Counts()
	want := map[string]uint64{"invalid_api_key": 4000, "not_found": 4000, OtherReason: 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Counts = %v, want %v", got, want)
	}
	if c.Total() != 8001 {
		t.Errorf("Total = %d, want 8001", c.Total())
	}
	got["not_found"] = 0 // a copy: the counter is unchanged
	if c.Counts()["not_found"] != 4000 {
		t.Error("Counts returned the counter's own map")
	}
}

// The reasons kept are bounded; the rest are counted as "other".
func TestReasonsBounded(t *testing.T) {
	c, _, _ := newCounter(t)
	for i := range 1000 {
		c.Add(fmt.Sprintf("r%d", i), "")
	}
	got := c.Counts()
	if len(got) > maxReasons+1 || got[OtherReason] != 1000-maxReasons || c.Total() != 1000 {
		t.Errorf("%d reasons, other=%d, total=%d", len(got), got[OtherReason], c.Total())
	}
}

// At most one line per interval: the first refusal is logged at once, the
// ones after it are summarised once the interval has passed, by reason,
// with one sample address and never anything else the client sent.
func TestLogRateLimited(t *testing.T) {
	c, clk, buf := newCounter(t)
	c.Add("invalid_api_key", "192.0.2.7:51234")
	lines := buf.lines()
	if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], "count=1 ") ||
		!strings.Contains(lines[0], "reasons.invalid_api_key=1") || !strings.Contains(lines[0], "sample_remote=192.0.2.7") ||
		strings.Contains(lines[0], "51234") {
		t.Fatalf("first refusal logged as %q", lines)
	}
	for i := range 3000 {
		clk.Add(10 * time.Millisecond) // 30 s in all: within the interval
		c.Add([]string{"invalid_api_key", "not_found", "method_not_allowed"}[i%3], "[2001:db8::1]:443")
	}
	if n := len(buf.lines()); n != 1 {
		t.Fatalf("%d lines within one interval, want 1", n)
	}
	clk.Add(30 * time.Second)
	c.Add("not_found", "198.51.100.1:1")
	lines = buf.lines()
	if len(lines) != 2 {
		t.Fatalf("%d lines after the interval, want 2", len(lines))
	}
	for _, want := range []string{"count=3001 ", "reasons.invalid_api_key=1000 ", "reasons.method_not_allowed=1000 ",
		"reasons.not_found=1001", "sample_remote=2001:db8::1"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("summary %q lacks %q", lines[1], want)
		}
	}
	// Quiet: no line. Then one refusal and Flush (shutdown) writes it.
	c.Flush()
	if n := len(buf.lines()); n != 2 {
		t.Fatalf("Flush with nothing counted wrote a line")
	}
	c.Add("not_found", "")
	c.Flush()
	if lines = buf.lines(); len(lines) != 3 || !strings.Contains(lines[2], "count=1 ") || strings.Contains(lines[2], "sample_remote") {
		t.Fatalf("lines %q", lines)
	}
}

// Run summarises what arrived within the interval once it has passed,
// without waiting for another refusal, and flushes when ctx ends.
func TestRun(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	buf := &syncBuffer{}
	c := New(Options{Logger: slog.New(slog.NewTextHandler(buf, nil)), Now: clk.Now, Every: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	c.Add("not_found", "") // logged at once
	c.Add("not_found", "") // waits for the interval
	clk.Add(time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for len(buf.lines()) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if lines := buf.lines(); len(lines) != 2 || !strings.Contains(lines[1], "count=1 ") {
		t.Fatalf("lines %q", lines)
	}
	c.Add("invalid_api_key", "")
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Run = %v", err)
	}
	if lines := buf.lines(); len(lines) != 3 || !strings.Contains(lines[2], "reasons.invalid_api_key=1") {
		t.Fatalf("after Run ended: %q", lines)
	}
}
