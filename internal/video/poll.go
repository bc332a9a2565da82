package video

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/imagestore"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/redact"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/task"
)

// Usage record fields of a task's end.
const (
	Endpoint         = "videos" // UsageRecord.Endpoint of every task
	CodeFailed       = "video_failed"
	CodeTimeout      = "video_timeout"
	CodeUpstreamLost = "video_upstream_lost"
	// maxVendorError bounds the vendor's failure message kept on a task.
	maxVendorError = 500
)

// Client-facing reasons a task failed.
const (
	msgUnconfigured = "The provider of this task is no longer configured."
	msgGone         = "The upstream lost the task."
	msgVendorFailed = "The upstream failed to generate the video."
	msgNotVideo     = "The upstream's result was not an MP4 or WebM video."
)

// NextState is the task state an upstream job state moves a task in
// state from to: queued keeps it (a task never moves back to pending),
// running makes it processing. Succeeded and failed are not mapped here:
// they finish the task.
func NextState(from store.TaskState, job provider.VideoState) store.TaskState {
	if job == provider.VideoRunning && CanMove(from, store.TaskProcessing) {
		return store.TaskProcessing
	}
	return from
}

// poll looks at one claimed task once and stores what it learned. Errors
// are logged: one task's trouble never stops the others.
func (p *Poller) poll(ctx context.Context, t store.VideoTask) {
	now := p.Now()
	maker, ok := p.Makers(t.Provider)
	if !now.Before(t.Deadline) {
		p.timeout(ctx, t, maker, now)
		return
	}
	if !ok {
		p.fail(ctx, t, now, msgUnconfigured, 500, CodeFailed)
		return
	}
	sctx, cancel := context.WithTimeout(ctx, p.PollTimeout)
	job, err := maker.VideoStatus(sctx, t.UpstreamModel, t.UpstreamID)
	cancel()
	at := p.Now() // the task's own poll time, whatever else is running
	switch {
	case errors.Is(err, provider.ErrVideoGone):
		p.fail(ctx, t, at, msgGone, 500, CodeUpstreamLost)
	case err != nil:
		p.retry(ctx, t, at, "status", err)
	case job.State == provider.VideoFailed:
		p.fail(ctx, t, at, vendorError(job.Error), 500, CodeFailed)
	case job.State == provider.VideoSucceeded:
		p.complete(ctx, t, maker, job)
	case job.State == provider.VideoQueued, job.State == provider.VideoRunning:
		u := p.advance(t, at)
		u.State = NextState(t.State, job.State)
		if u.State == store.TaskProcessing && u.StartedAt.IsZero() {
			u.StartedAt = at
		}
		u.Progress = max(t.Progress, min(job.Progress, 99))
		if job.Ref != "" {
			u.UpstreamRef = job.Ref
		}
		p.logResult(ctx, t, "update", p.Store.UpdateTask(ctx, p.Owner, u))
	default:
		p.retry(ctx, t, at, "status", fmt.Errorf("unknown upstream state %q", job.State))
	}
}

// advance is t after one more poll at at, scheduled for its next one.
func (p *Poller) advance(t store.VideoTask, at time.Time) store.VideoTask {
	t.Polls++
	t.NextPollAt = p.sched.Next(t, at)
	t.UpdatedAt = at
	return t
}

// retry keeps t as it is and schedules its next poll: the upstream (or the
// media store) failed in a way that may pass. A shutdown is no failure:
// the lease expires and another poll takes over.
func (p *Poller) retry(ctx context.Context, t store.VideoTask, at time.Time, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	u := p.advance(t, at)
	p.Log.Warn("video: poll failed; will retry", "task", t.ID, "provider", t.Provider,
		"step", what, "polls", u.Polls, "next", u.NextPollAt, "err", err)
	p.logResult(ctx, t, "update", p.Store.UpdateTask(ctx, p.Owner, u))
}

