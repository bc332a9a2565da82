// Package refused counts the requests the gateway answers without knowing
// who sent them: no key, a bad or revoked key, an unknown path, a wrong
// method, a bad image-link signature. Such requests leave no usage record
// (nobody could be billed for it or shown it, and anyone can send them),
// so they are counted here by reason and summarised in the log at most
// once per interval, instead of one database row or log line each.
//
// A Counter is owned by the app (no global state). Counts is what the
// Prometheus exporter of the telemetry work will read: a cumulative
// counter per reason, like a CounterVec with one "reason" label.
package refused

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"
)

// DefaultEvery is the shortest time between two summary log lines.
const DefaultEvery = time.Minute

// maxReasons bounds the distinct reasons kept, so a bug that passes
// request data as a reason cannot grow the map without limit; later
// reasons are counted as OtherReason.
const maxReasons = 64

// OtherReason counts requests with no reason, or past maxReasons.
const OtherReason = "other"

// Options configure a Counter; zero fields take the defaults.
type Options struct {
	Logger *slog.Logger     // where summaries go (default: discarded)
	Now    func() time.Time // the clock (default time.Now)
	Every  time.Duration    // at most one summary line per Every (default DefaultEvery)
}

// Counter counts refused requests by reason. Its methods are safe for
// concurrent use; the zero value is not usable, use New.
type Counter struct {
	log   *slog.Logger
	now   func() time.Time
	every time.Duration

	mu      sync.Mutex
	total   map[string]uint64 // since New, by reason
	pending map[string]uint64 // since the last summary line
	waiting uint64            // sum of pending
	sample  string            // a client address seen since the last line
	last    time.Time         // when the last line was written (zero: never)
}

// New returns an empty Counter.
func New(o Options) *Counter {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Every <= 0 {
		o.Every = DefaultEvery
	}
	return &Counter{log: o.Logger, now: o.Now, every: o.Every,
		total: map[string]uint64{}, pending: map[string]uint64{}}
}

// Add counts one refused request. reason is the error code the client got
// (invalid_api_key, not_found, method_not_allowed, ...); remote is the
// client's address as http.Request.RemoteAddr has it (the port is dropped).
// Nothing a client sends besides its address reaches the log: never its
// key, path or body. The first request after a quiet interval is logged at
// once; the ones after it are summarised when the interval has passed.
func (c *Counter) Add(reason, remote string) {
	c.mu.Lock()
	if reason == "" {
		reason = OtherReason
	}
	if _, ok := c.total[reason]; !ok && len(c.total) >= maxReasons {
		reason = OtherReason
	}
	c.total[reason]++
	c.pending[reason]++
	c.waiting++
	if c.sample == "" {
		c.sample = host(remote)
	}
	line := c.takeLocked(false)
	c.mu.Unlock()
	c.write(line)
}

// Counts returns how many requests were refused since New, by reason (a
// copy the caller may keep).
func (c *Counter) Counts() map[string]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]uint64, len(c.total))
	for r, n := range c.total {
		out[r] = n
	}
	return out
}

// Total is the number of requests refused since New.
func (c *Counter) Total() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n uint64
	for _, v := range c.total {
		n += v
	}
	return n
}

// Run writes the summary of what was counted since the last line once the
// interval has passed, checking every Every, until ctx ends; then it
// writes what is left and returns ctx's error.
func (c *Counter) Run(ctx context.Context) error {
	t := time.NewTicker(c.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			c.Flush()
			return ctx.Err()
		case <-t.C:
			c.mu.Lock()
			line := c.takeLocked(false)
			c.mu.Unlock()
			c.write(line)
		}
	}
}

// Flush writes the summary of what was counted since the last line now,
// whatever the interval (at shutdown).
func (c *Counter) Flush() {
	c.mu.Lock()
	line := c.takeLocked(true)
	c.mu.Unlock()
	c.write(line)
}

// summary is one log line's content, taken under c.mu, written outside it.
type summary struct {
	count   uint64
	reasons map[string]uint64
	sample  string
}

// takeLocked returns the pending summary and starts a new one when there
// is something to say and the interval has passed (or force); c.mu is held.
func (c *Counter) takeLocked(force bool) *summary {
	if c.waiting == 0 {
		return nil
	}
	now := c.now()
	if !force && !c.last.IsZero() && now.Sub(c.last) < c.every {
		return nil
	}
	s := &summary{count: c.waiting, reasons: c.pending, sample: c.sample}
	c.pending, c.waiting, c.sample, c.last = map[string]uint64{}, 0, "", now
	return s
}

func (c *Counter) write(s *summary) {
	if s == nil {
		return
	}
	reasons := make([]string, 0, len(s.reasons))
	for r := range s.reasons {
		reasons = append(reasons, r)
	}
	slices.Sort(reasons)
	by := make([]any, 0, len(reasons))
	for _, r := range reasons {
		by = append(by, slog.Uint64(r, s.reasons[r]))
	}
	attrs := []any{slog.Uint64("count", s.count), slog.Group("reasons", by...)}
	if s.sample != "" {
		attrs = append(attrs, slog.String("sample_remote", s.sample))
	}
	c.log.Warn("requests refused without an authenticated key (counted, no usage records)", attrs...)
}

// host drops the port of a RemoteAddr and bounds what reaches the log.
func host(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		remote = h
	}
	if len(remote) > 64 {
		remote = remote[:64]
	}
	return remote
}
