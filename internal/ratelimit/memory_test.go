package ratelimit_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/ratelimit"
	"github.com/modelgate/modelgate/internal/ratelimit/ratelimittest"
)

func TestMemory(t *testing.T) {
	ratelimittest.Run(t, func(*testing.T) ratelimit.Limiter { return ratelimit.NewMemory() })
}

func TestSlots(t *testing.T) {
	ratelimittest.RunConcurrency(t, func(*testing.T) ratelimit.Concurrency { return ratelimit.NewSlots() })
}

// Keys whose allowance is whole again are forgotten: memory follows the
// keys of the last minute.
func TestMemoryForgetsIdleKeys(t *testing.T) {
	m := ratelimit.NewMemory()
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for i := range 5000 {
		m.Take("old"+strconv.Itoa(i), 1, 10, now)
	}
	if n := m.Len(); n < 1024 || n > 5000 {
		t.Fatalf("%d keys held after 5000 takes", n)
	}
	later := now.Add(2 * time.Minute)
	for i := range 2000 {
		m.Take("new"+strconv.Itoa(i), 1, 10, later)
	}
	if n := m.Len(); n > 2000 {
		t.Fatalf("%d keys held, want at most the 2000 of the last minute", n)
	}
	// A refund to nothing forgets the key at once.
	m2 := ratelimit.NewMemory()
	m2.Take("k", 1, 10, now)
	m2.Take("k", -1, 10, now)
	if n := m2.Len(); n != 0 {
		t.Fatalf("%d keys held after a full refund", n)
	}
}

func TestSlotsHoldNothingIdle(t *testing.T) {
	s := ratelimit.NewSlots()
	s.Acquire("k", 3)
	s.Acquire("k", 3)
	s.Release("k")
	s.Release("k")
	if !s.Acquire("k", 1) || s.Acquire("k", 1) {
		t.Fatal("slots not back to empty after releasing all")
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		hdr  string
		secs int64
	}{
		{0, "0s", 1},
		{20 * time.Millisecond, "20ms", 1},
		{1500 * time.Microsecond, "2ms", 1},
		{time.Second, "1s", 1},
		{1001 * time.Millisecond, "1.001s", 2},
		{6 * time.Minute, "6m0s", 360},
		{20*time.Second + 400*time.Microsecond, "20s", 21},
	} {
		if got := ratelimit.Duration(tc.d); got != tc.hdr {
			t.Errorf("Duration(%v) = %q, want %q", tc.d, got, tc.hdr)
		}
		if got := ratelimit.Seconds(tc.d); got != tc.secs {
			t.Errorf("Seconds(%v) = %d, want %d", tc.d, got, tc.secs)
		}
	}
}
