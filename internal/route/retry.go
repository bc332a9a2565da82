package route

import (
	"math/rand/v2"
	"time"
)

// Retry bounds one request's tries across its candidates.
type Retry struct {
	MaxAttempts int           // tries in all (default 3)
	Backoff     time.Duration // before the second try; doubles each time (default 50ms)
	MaxBackoff  time.Duration // cap on one wait (default 2s)
	Deadline    time.Duration // no try starts this long after the request did (default 60s)
}

// Retry defaults.
const (
	defaultAttempts   = 3
	defaultBackoff    = 50 * time.Millisecond
	defaultMaxBackoff = 2 * time.Second
	defaultDeadline   = 60 * time.Second
)

// WithDefaults fills in the zero fields.
func (r Retry) WithDefaults() Retry {
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = defaultAttempts
	}
	if r.Backoff <= 0 {
		r.Backoff = defaultBackoff
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = defaultMaxBackoff
	}
	if r.Deadline <= 0 {
		r.Deadline = defaultDeadline
	}
	return r
}

// Delay is the wait before try n (2 for the second): Backoff doubled n-2
// times, capped at MaxBackoff, with "equal jitter" (half of it fixed, half
// random) so that requests that failed together do not retry together.
func (r Retry) Delay(n int) time.Duration {
	if n < 2 {
		return 0
	}
	d := r.Backoff
	for i := 2; i < n && d < r.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, r.MaxBackoff)
	half := d / 2
	return half + rand.N(half+1)
}
