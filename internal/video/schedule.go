package video

import (
	"time"

	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/task"
)

// Poll schedule defaults: the spec recommends polling every 5–10 s for
// 5–10 s videos and every 15–30 s for 15–20 s ones.
const (
	DefaultPollMin = 5 * time.Second
	DefaultPollMax = 30 * time.Second
	// ShortVideo is the longest video (in upstream seconds) polled on the
	// short schedule.
	ShortVideo = 10
)

// Schedule decides when a task is polled next. Short videos start at Min
// and grow ×1.5 per poll up to 2×Min; long ones start at 3×Min and grow up
// to Max. A deterministic jitter of at most ±10%, derived from the task id
// and its poll count, keeps tasks submitted together from coming due in
// the same instant; no time is ever past the task's Deadline, so a timeout
// fires promptly. The zero Schedule uses the defaults.
type Schedule struct {
	Min, Max time.Duration // 0: DefaultPollMin, DefaultPollMax
}

// Next is when to poll t after a look at it at from, t.Polls being the
// polls done so far (0 at submission: Next(t, t.CreatedAt) is the first
// poll).
func (s Schedule) Next(t store.VideoTask, from time.Time) time.Time {
	next := from.Add(task.Jitter(s.Interval(t.UpstreamSeconds, t.Polls), t.ID, t.Polls))
	if !t.Deadline.IsZero() && next.After(t.Deadline) {
		return t.Deadline
	}
	return next
}

// Interval is the wait without jitter after polls polls of a video of
// upstreamSeconds.
func (s Schedule) Interval(upstreamSeconds, polls int) time.Duration {
	lo, hi := s.Min, s.Max
	if lo <= 0 {
		lo = DefaultPollMin
	}
	if hi <= 0 {
		hi = DefaultPollMax
	}
	start, ceil := lo, 2*lo
	if upstreamSeconds > ShortVideo {
		start, ceil = 3*lo, hi
	}
	// Max bounds both schedules, but never below Min.
	ceil = max(min(ceil, hi), lo)
	start = min(start, ceil)
	d := start
	for i := 0; i < polls && d < ceil; i++ {
		d += d / 2
	}
	return min(d, ceil)
}
