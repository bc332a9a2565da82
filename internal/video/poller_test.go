package video

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/store"
)

func TestCanMove(t *testing.T) {
	const (
		P = store.TaskPending
		R = store.TaskProcessing
		C = store.TaskCompleted
		F = store.TaskFailed
	)
	tests := []struct {
		from, to store.TaskState
		want     bool
	}{
		{P, P, true}, {P, R, true}, {P, C, true}, {P, F, true},
		{R, P, false}, {R, R, true}, {R, C, true}, {R, F, true},
		{C, P, false}, {C, R, false}, {C, C, false}, {C, F, false},
		{F, P, false}, {F, R, false}, {F, C, false}, {F, F, false},
		{"", P, false}, {P, "", false}, {"done", C, false}, {P, "done", false},
	}
	for _, tt := range tests {
		if got := CanMove(tt.from, tt.to); got != tt.want {
			t.Errorf("CanMove(%q, %q) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
}

func TestNextState(t *testing.T) {
	tests := []struct {
		from store.TaskState
		job  provider.VideoState
		want store.TaskState
	}{
		{store.TaskPending, provider.VideoQueued, store.TaskPending},
		{store.TaskPending, provider.VideoRunning, store.TaskProcessing},
		{store.TaskProcessing, provider.VideoRunning, store.TaskProcessing},
		// A vendor that reports queued after running never moves a task back.
		{store.TaskProcessing, provider.VideoQueued, store.TaskProcessing},
	}
	for _, tt := range tests {
		got := NextState(tt.from, tt.job)
		if got != tt.want {
			t.Errorf("NextState(%s, %s) = %s, want %s", tt.from, tt.job, got, tt.want)
		}
		if !CanMove(tt.from, got) {
			t.Errorf("NextState(%s, %s) = %s, a move CanMove refuses", tt.from, tt.job, got)
		}
	}
}

func TestPollerRequiresItsDependencies(t *testing.T) {
	s := newStore(t)
	c := newClock()
	for name, p := range map[string]*Poller{
		"no store":  {Makers: makers(&fakeMaker{}), Media: newMedia(), Owner: "a"},
		"no makers": {Store: s, Media: newMedia(), Owner: "a"},
		"no media":  {Store: s, Makers: makers(&fakeMaker{}), Owner: "a"},
		"no owner":  {Store: s, Makers: makers(&fakeMaker{}), Media: newMedia(), Now: c.Now},
	} {
		if err := p.Run(testCtx(t)); err == nil {
			t.Errorf("%s: Run succeeded", name)
		}
		if _, err := p.Step(testCtx(t)); err == nil {
			t.Errorf("%s: Step succeeded", name)
		}
	}
}

// TestLifecycleChargesOnce drives a task queued → running → succeeded and
// checks it is stored and charged exactly once, and its hold released.
func TestLifecycleChargesOnce(t *testing.T) {
	s, c, media := newStore(t), newClock(), newMedia()
	answers := []provider.VideoState{provider.VideoQueued, provider.VideoRunning, provider.VideoRunning, provider.VideoQueued, provider.VideoSucceeded}
	var polls atomic.Int64
	m := &fakeMaker{Status: func(_ context.Context, id string) (provider.VideoJob, error) {
		i := polls.Add(1) - 1
		return job(id, answers[i], int(i)*20)
	}}
	p := newPoller(s, m, media, c, "a")
	task := newTask("video_life", t0)
	createTasks(t, s, task)
	if a := account(t, s); a.Held != task.Held {
		t.Fatalf("account Held = %v while open, want %v", a.Held, task.Held)
	}

	wantStates := []store.TaskState{store.TaskPending, store.TaskProcessing, store.TaskProcessing, store.TaskProcessing, store.TaskCompleted}
	var startedAt time.Time
	for i, want := range wantStates {
		c.Set(getTask(t, s, task.ID).NextPollAt)
		if n := step(t, p); n != 1 {
			t.Fatalf("poll %d: Step polled %d tasks, want 1", i, n)
		}
		got := getTask(t, s, task.ID)
		if got.State != want {
			t.Fatalf("poll %d: state %s, want %s", i, got.State, want)
		}
		if got.LeaseOwner != "" {
			t.Errorf("poll %d: lease still held by %q", i, got.LeaseOwner)
		}
		if want == store.TaskProcessing {
			if startedAt.IsZero() {
				startedAt = c.Now()
			}
			if !got.StartedAt.Equal(startedAt) {
				t.Errorf("poll %d: StartedAt %v, want the first running poll's %v", i, got.StartedAt, startedAt)
			}
		}
		if want.Final() {
			break
		}
		if got.Polls != i+1 {
			t.Errorf("poll %d: Polls = %d", i, got.Polls)
		}
		if !got.NextPollAt.After(c.Now()) {
			t.Errorf("poll %d: next poll %v not after now %v", i, got.NextPollAt, c.Now())
		}
	}

	done := getTask(t, s, task.ID)
	wantCost := money.Micros(8 * testPrice)
	if done.Cost != wantCost || done.Progress != 100 || !done.FinishedAt.Equal(c.Now()) {
		t.Errorf("completed task: cost %v progress %d finished %v, want %v 100 %v", done.Cost, done.Progress, done.FinishedAt, wantCost, c.Now())
	}
	if !media.has(done.ContentKey) || done.ContentType != "video/mp4" || done.ContentSize == 0 {
		t.Errorf("content %q (%s, %d bytes) not stored", done.ContentKey, done.ContentType, done.ContentSize)
	}

	// Nothing more happens however often the poller looks again.
	c.Advance(time.Hour)
	if n := step(t, p); n != 0 {
		t.Errorf("Step after completion polled %d tasks", n)
	}
	ch := charges(t, s)
	if len(ch) != 1 || ch[0].Amount != -wantCost || ch[0].Ref != task.ID {
		t.Fatalf("charges = %+v, want one of %v for %s", ch, -wantCost, task.ID)
	}
	a := account(t, s)
	if a.Held != 0 || a.Balance != testBalance-wantCost {
		t.Errorf("account Held %v balance %v, want 0 and %v", a.Held, a.Balance, testBalance-wantCost)
	}
	rec, ok := usageOf(t, s, task.ID)
	if !ok || rec.Status != 200 || rec.Cost != wantCost || rec.Endpoint != "videos" || rec.ErrorCode != "" || rec.KeyID != testKey {
		t.Errorf("usage record %+v (found %v)", rec, ok)
	}
	if want := c.Now().Add(-time.Hour).Sub(t0); rec.Latency != want {
		t.Errorf("latency %v, want %v", rec.Latency, want)
	}
}

// TestFailuresChargeNothing covers every way a poll fails a task.
func TestFailuresChargeNothing(t *testing.T) {
	const maxBytes = 1 << 20
	long := strings.Repeat("é", 400) // 800 bytes
	tests := []struct {
		name     string
		provider string
		status   func(ctx context.Context, id string) (provider.VideoJob, error)
		content  func(ctx context.Context, job provider.VideoJob) (*provider.VideoContent, error)
		wantErr  string // a part of the task's Error
		code     string
	}{
		{name: "vendor failed", status: func(_ context.Context, id string) (provider.VideoJob, error) {
			return provider.VideoJob{ID: id, State: provider.VideoFailed, Error: "moderation blocked the prompt"}, nil
		}, wantErr: "moderation blocked the prompt", code: CodeFailed},
		{name: "vendor failed silently", status: func(_ context.Context, id string) (provider.VideoJob, error) {
			return job(id, provider.VideoFailed, 40)
		}, wantErr: msgVendorFailed, code: CodeFailed},
		{name: "vendor message bounded", status: func(_ context.Context, id string) (provider.VideoJob, error) {
			return provider.VideoJob{ID: id, State: provider.VideoFailed, Error: long}, nil
		}, wantErr: strings.Repeat("é", 250) + "…", code: CodeFailed},
		{name: "status gone", status: func(context.Context, string) (provider.VideoJob, error) {
			return provider.VideoJob{}, fmt.Errorf("HTTP 404: %w", provider.ErrVideoGone)
		}, wantErr: msgGone, code: CodeUpstreamLost},
		{name: "content gone", content: func(context.Context, provider.VideoJob) (*provider.VideoContent, error) {
			return nil, fmt.Errorf("HTTP 404: %w", provider.ErrVideoGone)
		}, wantErr: msgGone, code: CodeUpstreamLost},
		{name: "too large", content: func(context.Context, provider.VideoJob) (*provider.VideoContent, error) {
			return bigVideo(maxBytes + 1), nil
		}, wantErr: fmt.Sprintf("limit of %d bytes", maxBytes), code: CodeFailed},
		{name: "not a video", content: func(context.Context, provider.VideoJob) (*provider.VideoContent, error) {
			return &provider.VideoContent{Body: io.NopCloser(strings.NewReader("<html>")), Size: 6}, nil
		}, wantErr: msgNotVideo, code: CodeFailed},
		{name: "provider no longer configured", provider: "gone", wantErr: "no longer configured", code: CodeFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c, media := newStore(t), newClock(), newMedia()
			m := &fakeMaker{Status: tt.status, Content: tt.content}
			p := newPoller(s, m, media, c, "a")
			p.MaxBytes = maxBytes
			task := newTask("video_fail", t0)
			task.Progress = 40
			if tt.provider != "" {
				task.Provider = tt.provider
			}
			createTasks(t, s, task)
			c.Advance(3 * time.Second)
			if n := step(t, p); n != 1 {
				t.Fatalf("Step polled %d tasks", n)
			}
			got := getTask(t, s, task.ID)
			if got.State != store.TaskFailed || !strings.Contains(got.Error, tt.wantErr) {
				t.Errorf("task %s %q, want failed with %q", got.State, got.Error, tt.wantErr)
			}
			if len(got.Error) > maxVendorError+len("…") {
				t.Errorf("error of %d bytes", len(got.Error))
			}
			if got.Cost != 0 || got.ContentKey != "" || got.Progress != 40 || !got.FinishedAt.Equal(c.Now()) {
				t.Errorf("failed task: cost %v content %q progress %d finished %v", got.Cost, got.ContentKey, got.Progress, got.FinishedAt)
			}
			if media.count() != 0 {
				t.Errorf("%d videos stored", media.count())
			}
			if ch := charges(t, s); len(ch) != 0 {
				t.Errorf("charges %+v, want none", ch)
			}
			if a := account(t, s); a.Held != 0 || a.Balance != testBalance {
				t.Errorf("account Held %v balance %v, want 0 and %v", a.Held, a.Balance, testBalance)
			}
			rec, ok := usageOf(t, s, task.ID)
			if !ok || rec.Status != 500 || rec.ErrorCode != tt.code || rec.Cost != 0 || rec.Latency != 3*time.Second {
				t.Errorf("usage record %+v (found %v), want status 500 code %s", rec, ok, tt.code)
			}
		})
	}
}

// TestTransientErrorsRetried checks that failures that may pass are
// retried on a growing schedule, and the task then completes.
func TestTransientErrorsRetried(t *testing.T) {
	s, c, media := newStore(t), newClock(), newMedia()
	var calls atomic.Int64
	m := &fakeMaker{Status: func(_ context.Context, id string) (provider.VideoJob, error) {
		switch calls.Add(1) {
		case 1:
			return job(id, provider.VideoRunning, 30)
		case 2, 3, 4:
			return provider.VideoJob{}, errors.New("HTTP 503: upstream overloaded")
		}
		return job(id, provider.VideoSucceeded, 100)
	}}
	p := newPoller(s, m, media, c, "a")
	task := newTask("video_retry", t0)
	createTasks(t, s, task)

	var last time.Duration
	for i := range 4 {
		c.Set(getTask(t, s, task.ID).NextPollAt)
		step(t, p)
		got := getTask(t, s, task.ID)
		if got.State != store.TaskProcessing || got.Progress != 30 || got.Polls != i+1 {
			t.Fatalf("poll %d: %s progress %d polls %d, want processing 30 %d", i, got.State, got.Progress, got.Polls, i+1)
		}
		wait := got.NextPollAt.Sub(c.Now())
		if base := p.Schedule().Interval(task.UpstreamSeconds, i+1); wait < base-base/10 || wait > base+base/10 {
			t.Errorf("poll %d: next poll in %v, want about %v", i, wait, base)
		}
		if i > 0 && wait < last-last/5 {
			t.Errorf("poll %d: backoff shrank from %v to %v", i, last, wait)
		}
		last = wait
	}
	// The video is ready, but storing it fails once: that is retried too.
	media.saveErr = errors.New("disk busy")
	c.Set(getTask(t, s, task.ID).NextPollAt)
	step(t, p)
	if got := getTask(t, s, task.ID); got.State != store.TaskProcessing || got.Polls != 5 {
		t.Fatalf("after a failed save: %s with %d polls, want processing with 5", got.State, got.Polls)
	}
	c.Set(getTask(t, s, task.ID).NextPollAt)
	step(t, p)
	if got := getTask(t, s, task.ID); got.State != store.TaskCompleted || got.Cost != 8*testPrice {
		t.Fatalf("finally: %s cost %v, want completed %v", got.State, got.Cost, money.Micros(8*testPrice))
	}
	if n := len(charges(t, s)); n != 1 {
		t.Errorf("%d charges, want 1", n)
	}
}

// TestTimeoutCancelsUpstream checks that a task is polled at its deadline
// and then cancelled upstream and failed, with nothing charged.
func TestTimeoutCancelsUpstream(t *testing.T) {
	s, c, media := newStore(t), newClock(), newMedia()
	m := &cancellingMaker{}
	m.Status = func(_ context.Context, id string) (provider.VideoJob, error) {
		return job(id, provider.VideoRunning, 50)
	}
	p := newPoller(s, m, media, c, "a")
	task := newTask("video_slow", t0)
	task.UpstreamSeconds = 20 // the long schedule: fewer polls to the deadline
	createTasks(t, s, task)

	// Poll until the schedule lands on the deadline itself.
	for range 1000 {
		next := getTask(t, s, task.ID).NextPollAt
		if next.After(task.Deadline) {
			t.Fatalf("next poll %v is past the deadline %v", next, task.Deadline)
		}
		if next.Equal(task.Deadline) {
			break
		}
		c.Set(next)
		step(t, p)
	}
	if got := getTask(t, s, task.ID); got.State != store.TaskProcessing || !got.NextPollAt.Equal(task.Deadline) {
		t.Fatalf("before the deadline: %s next %v, want processing next %v", got.State, got.NextPollAt, task.Deadline)
	}
	statusCalls := m.statusCalls.Load()
	c.Set(task.Deadline)
	step(t, p)
	got := getTask(t, s, task.ID)
	want := "The video was not finished within 30 minutes; it was cancelled and nothing was charged."
	if got.State != store.TaskFailed || got.Error != want {
		t.Errorf("task %s %q, want failed %q", got.State, got.Error, want)
	}
	if m.statusCalls.Load() != statusCalls {
		t.Errorf("the timed-out task was polled upstream again")
	}
	if len(m.cancelled) != 1 || m.cancelled[0] != task.UpstreamID {
		t.Errorf("cancelled %v, want [%s]", m.cancelled, task.UpstreamID)
	}
	rec, _ := usageOf(t, s, task.ID)
	if rec.Status != 504 || rec.ErrorCode != CodeTimeout || rec.Cost != 0 {
		t.Errorf("usage record %+v", rec)
	}
	if a := account(t, s); a.Held != 0 || a.Balance != testBalance {
		t.Errorf("account Held %v balance %v", a.Held, a.Balance)
	}
}

// TestBilledSeconds checks the charge follows what the vendor says it made
// when that is less than what was asked, capped at the hold.
func TestBilledSeconds(t *testing.T) {
	tests := []struct {
		name      string
		reported  int
		price     money.Micros
		ratio     int64
		held      money.Micros
		wantPrice money.Micros
	}{
		{"vendor silent: billed what was asked", 0, testPrice, money.PPM, 8 * testPrice, 8 * testPrice},
		{"vendor made fewer: billed fewer", 4, testPrice, money.PPM, 8 * testPrice, 4 * testPrice},
		{"vendor made more: billed what was asked", 12, testPrice, money.PPM, 8 * testPrice, 8 * testPrice},
		{"group ratio applies", 4, testPrice, money.PPM / 2, 4 * testPrice, 2 * testPrice},
		{"never more than held", 0, testPrice, money.PPM, 5 * testPrice, 5 * testPrice},
		{"free model", 0, 0, money.PPM, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c, media := newStore(t), newClock(), newMedia()
			m := &fakeMaker{Status: func(_ context.Context, id string) (provider.VideoJob, error) {
				return provider.VideoJob{ID: id, State: provider.VideoSucceeded, Seconds: tt.reported}, nil
			}}
			task := newTask("video_secs", t0)
			task.Price, task.RatioPPM, task.Held = tt.price, tt.ratio, tt.held
			createTasks(t, s, task)
			step(t, newPoller(s, m, media, c, "a"))
			got := getTask(t, s, task.ID)
			if got.State != store.TaskCompleted || got.Cost != tt.wantPrice {
				t.Errorf("task %s cost %v, want completed %v", got.State, got.Cost, tt.wantPrice)
			}
			if a := account(t, s); a.Balance != testBalance-tt.wantPrice || a.Held != 0 {
				t.Errorf("balance %v held %v, want %v and 0", a.Balance, a.Held, testBalance-tt.wantPrice)
			}
		})
	}
}

// TestFinishedMeanwhileDropsTheVideo: a client cancels the task while its
// video downloads; the poller's completion conflicts, the stored video is
// deleted and nothing is charged.
func TestFinishedMeanwhileDropsTheVideo(t *testing.T) {
	s, c, media := newStore(t), newClock(), newMedia()
	task := newTask("video_cancelled", t0)
	m := &fakeMaker{Content: func(ctx context.Context, _ provider.VideoJob) (*provider.VideoContent, error) {
		f := task
		f.State, f.Error, f.FinishedAt = store.TaskFailed, "cancelled by the client", c.Now()
		if err := s.FinishTask(ctx, "", f, nil); err != nil {
			return nil, err
		}
		return smallVideo(), nil
	}}
	createTasks(t, s, task)
	step(t, newPoller(s, m, media, c, "a"))
	got := getTask(t, s, task.ID)
	if got.State != store.TaskFailed || got.Error != "cancelled by the client" || got.ContentKey != "" {
		t.Errorf("task %s %q content %q, want the client's cancel", got.State, got.Error, got.ContentKey)
	}
	if media.count() != 0 || len(media.deleted) != 1 {
		t.Errorf("%d videos kept, %d deleted; want 0 and 1", media.count(), len(media.deleted))
	}
	if ch := charges(t, s); len(ch) != 0 {
		t.Errorf("charges %+v", ch)
	}
}
