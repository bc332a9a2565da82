// Package ratelimittest is the conformance suite every ratelimit.Limiter
// and ratelimit.Concurrency must pass (the in-memory ones now, a shared one
// later), with a clock the tests move by hand.
package ratelimittest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/ratelimit"
)

// start is the suite's fake clock's first instant.
var start = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// step is one Take of a table: after advancing the clock by at, take cost
// of limit and expect the result.
type step struct {
	at         time.Duration // since start
	key        string        // "" is "k"
	cost       int64
	limit      int64
	allowed    bool
	remaining  int64
	retryAfter time.Duration // checked when not allowed
	reset      time.Duration // checked when not zero
}

// Run runs the Limiter suite; newLimiter returns a fresh, empty limiter
// for each case.
func Run(t *testing.T, newLimiter func(t *testing.T) ratelimit.Limiter) {
	cases := []struct {
		name  string
		steps []step
	}{
		{"burst equals the limit", []step{
			{cost: 1, limit: 3, allowed: true, remaining: 2, reset: 60 * time.Second},
			{cost: 1, limit: 3, allowed: true, remaining: 1, reset: 60 * time.Second},
			{cost: 1, limit: 3, allowed: true, remaining: 0, reset: 60 * time.Second},
			{cost: 1, limit: 3, allowed: false, remaining: 0, retryAfter: 60 * time.Second, reset: 60 * time.Second},
		}},
		{"at most the limit in any 60-second window", []step{
			{cost: 1, limit: 3, allowed: true, remaining: 2},
			{at: 20 * time.Second, cost: 1, limit: 3, allowed: true, remaining: 1},
			{at: 40 * time.Second, cost: 1, limit: 3, allowed: true, remaining: 0, reset: 60 * time.Second},
			{at: 50 * time.Second, cost: 1, limit: 3, allowed: false, retryAfter: 10 * time.Second},
			{at: 60 * time.Second, cost: 1, limit: 3, allowed: true, remaining: 0},
			{at: 70 * time.Second, cost: 1, limit: 3, allowed: false, retryAfter: 10 * time.Second},
			{at: 80 * time.Second, cost: 1, limit: 3, allowed: true, remaining: 0},
			{at: 200 * time.Second, cost: 1, limit: 3, allowed: true, remaining: 2, reset: 60 * time.Second},
		}},
		{"a burst then a full minute's wait", []step{
			{cost: 2, limit: 2, allowed: true, remaining: 0},
			{at: 30 * time.Second, cost: 1, limit: 2, allowed: false, retryAfter: 30 * time.Second},
			{at: 59 * time.Second, cost: 1, limit: 2, allowed: false, retryAfter: time.Second},
			{at: 60 * time.Second, cost: 2, limit: 2, allowed: true, remaining: 0},
		}},
		{"tokens cost more than one", []step{
			{cost: 600, limit: 1000, allowed: true, remaining: 400, reset: 60 * time.Second},
			{at: 10 * time.Second, cost: 300, limit: 1000, allowed: true, remaining: 100},
			{at: 20 * time.Second, cost: 500, limit: 1000, allowed: false, remaining: 100, retryAfter: 40 * time.Second},
			{at: 61 * time.Second, cost: 500, limit: 1000, allowed: true, remaining: 200},
			{at: 61 * time.Second, cost: 300, limit: 1000, allowed: false, remaining: 200, retryAfter: 9 * time.Second},
		}},
		{"a cost above the limit needs the whole allowance", []step{
			{cost: 5000, limit: 1000, allowed: true, remaining: 0, reset: time.Minute},
			{cost: 5000, limit: 1000, allowed: false, retryAfter: time.Minute},
		}},
		{"a refund at settlement gives units back", []step{
			{cost: 1000, limit: 1000, allowed: true, remaining: 0},
			{cost: 1, limit: 1000, allowed: false, retryAfter: time.Minute},
			{cost: -700, limit: 1000, allowed: true, remaining: 700},
			{cost: 700, limit: 1000, allowed: true, remaining: 0},
		}},
		{"a refund never makes more than the limit", []step{
			{cost: 100, limit: 1000, allowed: true, remaining: 900},
			{cost: -5000, limit: 1000, allowed: true, remaining: 1000, reset: 0},
			{cost: 1000, limit: 1000, allowed: true, remaining: 0},
		}},
		{"an extra take at settlement only when it fits", []step{
			{cost: 900, limit: 1000, allowed: true, remaining: 100},
			{cost: 100, limit: 1000, allowed: true, remaining: 0},
			{at: 6 * time.Second, cost: 1, limit: 1000, allowed: false, retryAfter: 54 * time.Second},
		}},
		{"a cost of zero reads the state", []step{
			{cost: 1, limit: 4, allowed: true, remaining: 3},
			{at: 15 * time.Second, cost: 0, limit: 4, allowed: true, remaining: 3, reset: 45 * time.Second},
			{at: 15 * time.Second, cost: 0, limit: 4, allowed: true, remaining: 3},
		}},
		{"keys are independent", []step{
			{key: "a", cost: 1, limit: 1, allowed: true, remaining: 0},
			{key: "a", cost: 1, limit: 1, allowed: false, retryAfter: time.Minute},
			{key: "b", cost: 1, limit: 1, allowed: true, remaining: 0},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLimiter(t)
			for i, s := range tc.steps {
				key := s.key
				if key == "" {
					key = "k"
				}
				r := l.Take(key, s.cost, s.limit, start.Add(s.at))
				where := fmt.Sprintf("step %d (cost %d at %v)", i, s.cost, s.at)
				if r.Allowed != s.allowed {
					t.Fatalf("%s: allowed = %v, want %v (%+v)", where, r.Allowed, s.allowed, r)
				}
				if r.Limit != s.limit {
					t.Errorf("%s: limit = %d, want %d", where, r.Limit, s.limit)
				}
				if r.Remaining != s.remaining {
					t.Errorf("%s: remaining = %d, want %d", where, r.Remaining, s.remaining)
				}
				if !s.allowed && !near(r.RetryAfter, s.retryAfter) {
					t.Errorf("%s: retry after %v, want %v", where, r.RetryAfter, s.retryAfter)
				}
				if s.allowed && r.RetryAfter != 0 {
					t.Errorf("%s: allowed with retry after %v", where, r.RetryAfter)
				}
				if s.reset != 0 && !near(r.Reset, s.reset) {
					t.Errorf("%s: reset %v, want %v", where, r.Reset, s.reset)
				}
			}
		})
	}
	t.Run("concurrent takes never exceed the limit", func(t *testing.T) {
		l := newLimiter(t)
		var mu sync.Mutex
		allowed := 0
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					if l.Take("k", 1, 100, start).Allowed {
						mu.Lock()
						allowed++
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if allowed != 100 {
			t.Fatalf("%d takes allowed, want 100", allowed)
		}
	})
}

// near reports whether a is within a millisecond of b (an implementation
// may keep time coarser than nanoseconds).
func near(a, b time.Duration) bool {
	d := a - b
	return d > -time.Millisecond && d < time.Millisecond
}

// RunConcurrency runs the Concurrency suite; newSlots returns a fresh,
// empty one for each case.
func RunConcurrency(t *testing.T, newSlots func(t *testing.T) ratelimit.Concurrency) {
	t.Run("acquire up to the limit, release frees one", func(t *testing.T) {
		s := newSlots(t)
		for i, want := range []bool{true, true, false} {
			if got := s.Acquire("k", 2); got != want {
				t.Fatalf("acquire %d = %v, want %v", i, got, want)
			}
		}
		if !s.Acquire("other", 2) {
			t.Fatal("another key's slot was refused")
		}
		s.Release("k")
		if !s.Acquire("k", 2) {
			t.Fatal("no slot after a release")
		}
		if s.Acquire("k", 2) {
			t.Fatal("a third slot after one release")
		}
	})
	t.Run("released keys start empty", func(t *testing.T) {
		s := newSlots(t)
		if !s.Acquire("k", 1) {
			t.Fatal("first acquire refused")
		}
		s.Release("k")
		if !s.Acquire("k", 1) {
			t.Fatal("acquire after release refused")
		}
		if s.Acquire("k", 1) {
			t.Fatal("second slot of a limit of 1")
		}
	})
	t.Run("concurrent acquires never exceed the limit", func(t *testing.T) {
		s := newSlots(t)
		var mu sync.Mutex
		held := 0
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					if s.Acquire("k", 5) {
						mu.Lock()
						held++
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if held != 5 {
			t.Fatalf("%d slots held, want 5", held)
		}
	})
}
