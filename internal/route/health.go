package route

import (
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
)

// Health is how a router judges its providers: the circuit breaker
// (Failures consecutive failures open it for Cooldown, then one request
// probes it) and the longest cooldown an upstream Retry-After may ask for.
type Health struct {
	Failures    int           // consecutive failures that open the circuit (default 5)
	Cooldown    time.Duration // how long an open circuit skips its provider (default 30s)
	MaxCooldown time.Duration // cap on a cooldown an upstream's Retry-After asks for (default 5m)
}

// Defaults for a zero Health.
const (
	defaultFailures    = 5
	defaultCooldown    = 30 * time.Second
	defaultMaxCooldown = 5 * time.Minute
)

func (h Health) withDefaults() Health {
	if h.Failures <= 0 {
		h.Failures = defaultFailures
	}
	if h.Cooldown <= 0 {
		h.Cooldown = defaultCooldown
	}
	if h.MaxCooldown <= 0 {
		h.MaxCooldown = defaultMaxCooldown
	}
	return h
}

// Circuit is a provider's breaker state.
type Circuit int

// The breaker's states.
const (
	Closed   Circuit = iota // traffic flows
	Open                    // skipped until its cooldown ends
	HalfOpen                // cooled down: the next request probes it
)

func (c Circuit) String() string {
	switch c {
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return "closed"
}

// state is one provider's health. Its hot path (a request that succeeds on
// a healthy provider) is two atomic loads and no lock: transitions are made
// with compare-and-swap, and a race between two requests' reports is
// harmless (both see a failure, or both a success).
type state struct {
	name    string
	keys    int           // how many API keys it has (at most 64)
	fails   atomic.Int32  // consecutive failures
	until   atomic.Int64  // Unix ns: skipped before this (open circuit or cooldown)
	open    atomic.Bool   // the circuit is open (half-open once until has passed)
	probing atomic.Bool   // half-open, and a request is probing it
	dead    atomic.Uint64 // keys the vendor refused (bit i: key i), out of rotation
	next    atomic.Uint32 // round robin over the live keys
	ewma    atomic.Int64  // recent latency of answered calls, ns (0: none yet)
	trips   atomic.Int64  // times the circuit opened
	removed atomic.Int64  // times a key left rotation
}

// available reports whether the provider may be tried at now (ns), and
// when it may be if not. An open circuit whose cooldown has passed is
// available to one probe at a time (see claim).
func (s *state) available(now int64) (bool, int64) {
	if u := s.until.Load(); now < u {
		return false, u
	}
	if s.open.Load() && s.probing.Load() {
		return false, now + int64(time.Second) // the probe will tell soon
	}
	return true, 0
}

// claim takes the probe of a half-open provider: false when another
// request took it first. A closed provider needs none.
func (s *state) claim() (ok, probe bool) {
	if !s.open.Load() {
		return true, false
	}
	if s.probing.CompareAndSwap(false, true) {
		return true, true
	}
	return false, false
}

// key picks a live key round robin (0 for a provider with one key).
func (s *state) key() int {
	if s.keys <= 1 {
		return 0
	}
	dead := s.dead.Load()
	n := int(s.next.Add(1)) - 1 // the first request takes key 0
	for i := range s.keys {
		k := (n + i) % s.keys
		if dead&(1<<k) == 0 {
			return k
		}
	}
	return n % s.keys
}

// circuit is the breaker's state at now (ns).
func (s *state) circuit(now int64) Circuit {
	switch {
	case !s.open.Load():
		return Closed
	case now < s.until.Load():
		return Open
	}
	return HalfOpen
}

// succeeded closes the circuit and clears the failure count.
func (s *state) succeeded(latency time.Duration) {
	if s.fails.Load() != 0 {
		s.fails.Store(0)
	}
	if s.open.Load() {
		s.open.Store(false)
		s.probing.Store(false)
	}
	if latency > 0 {
		// EWMA with weight 1/8: recent enough to follow a slow spell,
		// steady enough not to chase one slow answer.
		old := s.ewma.Load()
		if old == 0 {
			s.ewma.Store(int64(latency))
		} else {
			s.ewma.Store(old + (int64(latency)-old)/8)
		}
	}
}

// failed counts a failure; the failures-th in a row, or a failed probe,
// opens the circuit for cooldown.
// It reports whether this failure opened it.
func (s *state) failed(h Health, now int64, probe bool) (opened bool) {
	n := s.fails.Add(1)
	if probe || (int(n) >= h.Failures && !s.open.Load()) {
		cool(&s.until, now+int64(h.Cooldown))
		if !s.open.Swap(true) || probe {
			s.trips.Add(1)
			opened = true
		}
		s.probing.Store(false)
	}
	return opened
}

// cool moves until (Unix ns) to at least t.
func cool(until *atomic.Int64, t int64) {
	for {
		u := until.Load()
		if t <= u || until.CompareAndSwap(u, t) {
			return
		}
	}
}

// refuse takes key k out of rotation; it reports false when it was the
// last live one, and then puts every key back (the vendor refused them
// all: a provider failure, for the circuit to judge).
func (s *state) refuse(k int) bool {
	if s.keys <= 1 {
		return false
	}
	for {
		d := s.dead.Load()
		nd := d | 1<<k
		if bits.OnesCount64(nd) >= s.keys {
			s.dead.Store(0)
			return false
		}
		if s.dead.CompareAndSwap(d, nd) {
			if nd != d {
				s.removed.Add(1)
			}
			return true
		}
	}
}

// Event is what a try's report changed in its provider's health, for the
// log.
type Event struct {
	KeyOut   bool // the vendor refused the key: it left rotation (another is left)
	KeysBack bool // the vendor refused every key: all are back, and it is a failure
	Opened   bool // the circuit opened
	Closed   bool // the circuit closed (a probe succeeded)
}

// report applies one attempt's outcome.
func (s *state) report(h Health, now int64, f provider.Failure, latency time.Duration, key int, probe bool) (e Event) {
	switch f {
	case provider.Answered:
		e.Closed = s.open.Load()
		s.succeeded(latency)
	case provider.AuthFailed:
		if s.refuse(key) {
			if probe {
				s.probing.Store(false)
			}
			e.KeyOut = true
			return e
		}
		e.KeysBack = s.keys > 1
		e.Opened = s.failed(h, now, probe)
	case provider.ServerFailed, provider.Unreachable, provider.Broken:
		e.Opened = s.failed(h, now, probe)
	default: // ClientFault, Limited, Gone: nothing about its health
		if probe {
			s.probing.Store(false)
		}
	}
	return e
}

// ProviderHealth is what the admin pages and metrics show of a provider.
type ProviderHealth struct {
	Name      string
	Circuit   Circuit
	Until     time.Time // end of the open circuit or cooldown; zero when none
	Failures  int       // consecutive failures
	Keys      int       // API keys configured
	DeadKeys  int       // keys out of rotation after a 401/403
	Trips     int64     // times the circuit opened since start
	KeyFaults int64     // times a key left rotation since start
	Latency   time.Duration
}
