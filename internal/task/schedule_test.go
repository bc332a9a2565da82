package task

import (
	"fmt"
	"testing"
	"time"
)

func TestBackoffInterval(t *testing.T) {
	b := Backoff{Start: 2 * time.Second, Ceil: 10 * time.Second}
	tests := []struct {
		polls int
		want  time.Duration
	}{
		{0, 2 * time.Second},
		{1, 3 * time.Second},
		{2, 4500 * time.Millisecond},
		{3, 6750 * time.Millisecond},
		{4, 10 * time.Second}, // 10.125 s capped
		{100, 10 * time.Second},
	}
	for _, tt := range tests {
		if got := b.Interval(tt.polls); got != tt.want {
			t.Errorf("Interval(%d) = %v, want %v", tt.polls, got, tt.want)
		}
	}
	// A ceiling below the start is the start.
	if got := (Backoff{Start: 5 * time.Second, Ceil: time.Second}).Interval(3); got != 5*time.Second {
		t.Errorf("ceiling below start: %v", got)
	}
}

func TestBackoffNext(t *testing.T) {
	b := Backoff{Start: 10 * time.Second, Ceil: 10 * time.Second}
	for i := range 200 {
		id := fmt.Sprintf("resp_%d", i)
		next := b.Next(id, 0, t0, time.Time{})
		if d := next.Sub(t0); d < 9*time.Second || d > 11*time.Second {
			t.Fatalf("%s: next after %v, want 10s ± 10%%", id, d)
		}
		if again := b.Next(id, 0, t0, time.Time{}); !again.Equal(next) {
			t.Fatalf("%s: jitter is not deterministic", id)
		}
		if capped := b.Next(id, 0, t0, t0.Add(5*time.Second)); !capped.Equal(t0.Add(5 * time.Second)) {
			t.Fatalf("%s: next %v past the deadline", id, capped)
		}
	}
}

// TestJitterSpreads: 1,000 tasks submitted together come due at many
// different instants.
func TestJitterSpreads(t *testing.T) {
	seen := map[time.Duration]bool{}
	for i := range 1000 {
		seen[Jitter(10*time.Second, fmt.Sprintf("video_%d", i), 0)] = true
	}
	if len(seen) < 500 {
		t.Errorf("only %d distinct delays of 1000", len(seen))
	}
}

func TestDurationText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour:                  "1 hour",
		2 * time.Hour:              "2 hours",
		30 * time.Minute:           "30 minutes",
		90 * time.Minute:           "90 minutes",
		time.Second:                "1 second",
		1500 * time.Millisecond:    "1.5s",
		0:                          "0s",
		25*time.Hour + time.Second: "90001 seconds",
	} {
		if got := DurationText(d); got != want {
			t.Errorf("DurationText(%v) = %q, want %q", d, got, want)
		}
	}
}
