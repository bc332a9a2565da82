package store

import (
	"context"
	"time"

	"github.com/modelgate/modelgate/internal/money"
)

// TaskState is where a video task is in its life: pending → processing →
// completed | failed, forward only; completed and failed are final.
type TaskState string

// The states of a video task.
const (
	TaskPending    TaskState = "pending"    // accepted by the upstream, not started
	TaskProcessing TaskState = "processing" // being generated
	TaskCompleted  TaskState = "completed"  // the video is ready (ContentKey)
	TaskFailed     TaskState = "failed"     // generation failed, timed out or was cancelled (Error)
)

// Rank orders the states: a task only ever moves to a higher rank, and the
// two final states share the highest.
func (s TaskState) Rank() int {
	switch s {
	case TaskPending:
		return 1
	case TaskProcessing:
		return 2
	case TaskCompleted, TaskFailed:
		return 3
	}
	return 0
}

// Final reports whether s is completed or failed.
func (s TaskState) Final() bool { return s == TaskCompleted || s == TaskFailed }

// Valid reports whether s is one of the four states.
func (s TaskState) Valid() bool { return s.Rank() > 0 }

// VideoTask is an asynchronous video generation: what the client asked,
// where the upstream job is, what is held and charged, and who polls it.
type VideoTask struct {
	ID        string // "video_" + 32 lowercase hex digits; the client's handle
	AccountID string
	KeyID     string
	RequestID string // the submitting request's id, for the log

	Model         string // public model id the client asked for
	Provider      string // provider name from the config
	UpstreamModel string
	UpstreamID    string // the vendor's job id (an operation name for Veo)
	// UpstreamRef is what the adapter needs to download the result when
	// the job id is not enough (Veo's file URI); "" otherwise.
	UpstreamRef string

	Prompt  string
	Size    string // "WxH" as generated
	Seconds int    // what the client asked for (spec duration or OpenAI seconds)
	// UpstreamSeconds is what the upstream was asked for and what is
	// billed (Sora makes 4, 8 or 12 seconds when asked for 5, 10, 15).
	UpstreamSeconds int

	State    TaskState
	Progress int    // 0..100, as the vendor reports
	Error    string // why it failed (client-facing text); "" otherwise

	// Price is the list price per second and RatioPPM the group's ratio,
	// both fixed at submission so a config change does not reprice a task
	// in flight. Held is the reservation (Price × UpstreamSeconds × ratio),
	// counted against the account's and the key's Held while the task is
	// open; Cost is what the completed task was charged (0 otherwise).
	Price    money.Micros
	RatioPPM int64
	Held     money.Micros
	Cost     money.Micros

	// ContentKey names the stored copy of the video in the media store;
	// ContentType and ContentSize describe it. Set when completed.
	ContentKey  string
	ContentType string
	ContentSize int64

	CreatedAt  time.Time // entered pending
	StartedAt  time.Time // entered processing; zero if it never did
	FinishedAt time.Time // entered completed or failed; zero while open
	ExpiresAt  time.Time // CreatedAt + 24h: after it the task is gone for the client and purged
	Deadline   time.Time // after it an open task is cancelled and failed as timed out
	NextPollAt time.Time // when the poller should look at the task next
	Polls      int       // polls so far, for the backoff
	LeaseOwner string    // the poller instance holding the task; "" none
	LeaseUntil time.Time // the lease ends then; zero when none
	UpdatedAt  time.Time
}

// Open reports whether the task is still pending or processing.
func (t VideoTask) Open() bool { return !t.State.Final() }

// TaskPage selects one account's tasks for a listing.
type TaskPage struct {
	AccountID string
	After     string    // a task id: list the tasks after it in Order; "" from the start
	Limit     int       // positive (the API asks for one more than it shows, to know if more follow)
	Asc       bool      // oldest first; default newest first
	Since     time.Time // only tasks created at or after it (the 24-hour window)
}

// Tasks stores video tasks. Every state change goes through UpdateTask or
// FinishTask, which refuse backward moves and changes to final tasks, so
// the state machine holds whichever replica writes.
type Tasks interface {
	// CreateTask inserts t (State pending); ErrConflict on a taken ID.
	CreateTask(ctx context.Context, t VideoTask) error
	// TaskByID returns a task; ErrNotFound when there is none.
	TaskByID(ctx context.Context, id string) (VideoTask, error)
	// ListTasks returns a page of an account's tasks by creation time.
	// ErrNotFound when After names no task of the account.
	ListTasks(ctx context.Context, p TaskPage) ([]VideoTask, error)
	// ClaimTasks leases up to limit open tasks whose NextPollAt is at or
	// before now and whose lease is free or ended, to owner until now+lease,
	// atomically: two callers never get the same task while a lease lasts.
	// Earliest NextPollAt first.
	ClaimTasks(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]VideoTask, error)
	// UpdateTask stores a poll's result for an open task that owner leases:
	// State (same or forward, not final), Progress, UpstreamRef, StartedAt,
	// NextPollAt, Polls, UpdatedAt; it ends the lease. ErrConflict when the
	// task is final, the move is backward, or owner does not hold the lease
	// (it ended and another took it).
	UpdateTask(ctx context.Context, owner string, t VideoTask) error
	// FinishTask moves an open task to a final State with FinishedAt,
	// Progress, Error, Cost and the Content fields, ends the lease, and, when
	// rec is not nil, inserts rec as InsertUsage does (posting its Cost to
	// the ledger), all in one transaction: the charge and the end of the
	// hold are never seen apart. owner "" finishes whoever leases it (a
	// client's cancel); otherwise owner must hold the lease. ErrConflict
	// when the task is already final (nothing is charged then) or the lease
	// is another's.
	FinishTask(ctx context.Context, owner string, t VideoTask, rec *UsageRecord) error
	// ExpiredTasks returns up to limit final tasks created before before,
	// oldest first (their stored videos are deleted, then DeleteTask).
	ExpiredTasks(ctx context.Context, before time.Time, limit int) ([]VideoTask, error)
	// DeleteTask removes a final task; ErrNotFound when there is none,
	// ErrConflict when it is open.
	DeleteTask(ctx context.Context, id string) error
}
