package ratelimit

import (
	"testing"
	"time"
)

// A key's window holds at most Window/Resolution + 1 buckets however many
// takes it gets, and a unit taken at an instant that is not a bucket's
// edge is held until the edge after it plus Window: never shorter than
// Window, at most Resolution longer.
func TestWindowBuckets(t *testing.T) {
	m := NewMemory()
	start := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for i := range 4800 { // one take every 25 ms for two minutes
		m.Take("k", 1, 1_000_000, start.Add(time.Duration(i)*25*time.Millisecond))
	}
	if n := len(m.keys["k"].b); n > int(Window/Resolution)+1 {
		t.Fatalf("%d buckets held, want at most %d", n, Window/Resolution+1)
	}
	m = NewMemory()
	at := start.Add(30 * time.Millisecond) // inside the first bucket
	m.Take("k", 1, 1, at)
	if r := m.Take("k", 1, 1, at.Add(Window-time.Nanosecond)); r.Allowed {
		t.Fatal("a unit came back before a Window passed")
	}
	if r := m.Take("k", 1, 1, start.Add(Resolution+Window)); !r.Allowed {
		t.Fatalf("a unit held past its bucket's edge plus Window: %+v", r)
	}
}
