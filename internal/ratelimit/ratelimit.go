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
	var buf [32]byte
	return string(AppendDuration(buf[:0], d))
}

// AppendDuration appends Duration(d) to b, so that a caller can build
// several header values into one string.
func AppendDuration(b []byte, d time.Duration) []byte {
	if d <= 0 {
		return append(b, "0s"...)
	}
	if d < time.Second {
		b = strconv.AppendInt(b, int64((d+time.Millisecond-1)/time.Millisecond), 10)
		return append(b, "ms"...)
	}
	// time.Duration.String's form (1h2m3.5s, 6m0s, 1.5s) at millisecond
	// precision, without its allocation.
	d = d.Round(time.Millisecond)
	big := false
	if h := d / time.Hour; h > 0 {
		b = append(strconv.AppendInt(b, int64(h), 10), 'h')
		d -= h * time.Hour
		big = true
	}
	if m := d / time.Minute; m > 0 || big {
		b = append(strconv.AppendInt(b, int64(m), 10), 'm')
		d -= m * time.Minute
	}
	b = strconv.AppendInt(b, int64(d/time.Second), 10)
	if ms := int64(d%time.Second) / int64(time.Millisecond); ms > 0 {
		frac := [3]byte{byte('0' + ms/100), byte('0' + ms/10%10), byte('0' + ms%10)}
		n := 3
		for frac[n-1] == '0' {
			n--
		}
		b = append(append(b, '.'), frac[:n]...)
	}
	return append(b, 's')
}

// Seconds is d as a Retry-After header's whole seconds: rounded up, at
// least 1.
func Seconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}
