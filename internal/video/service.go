package video

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/store"
)

// DefaultTimeout is how long an open task may run before it is cancelled
// and failed (the spec leaves the time open).
const DefaultTimeout = 30 * time.Minute

// ErrTaskNotFound answers reads of a task that does not exist, belongs to
// another account, or has expired (24 hours after creation): the three
// are told apart by nobody.
var ErrTaskNotFound = errors.New("video: no such task")

// ErrTaskRunning refuses to delete an open task whose vendor job cannot be
// cancelled: the vendor has accepted it and bills it whatever the gateway
// does, so the task runs to its end (and is charged then) and can be
// deleted once it is completed or failed, as OpenAI's own Videos API
// deletes only completed or failed videos.
var ErrTaskRunning = errors.New("video: the task is running and its vendor cannot cancel it")

// Service is what front doors call: submit a task, read, list and delete
// an account's tasks. Fields without a comment are required.
type Service struct {
	Store   Store
	Makers  Makers          // finds a task's adapter to cancel it
	Billing *charge.Billing // nil: nothing is charged (tests of other parts)
	Media   Media
	Log     *slog.Logger     // nil: discarded
	Now     func() time.Time // nil: time.Now
	// Timeout is how long an open task may run (0: DefaultTimeout).
	Timeout time.Duration
	// FirstPoll is when a new task is first polled (nil: at once).
	FirstPoll func(store.VideoTask) time.Time
	// Wake tells the poller a task was submitted (nil: nothing).
	Wake func()
}

// Submission is a validated request for a video, routed to a deployment.
type Submission struct {
	RequestID string
	Payer     billing.Payer
	Group     string
	Provider  string // the deployment's provider name
	Maker     provider.VideoMaker
	Request   provider.VideoRequest // Seconds are the upstream's
	Seconds   int                   // what the client asked for
	// PerSecond is the list price of a second of this size (the catalog's
	// VideoPriceFor); Param names what the client can lower when the
	// balance cannot cover it ("duration" or "seconds").
	PerSecond money.Micros
	Param     string
	// LoadImage, when set, produces Request.Image once the reservation is
	// held (it downloads an image the client named by URL), so a request
	// the payer cannot pay for makes the gateway download nothing.
	LoadImage func(context.Context) (*provider.InputImage, error)
}

// Submit reserves the most the video can cost, starts the upstream job and
// stores the task; the reservation then lives in the task (Held) until the
// poller settles or releases it. Errors: *charge.NotPricedError,
// *charge.RefusedError (nothing is downloaded or sent upstream), LoadImage's
// or the adapter's error (the reservation is released), or a store failure
// (the upstream job is cancelled where the vendor can, and the reservation
// released).
func (s *Service) Submit(ctx context.Context, sub Submission) (store.VideoTask, error) {
	req := sub.Request
	c, err := s.Billing.Start(sub.Payer, sub.Group, req.PublicModel, req.UpstreamModel, func(mp billing.ModelPrice) bool {
		return sub.PerSecond > 0
	})
	if err != nil {
		return store.VideoTask{}, err
	}
	price := sub.PerSecond
	if c.Free() {
		price = 0
	}
	amount, err := c.FlatCost(price, int64(req.Seconds))
	if err != nil {
		return store.VideoTask{}, charge.Refused(billing.ErrOverflow, amount, sub.Param)
	}
	if err := c.Reserve(ctx, amount, sub.Param); err != nil {
		return store.VideoTask{}, err
	}
	if sub.LoadImage != nil {
		img, err := sub.LoadImage(ctx)
		if err != nil {
			c.Release()
			return store.VideoTask{}, err
		}
		req.Image = img
	}
	job, err := sub.Maker.StartVideo(ctx, &req)
	if err != nil {
		c.Release()
		return store.VideoTask{}, err
	}
	now := s.now()
	ratio := int64(0)
	if c != nil {
		ratio = c.Ratio
	}
	t := store.VideoTask{
		ID: NewID(), AccountID: sub.Payer.AccountID, KeyID: sub.Payer.KeyID, RequestID: sub.RequestID,
		Model: req.PublicModel, Provider: sub.Provider, UpstreamModel: req.UpstreamModel, UpstreamID: job.ID,
		Prompt: req.Prompt, Size: req.Size, Seconds: sub.Seconds, UpstreamSeconds: req.Seconds,
		State: store.TaskPending, Progress: job.Progress,
		Price: price, RatioPPM: ratio, Held: c.Held(),
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(TTL), Deadline: now.Add(s.timeout()), NextPollAt: now,
	}
	if s.FirstPoll != nil {
		t.NextPollAt = s.FirstPoll(t)
	}
	if err := s.Store.CreateTask(ctx, t); err != nil {
		s.abandon(sub, job.ID)
		c.Release()
		return store.VideoTask{}, fmt.Errorf("video: store task: %w", err)
	}
	c.Persist()
	if s.Wake != nil {
		s.Wake()
	}
	return t, nil
}

