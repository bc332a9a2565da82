package store

import (
	"context"
	"time"

	"github.com/modelgate/modelgate/internal/money"
)

// ResponseStatus is a background response's status as its vendor reports
// it (OpenAI's Response.status): queued → in_progress → completed |
// failed | incomplete | cancelled, forward only; the last four are final.
type ResponseStatus string

// The statuses of a background response.
const (
	ResponseQueued     ResponseStatus = "queued"
	ResponseInProgress ResponseStatus = "in_progress"
	ResponseCompleted  ResponseStatus = "completed"
	ResponseFailed     ResponseStatus = "failed"
	ResponseIncomplete ResponseStatus = "incomplete"
	ResponseCancelled  ResponseStatus = "cancelled"
)

// Rank orders the statuses: a task only ever moves to a higher rank, and
// the four final statuses share the highest.
func (s ResponseStatus) Rank() int {
	switch s {
	case ResponseQueued:
		return 1
	case ResponseInProgress:
		return 2
	case ResponseCompleted, ResponseFailed, ResponseIncomplete, ResponseCancelled:
		return 3
	}
	return 0
}

// Final reports whether the vendor is done with the response.
func (s ResponseStatus) Final() bool { return s.Rank() == 3 }

// Valid reports whether s is one of the six statuses.
func (s ResponseStatus) Valid() bool { return s.Rank() > 0 }

// ResponseTask is a background Responses API request (background: true)
// passed through to a vendor: the vendor runs it after answering
// "queued", so the gateway keeps its reservation here until a poll, a
// client's GET or cancel sees it end, and settles it from the vendor's
// usage then, once.
type ResponseTask struct {
	ID        string // the vendor's response id ("resp_…"): the client's handle
	AccountID string
	KeyID     string
	RequestID string // the creating request's id, for the log

	Model         string // public model id the client asked for
	Provider      string // provider name from the config
	UpstreamModel string

	Status ResponseStatus
	// Error says why the gateway ended the task itself (its timeout, a
	// vendor that lost the response); "" when the vendor ended it.
	Error string

	// InputPrice, CachedInputPrice and OutputPrice (per million tokens)
	// and RatioPPM are fixed at submission, so a config change does not
	// reprice a task in flight. Held is the reservation, counted against
	// the account's and the key's Held while the task is open; Cost is
	// what the settlement charged. PromptEstimate is the gateway's count
	// of the request's input tokens, charged when the vendor reports no
	// usage.
	InputPrice       money.Micros
	CachedInputPrice money.Micros
	OutputPrice      money.Micros
	RatioPPM         int64
	Held             money.Micros
	Cost             money.Micros
	PromptEstimate   int64
	// Terms are what the request was admitted with beyond its token
	// prices (its service tier, the prices of its built-in tools: a
	// surcharge.Terms in JSON), so its settlement prices what the answer
	// used as the request would have; "" when it asked for none.
	Terms string

	CreatedAt  time.Time
	FinishedAt time.Time // final since; zero while open
	Deadline   time.Time // after it an open task is cancelled upstream and charged its reservation
	NextPollAt time.Time // when the worker should look at the task next
	Polls      int       // polls so far, for the backoff
	LeaseOwner string    // the worker instance holding the task; "" none
	LeaseUntil time.Time // the lease ends then; zero when none
	UpdatedAt  time.Time
}

// Open reports whether the vendor may still be working on the response.
func (t ResponseTask) Open() bool { return !t.Status.Final() }

// ResponseTasks stores background responses. Every status change goes
// through UpdateResponseTask or FinishResponseTask, which refuse backward
// moves and changes to final tasks, so a task is settled exactly once
// whichever replica, worker or client request sees it end first.
type ResponseTasks interface {
	// CreateResponseTask inserts t (Status queued or in_progress);
	// ErrConflict on a taken ID, ErrNotFound when its account does not
	// exist.
	CreateResponseTask(ctx context.Context, t ResponseTask) error
	// ResponseTaskByID returns a task; ErrNotFound when there is none.
	ResponseTaskByID(ctx context.Context, id string) (ResponseTask, error)
	// ClaimResponseTasks leases up to limit open tasks whose NextPollAt is
	// at or before now and whose lease is free or ended, to owner until
	// now+lease, atomically, earliest NextPollAt first (as ClaimTasks).
	ClaimResponseTasks(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]ResponseTask, error)
	// UpdateResponseTask stores a poll's result for an open task that
	// owner leases: Status (same or forward, not final), NextPollAt,
	// Polls, UpdatedAt; it ends the lease. ErrConflict when the task is
	// final, the move is backward, or owner does not hold the lease.
	UpdateResponseTask(ctx context.Context, owner string, t ResponseTask) error
	// FinishResponseTask moves an open task to a final Status with
	// FinishedAt, Error and Cost, ends the lease, and, when rec is not
	// nil, inserts rec as InsertUsage does (posting its Cost to the
	// ledger), all in one transaction: the charge and the end of the hold
	// are never seen apart. owner "" finishes whoever leases it (a
	// client's GET or cancel saw it end); otherwise owner must hold the
	// lease. ErrConflict when the task is already final (nothing is
	// charged then) or the lease is another's.
	FinishResponseTask(ctx context.Context, owner string, t ResponseTask, rec *UsageRecord) error
	// PurgeResponseTasks deletes up to limit final tasks created before
	// before and reports how many it deleted.
	PurgeResponseTasks(ctx context.Context, before time.Time, limit int) (int, error)
}
