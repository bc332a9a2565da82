package task

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"
)

// Backoff is a poll interval that starts at Start and grows ×1.5 per poll
// up to Ceil.
type Backoff struct {
	Start, Ceil time.Duration
}

// Interval is the wait without jitter after polls polls.
func (b Backoff) Interval(polls int) time.Duration {
	ceil := max(b.Ceil, b.Start)
	d := b.Start
	for i := 0; i < polls && d < ceil; i++ {
		d += d / 2
	}
	return min(d, ceil)
}

// Next is when to poll a task (id, polls so far) looked at at from: the
// interval moved by Jitter, never past deadline (when not zero), so a
// timeout fires promptly.
func (b Backoff) Next(id string, polls int, from, deadline time.Time) time.Time {
	next := from.Add(Jitter(b.Interval(polls), id, polls))
	if !deadline.IsZero() && next.After(deadline) {
		return deadline
	}
	return next
}

// Jitter moves d by a fraction in [−10%, +10%] that depends only on the
// task id and the poll count, so tasks submitted together do not come due
// in the same instant, and a test can predict every time.
func Jitter(d time.Duration, id string, polls int) time.Duration {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(strconv.AppendInt(nil, int64(polls), 10))
	per10k := int64(h.Sum64()%2001) - 1000 // −1000..1000 of 10000
	return d + time.Duration(int64(d)/10000*per10k)
}

// DurationText writes d in whole hours, minutes or seconds when it is one
// ("30 minutes"), as Go does otherwise, for the messages of tasks that
// timed out.
func DurationText(d time.Duration) string {
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch {
	case d > 0 && d%time.Hour == 0:
		return plural(int64(d/time.Hour), "hour")
	case d > 0 && d%time.Minute == 0:
		return plural(int64(d/time.Minute), "minute")
	case d > 0 && d%time.Second == 0:
		return plural(int64(d/time.Second), "second")
	}
	return d.String()
}
