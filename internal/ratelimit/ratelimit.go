// Package ratelimit holds the gateway's rate limiters: how many requests
// (or tokens) a key may spend in any 60-second window, and how many of its
// requests may run at once. The interfaces are small so that a shared
// implementation (Redis, for several replicas) can replace the in-memory
// one; ratelimittest is the suite both must pass.
package ratelimit

import (
	"strconv"
	"time"
)

// Window is the span every limit is counted over: a limit of N allows at
// most N units in any Window, and the whole N at once (the burst equals the
// limit).
const Window = time.Minute

// Result is the outcome of one Take.
type Result struct {
	// Allowed reports whether the cost was taken.
	Allowed bool
	// Limit is the limit the cost was counted against.
	Limit int64
	// Remaining is what could still be taken at once after this Take.
	Remaining int64
	// Reset is how long until the whole limit is available again.
	Reset time.Duration
	// RetryAfter is, when Allowed is false, how long until the cost would
	// be allowed; 0 when it was allowed.
	RetryAfter time.Duration
}

// Limiter counts units (requests, tokens) per key against a limit per
// Window. Implementations are safe for concurrent use.
type Limiter interface {
	// Take takes cost units from key's allowance of limit per Window at
	// now, or nothing when they are not all there. A cost above limit is
	// taken as limit (it needs the whole allowance). A negative cost gives
	// units back (a correction once the real cost is known) and is always
	// allowed; so is a cost of 0, which only reads the state. limit must
	// be positive.
	Take(key string, cost, limit int64, now time.Time) Result
}

// Concurrency counts the requests of each key that are running.
// Implementations are safe for concurrent use.
type Concurrency interface {
	// Acquire takes one of key's limit slots; false when all are taken.
	Acquire(key string, limit int64) bool
	// Release gives back a slot Acquire took.
	Release(key string)
}

// Duration formats d as OpenAI's x-ratelimit-reset-* headers do: Go's
// duration form rounded to the millisecond ("1s", "6m0s", "20ms"), "0s"
// for nothing.
func Duration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d < time.Second {
		return strconv.FormatInt(int64((d+time.Millisecond-1)/time.Millisecond), 10) + "ms"
	}
	return d.Round(time.Millisecond).String()
}

// Seconds is d as a Retry-After header's whole seconds: rounded up, at
// least 1.
func Seconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}
