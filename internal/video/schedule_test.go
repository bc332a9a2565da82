package video

import (
	"fmt"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

func TestScheduleInterval(t *testing.T) {
	s := Schedule{} // the defaults: 5s and 30s
	tests := []struct {
		name    string
		sched   Schedule
		seconds int
		polls   int
		want    time.Duration
	}{
		{"short first poll", s, 8, 0, 5 * time.Second},
		{"short second", s, 8, 1, 7500 * time.Millisecond},
		{"short capped at 2×min", s, 8, 2, 10 * time.Second},
		{"short stays capped", s, 10, 50, 10 * time.Second},
		{"5 seconds is short", s, 5, 0, 5 * time.Second},
		{"long first poll", s, 12, 0, 15 * time.Second},
		{"long second", s, 15, 1, 22500 * time.Millisecond},
		{"long capped at max", s, 20, 2, 30 * time.Second},
		{"long stays capped", s, 20, 1000, 30 * time.Second},
		{"custom min", Schedule{Min: 2 * time.Second}, 4, 0, 2 * time.Second},
		{"custom min and max, long", Schedule{Min: 2 * time.Second, Max: 8 * time.Second}, 20, 3, 8 * time.Second},
		{"max below 3×min bounds the start", Schedule{Min: 5 * time.Second, Max: 10 * time.Second}, 20, 0, 10 * time.Second},
		{"max below 2×min bounds short ones", Schedule{Min: 5 * time.Second, Max: 6 * time.Second}, 8, 5, 6 * time.Second},
		{"max below min is min", Schedule{Min: 5 * time.Second, Max: time.Second}, 8, 5, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sched.Interval(tt.seconds, tt.polls); got != tt.want {
				t.Errorf("Interval(%d s, %d polls) = %v, want %v", tt.seconds, tt.polls, got, tt.want)
			}
		})
	}
}

func TestScheduleNext(t *testing.T) {
	created := t0
	task := func(id string, seconds, polls int, deadline time.Duration) store.VideoTask {
		return store.VideoTask{ID: id, UpstreamSeconds: seconds, Polls: polls, CreatedAt: created, Deadline: created.Add(deadline)}
	}
	tests := []struct {
		name     string
		task     store.VideoTask
		from     time.Time
		min, max time.Duration // the allowed window after from
		exact    time.Time     // when set, the only right answer
	}{
		{name: "first poll of a short video", task: task("video_a", 8, 0, time.Hour), from: created,
			min: 4500 * time.Millisecond, max: 5500 * time.Millisecond},
		{name: "first poll of a long video", task: task("video_a", 20, 0, time.Hour), from: created,
			min: 13500 * time.Millisecond, max: 16500 * time.Millisecond},
		{name: "later poll of a long video", task: task("video_b", 20, 9, time.Hour), from: created.Add(10 * time.Minute),
			min: 27 * time.Second, max: 33 * time.Second},
		{name: "clamped to the deadline", task: task("video_c", 20, 9, 10*time.Minute), from: created.Add(10*time.Minute - 2*time.Second),
			exact: created.Add(10 * time.Minute)},
		{name: "at the deadline stays there", task: task("video_d", 8, 3, 10*time.Minute), from: created.Add(10 * time.Minute),
			exact: created.Add(10 * time.Minute)},
		{name: "no deadline, no clamp", task: store.VideoTask{ID: "video_e", UpstreamSeconds: 8, Polls: 5}, from: created,
			min: 9 * time.Second, max: 11 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Schedule{}.Next(tt.task, tt.from)
			if !tt.exact.IsZero() {
				if !got.Equal(tt.exact) {
					t.Errorf("Next = %v, want exactly %v", got, tt.exact)
				}
				return
			}
			if d := got.Sub(tt.from); d < tt.min || d > tt.max {
				t.Errorf("Next = from + %v, want within [%v, %v]", d, tt.min, tt.max)
			}
			if again := (Schedule{}).Next(tt.task, tt.from); !again.Equal(got) {
				t.Errorf("Next is not deterministic: %v then %v", got, again)
			}
		})
	}
}

// TestScheduleJitterSpreads checks that 500 tasks submitted together do
// not come due in the same instant, and that no jitter passes ±10%.
func TestScheduleJitterSpreads(t *testing.T) {
	for _, tc := range []struct {
		seconds, polls int
	}{{8, 0}, {8, 4}, {20, 0}, {20, 7}} {
		t.Run(fmt.Sprintf("%ds/%dpolls", tc.seconds, tc.polls), func(t *testing.T) {
			base := Schedule{}.Interval(tc.seconds, tc.polls)
			seen := map[time.Time]bool{}
			for i := range 500 {
				tk := store.VideoTask{ID: fmt.Sprintf("video_%032x", i), UpstreamSeconds: tc.seconds, Polls: tc.polls}
				next := Schedule{}.Next(tk, t0)
				d := next.Sub(t0)
				if lo, hi := base-base/10, base+base/10; d < lo || d > hi {
					t.Fatalf("task %d: interval %v outside [%v, %v]", i, d, lo, hi)
				}
				seen[next] = true
			}
			if len(seen) < 400 {
				t.Errorf("500 tasks came due at only %d distinct instants", len(seen))
			}
		})
	}
}