// timeout ends t at its deadline. A vendor that confirms the cancel
// stops the job, and the task fails with nothing charged. Otherwise (the
// vendor cannot cancel, or the cancel failed) the job is still the
// vendor's, which bills the operator for what it accepted whether the
// gateway waits for it or not: the task fails charged price × the seconds
// asked (its reservation).
func (p *Poller) timeout(ctx context.Context, t store.VideoTask, maker provider.VideoMaker, now time.Time) {
	within := task.DurationText(t.Deadline.Sub(t.CreatedAt))
	if c, ok := maker.(provider.VideoCanceller); ok {
		cctx, cancel := context.WithTimeout(ctx, p.PollTimeout)
		err := c.CancelVideo(cctx, t.UpstreamModel, t.UpstreamID)
		cancel()
		if err == nil {
			p.fail(ctx, t, now, fmt.Sprintf("The video was not finished within %s; it was cancelled and nothing was charged.", within), 504, CodeTimeout)
			return
		}
		p.Log.Warn("video: cancelling a timed-out task upstream failed", "task", t.ID, "provider", t.Provider, "err", err)
	}
	if ctx.Err() != nil {
		return
	}
	cost := p.cost(t, t.UpstreamSeconds)
	f := t
	f.State, f.FinishedAt, f.UpdatedAt, f.Cost = store.TaskFailed, now, now, cost
	f.Error = fmt.Sprintf("The video was not finished within %s and its vendor cannot cancel it; it was charged as asked (%d seconds).",
		within, t.UpstreamSeconds)
	rec := usageRecord(t, now, cost, 504, CodeTimeout)
	p.Log.Info("video: task timed out; charged as asked", "task", t.ID, "provider", t.Provider, "cost", cost)
	p.logResult(ctx, t, "finish timed out", p.Store.FinishTask(ctx, p.Owner, f, &rec))
}

// fail finishes t as failed with msg, charging nothing (its hold ends
// with it) and recording the failure for operators.
func (p *Poller) fail(ctx context.Context, t store.VideoTask, now time.Time, msg string, status int, code string) {
	if ctx.Err() != nil {
		return
	}
	f := t
	f.State, f.Error, f.FinishedAt, f.UpdatedAt, f.Cost = store.TaskFailed, msg, now, now, 0
	rec := usageRecord(t, now, 0, status, code)
	p.Log.Info("video: task failed", "task", t.ID, "provider", t.Provider, "code", code, "reason", msg)
	p.logResult(ctx, t, "finish failed", p.Store.FinishTask(ctx, p.Owner, f, &rec))
}

// complete downloads a succeeded job's video into the media store, then
// finishes t as completed and charges it, in one store transaction.
func (p *Poller) complete(ctx context.Context, t store.VideoTask, maker provider.VideoMaker, job provider.VideoJob) {
	if job.ID == "" {
		job.ID = t.UpstreamID
	}
	if job.Ref == "" {
		job.Ref = t.UpstreamRef
	}
	key, size, ctype, err := p.download(ctx, maker, job)
	at := p.Now()
	switch {
	case errors.Is(err, imagestore.ErrTooLarge):
		p.fail(ctx, t, at, fmt.Sprintf("The upstream's video was larger than the gateway's limit of %d bytes.", p.MaxBytes), 500, CodeFailed)
		return
	case errors.Is(err, imagestore.ErrNotVideo):
		p.fail(ctx, t, at, msgNotVideo, 500, CodeFailed)
		return
	case errors.Is(err, provider.ErrVideoGone):
		p.fail(ctx, t, at, msgGone, 500, CodeUpstreamLost)
		return
	case err != nil:
		p.retryDone(ctx, t, at, err)
		return
	}
	seconds := t.UpstreamSeconds
	if job.Seconds > 0 && job.Seconds < seconds {
		seconds = job.Seconds // billed for what was received
	}
	cost := p.cost(t, seconds)
	f := t
	f.State, f.Progress, f.FinishedAt, f.UpdatedAt, f.Error = store.TaskCompleted, 100, at, at, ""
	f.Cost, f.ContentKey, f.ContentType, f.ContentSize = cost, key, ctype, size
	if job.Ref != "" {
		f.UpstreamRef = job.Ref
	}
	rec := usageRecord(t, at, cost, 200, "")
	err = p.Store.FinishTask(ctx, p.Owner, f, &rec)
	if err == nil {
		p.Log.Info("video: task completed", "task", t.ID, "provider", t.Provider,
			"seconds", seconds, "cost", cost, "bytes", size)
		return
	}
	// The video is not the task's: drop it, whatever happens next.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.PollTimeout)
	derr := p.Media.DeleteVideo(dctx, key)
	cancel()
	if derr != nil {
		p.Log.Warn("video: deleting an unused stored video failed", "task", t.ID, "key", key, "err", derr)
	}
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		p.logResult(ctx, t, "finish completed", err)
		return
	}
	p.retryDone(ctx, t, at, fmt.Errorf("finish completed: %w", err))
}

