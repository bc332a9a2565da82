package ratelimit

import (
	"testing"
	"time"
)

// TestAppendDuration: the allocation-free form is time.Duration.String's
// at millisecond precision.
func TestAppendDuration(t *testing.T) {
	cases := []time.Duration{time.Second, 1500 * time.Millisecond, 59999 * time.Millisecond, time.Minute,
		6 * time.Minute, 6*time.Minute + 30*time.Second, time.Hour, time.Hour + 2*time.Minute + 3500*time.Millisecond,
		25 * time.Hour, 1234567 * time.Millisecond, 10*time.Second + 10*time.Millisecond, 2*time.Second + 100*time.Millisecond}
	for i := range 1000 {
		cases = append(cases, time.Duration(i)*7919*time.Millisecond+time.Second)
	}
	for _, d := range cases {
		if got, want := string(AppendDuration(nil, d)), d.Round(time.Millisecond).String(); got != want {
			t.Errorf("AppendDuration(%d) = %q, want %q", d, got, want)
		}
	}
	for d, want := range map[time.Duration]string{0: "0s", -time.Second: "0s", 1: "1ms", 999 * time.Millisecond: "999ms"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%d) = %q, want %q", d, got, want)
		}
	}
}
