// Package redislimit is the shared implementation of ratelimit's Limiter
// and Concurrency: the counters live in Redis, so a limit holds across
// every gateway replica that uses the same Redis database together.
//
// Each check is one Lua script (EVALSHA, falling back to EVAL when the
// server does not have it cached), so it is atomic without locks.
//
// Clocks. Limiter.Take counts time with the now its caller passes (the
// replica's clock), exactly as the in-memory limiter does, so the
// conformance suite's hand-moved clock works. Replicas' clocks must agree
// within a second (NTP does much better): a replica whose clock runs ahead
// sees units come back early by its skew, never more; buckets that arrive
// out of order are folded into the newest one, which holds them longer,
// never shorter. Concurrency leases use only Redis's own key expiry.
//
// Failures. ratelimit's interfaces have no error return. When Redis cannot
// be reached the limiters fail open: the request is allowed, a WARN is
// logged at most once per WarnEvery with the number of failures since the
// last one, and Failures counts every one for the caller (metrics, the
// readiness probe).
//
// Keys: mg:rl:<name>:{<key>} (a list of the older 100 ms buckets,
// "end:units") and mg:rl:<name>:{<key>}:head (the window's total, oldest
// end and newest bucket; see windowLua) for the limiter; mg:conc:{<key>} (a hash of
// instance → slots held) and mg:conc:hb:<instance> (the heartbeat) for
// the slots. Every key expires: a window's keys when their last unit
// comes back, a slot hash a few leases after its last use.
package redislimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultPrefix starts every key this package writes.
const DefaultPrefix = "mg:"

// WarnEvery is the least time between two WARNs about Redis failures.
const WarnEvery = 10 * time.Second

// DefaultTimeout bounds one Redis call on the request path.
const DefaultTimeout = 500 * time.Millisecond

// Options tune a Limiter or Slots; the zero value is usable.
type Options struct {
	// Prefix starts every key ("" is DefaultPrefix); tests use a random
	// one so that they can share a database.
	Prefix string
	// Log hears of Redis failures (nil: discarded).
	Log *slog.Logger
	// Timeout bounds one call (0: DefaultTimeout).
	Timeout time.Duration
	// Now is the clock of the WARNs' rate limit (nil: time.Now).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Open connects to the Redis at url (redis://[user:password@]host:port/db
// or rediss:// for TLS) and pings it, so that a gateway configured with an
// unreachable Redis fails at start rather than failing open on every
// request. Errors never repeat the URL, which may hold a password.
func Open(ctx context.Context, url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis: the URL does not parse (want redis://host:port/db)")
	}
	if !strings.Contains(url, "max_retries=") {
		// A limiter fails open rather than waiting: one retry (a pooled
		// connection the server closed), not go-redis's three.
		opt.MaxRetries = 1
	}
	opt.DialerRetries = 1 // likewise: a dial that fails is not retried five times
	c := redis.NewClient(opt)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redis at %s (db %d) does not answer: %w", opt.Addr, opt.DB, err)
	}
	return c, nil
}

// failures counts Redis failures and logs them, at most one WARN per
// WarnEvery.
type failures struct {
	log  *slog.Logger
	now  func() time.Time
	what string // which limiter, for the log

	n      atomic.Int64
	mu     sync.Mutex
	last   time.Time
	quiet  int64 // failures since the last WARN
	warned bool
}

func newFailures(o Options, what string) *failures {
	return &failures{log: o.Log, now: o.Now, what: what}
}

// fail notes one failure of op.
func (f *failures) fail(op string, err error) {
	f.n.Add(1)
	f.mu.Lock()
	f.quiet++
	now := f.now()
	if f.warned && now.Sub(f.last) < WarnEvery {
		f.mu.Unlock()
		return
	}
	n := f.quiet
	f.quiet, f.last, f.warned = 0, now, true
	f.mu.Unlock()
	f.log.Warn("rate limits: Redis failed, allowing the request (fail-open)",
		"limiter", f.what, "op", op, "failures", n, "err", err)
}

// count is the number of failures so far.
func (f *failures) count() int64 { return f.n.Load() }

// errShape is a script answer of an unexpected shape (another program
// writing the same keys).
var errShape = errors.New("redislimit: the script's answer has an unexpected shape")