// retryDone schedules another try of a succeeded job whose video could not
// be stored or whose completion could not be written: the task is (at
// least) processing, since the upstream has finished.
func (p *Poller) retryDone(ctx context.Context, t store.VideoTask, at time.Time, err error) {
	if t.State == store.TaskPending {
		t.State = store.TaskProcessing
	}
	if t.StartedAt.IsZero() {
		t.StartedAt = at
	}
	p.retry(ctx, t, at, "content", err)
}

// download fetches a succeeded job's video and stores it, within
// DownloadTimeout; the body is always closed.
func (p *Poller) download(ctx context.Context, maker provider.VideoMaker, job provider.VideoJob) (key string, size int64, ctype string, err error) {
	dctx, cancel := context.WithTimeout(ctx, p.DownloadTimeout)
	defer cancel()
	c, err := maker.VideoContent(dctx, job)
	if err != nil {
		return "", 0, "", fmt.Errorf("download: %w", err)
	}
	if c == nil || c.Body == nil {
		return "", 0, "", errors.New("download: the adapter returned no body")
	}
	defer c.Body.Close()
	key, size, ctype, err = p.Media.SaveVideo(dctx, c.Body, p.MaxBytes)
	if err != nil {
		return "", 0, "", fmt.Errorf("store: %w", err)
	}
	return key, size, ctype, nil
}

// cost is what seconds of t cost at its fixed price and ratio, never more
// than what was held for it.
func (p *Poller) cost(t store.VideoTask, seconds int) money.Micros {
	if t.Price == 0 {
		return 0
	}
	c, err := billing.Scale(t.Price, int64(seconds), t.RatioPPM)
	if err != nil {
		p.Log.Error("video: pricing a task failed; charging what was held", "task", t.ID, "err", err)
		c = t.Held
	}
	return max(min(c, t.Held), 0)
}

// usageRecord is the record a task's end leaves for operators (and, with
// a cost, the ledger's charge).
func usageRecord(t store.VideoTask, now time.Time, cost money.Micros, status int, code string) store.UsageRecord {
	return store.UsageRecord{
		RequestID: t.ID, Time: now, AccountID: t.AccountID, KeyID: t.KeyID, Endpoint: Endpoint,
		Model: t.Model, Provider: t.Provider, UpstreamModel: t.UpstreamModel,
		Cost: cost, Latency: max(now.Sub(t.CreatedAt), 0), Status: status, ErrorCode: code,
	}
}

// vendorError is the vendor's failure message, bounded, or a generic one.
// The adapter redacted its own secrets from it; key-shaped tokens are
// redacted here too, whichever adapter made it.
func vendorError(msg string) string {
	var shapes *redact.Redactor // key-shaped tokens only
	msg = strings.TrimSpace(strings.ToValidUTF8(shapes.String(msg), ""))
	if msg == "" {
		return msgVendorFailed
	}
	if len(msg) <= maxVendorError {
		return msg
	}
	cut := maxVendorError
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}