// abandon cancels an upstream job the gateway could not record, where the
// vendor can; otherwise it is only logged (the operator's vendor account
// may be charged for it, the client is not).
func (s *Service) abandon(sub Submission, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cn, ok := sub.Maker.(provider.VideoCanceller); ok {
		if err := cn.CancelVideo(ctx, sub.Request.UpstreamModel, id); err == nil {
			return
		}
	}
	s.log().Error("video: a started upstream job could not be recorded; it is abandoned",
		"provider", sub.Provider, "upstream_id", id, "request_id", sub.RequestID)
}

// Get returns an account's task; ErrTaskNotFound for a malformed id, one
// of another account, or one past its expiry.
func (s *Service) Get(ctx context.Context, accountID, id string) (store.VideoTask, error) {
	return s.lookup(ctx, id, func(t store.VideoTask) bool { return t.AccountID == accountID })
}

// lookup reads an unexpired task that ok accepts; ErrTaskNotFound for a
// malformed id and any other task.
func (s *Service) lookup(ctx context.Context, id string, ok func(store.VideoTask) bool) (store.VideoTask, error) {
	if !ValidID(id) {
		return store.VideoTask{}, ErrTaskNotFound
	}
	t, err := s.Store.TaskByID(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return t, ErrTaskNotFound
	case err != nil:
		return t, fmt.Errorf("video: read task: %w", err)
	case !ok(t) || !s.now().Before(t.ExpiresAt):
		return store.VideoTask{}, ErrTaskNotFound
	}
	return t, nil
}

// List returns a page of an account's unexpired tasks and whether more
// follow. after must be one of the account's tasks (else ErrTaskNotFound).
func (s *Service) List(ctx context.Context, accountID, after string, limit int, asc bool) ([]store.VideoTask, bool, error) {
	if after != "" && !ValidID(after) {
		return nil, false, ErrTaskNotFound
	}
	ts, err := s.Store.ListTasks(ctx, store.TaskPage{AccountID: accountID, After: after, Limit: limit + 1, Asc: asc,
		Since: s.now().Add(-TTL)})
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, ErrTaskNotFound
	}
	if err != nil {
		return nil, false, fmt.Errorf("video: list tasks: %w", err)
	}
	more := len(ts) > limit
	if more {
		ts = ts[:limit]
	}
	return ts, more, nil
}

// Delete removes an account's task and its video. An open task is first
// cancelled upstream and failed, releasing its reservation (the client is
// charged nothing), but only when the vendor confirms the cancel: a job
// its vendor cannot cancel (or whose cancel failed) is still the vendor's
// and billed by it, so Delete refuses it with ErrTaskRunning and the task
// goes on to be charged when it completes.
func (s *Service) Delete(ctx context.Context, accountID, id string) error {
	t, err := s.Get(ctx, accountID, id)
	if err != nil {
		return err
	}
	if t.Open() {
		m, ok := s.Makers(t.Provider)
		cn, can := m.(provider.VideoCanceller)
		if !ok || !can {
			return ErrTaskRunning
		}
		if err := cn.CancelVideo(ctx, t.UpstreamModel, t.UpstreamID); err != nil {
			s.log().Warn("video: cancelling a deleted task upstream failed; the task runs on", "task", t.ID, "err", err)
			return ErrTaskRunning
		}
		now := s.now()
		t.State, t.Error, t.FinishedAt, t.UpdatedAt, t.Cost = store.TaskFailed, "The task was deleted by the client before it finished.", now, now, 0
		rec := &store.UsageRecord{RequestID: t.ID, Time: now, AccountID: t.AccountID, KeyID: t.KeyID, Endpoint: "videos",
			Model: t.Model, Provider: t.Provider, UpstreamModel: t.UpstreamModel, Latency: now.Sub(t.CreatedAt),
			Status: 499, ErrorCode: "video_cancelled"}
		if err := s.Store.FinishTask(ctx, "", t, rec); err != nil && !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("video: cancel task: %w", err)
		}
		if t, err = s.Store.TaskByID(ctx, id); err != nil {
			return fmt.Errorf("video: read task: %w", err)
		}
	}
	if t.ContentKey != "" {
		if err := s.Media.DeleteVideo(ctx, t.ContentKey); err != nil {
			return fmt.Errorf("video: delete stored video: %w", err)
		}
	}
	if err := s.Store.DeleteTask(ctx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("video: delete task: %w", err)
	}
	return nil
}

// Completed returns a completed, unexpired task by id for a signed
// download link (the link's signature stands for the account);
// ErrTaskNotFound otherwise.
func (s *Service) Completed(ctx context.Context, id string) (store.VideoTask, error) {
	return s.lookup(ctx, id, func(t store.VideoTask) bool { return t.State == store.TaskCompleted && t.ContentKey != "" })
}

// NewID returns a new task id: "video_" and 32 random lowercase hex digits.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return "video_" + hex.EncodeToString(b[:])
}

// ValidID reports whether id has the shape NewID makes, so nothing else
// (path tricks, 10 KB ids) reaches the store.
func ValidID(id string) bool {
	const prefix = "video_"
	if len(id) != len(prefix)+32 || id[:len(prefix)] != prefix {
		return false
	}
	for _, c := range id[len(prefix):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}
