package background

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/task"
)

// Worker defaults, applied to zero fields when the worker first runs.
const (
	DefaultLease       = 2 * time.Minute
	DefaultPollTimeout = 30 * time.Second
	// purgeEvery is how many Ticks pass between two purges.
	purgeEvery = 60
	// purgeBatch is how many tasks one purge statement deletes.
	purgeBatch = 500
)

// Worker drives open background responses to their end: it claims due
// tasks with a lease (task.Pool), asks the vendor about each (GET
// /responses/{id}), settles those that ended, cancels and charges those
// past their deadline, and purges old final tasks. Several workers
// (replicas) may share one store.
//
// Service and Owner are required; zero fields take the defaults the
// first time Run, Step or Wake is called, and must not change after that.
type Worker struct {
	Service *Service
	// Owner names this process as lease owner (its instance id); it must
	// differ between replicas sharing a store.
	Owner   string
	Workers int // polls at once (default 16)
	// Lease is how long a claimed task stays this worker's (default 2m);
	// it must outlast two PollTimeouts (a timeout's cancel, then its
	// settlement).
	Lease       time.Duration
	PollTimeout time.Duration // per vendor call (default 30s)
	Tick        time.Duration // how often Run claims due tasks (default 1s)

	once     sync.Once
	setupErr error
	pool     *task.Pool[store.ResponseTask]
}

// setup applies the defaults once and checks the required fields.
func (w *Worker) setup() error {
	w.once.Do(func() {
		if w.Service == nil || w.Service.Store == nil || w.Service.Responders == nil || w.Owner == "" {
			w.setupErr = errors.New("background: worker without Service (with Store and Responders) or Owner")
			return
		}
		s := w.Service
		w.Lease = task.OrDefault(w.Lease, DefaultLease)
		w.PollTimeout = task.OrDefault(w.PollTimeout, DefaultPollTimeout)
		w.pool = &task.Pool[store.ResponseTask]{Name: "background", Work: w.poll, Purge: w.Purge,
			Claim: func(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]store.ResponseTask, error) {
				return s.Store.ClaimResponseTasks(ctx, w.Owner, now, lease, limit)
			},
			Lease: w.Lease, Workers: w.Workers, Tick: w.Tick, Now: s.now, Log: s.log(), PurgeEvery: purgeEvery}
	})
	return w.setupErr
}

// Wake makes Run claim due tasks now rather than at the next Tick. It
// never blocks.
func (w *Worker) Wake() {
	if w.setup() == nil {
		w.pool.Wake()
	}
}

// Run polls due tasks every Tick or on Wake and purges old ones until ctx
// ends; see task.Pool.Run.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.setup(); err != nil {
		return err
	}
	return w.pool.Run(ctx)
}

// Step polls every task due now once and returns when all those polls
// have; see task.Pool.Step.
func (w *Worker) Step(ctx context.Context) (int, error) {
	if err := w.setup(); err != nil {
		return 0, err
	}
	return w.pool.Step(ctx)
}

// Purge deletes the final tasks created more than TTL ago and reports how
// many. Open tasks are never purged (their deadline ends them first).
func (w *Worker) Purge(ctx context.Context) (int, error) {
	if err := w.setup(); err != nil {
		return 0, err
	}
	n := 0
	for {
		got, err := w.Service.Store.PurgeResponseTasks(ctx, w.Service.now().Add(-TTL), purgeBatch)
		n += got
		if err != nil {
			return n, fmt.Errorf("background: purge tasks: %w", err)
		}
		if got < purgeBatch {
			return n, nil
		}
	}
}

// poll looks at one claimed task once and stores what it learned. Errors
// are logged: one task's trouble never stops the others.
func (w *Worker) poll(ctx context.Context, t store.ResponseTask) {
	s := w.Service
	rs, ok := s.Responders(t.Provider)
	if !s.now().Before(t.Deadline) {
		w.timeout(ctx, t, rs, ok)
		return
	}
	if !ok {
		w.retry(ctx, t, t.Status, fmt.Errorf("provider %q is no longer configured", t.Provider))
		return
	}
	pctx, cancel := context.WithTimeout(ctx, w.PollTimeout)
	res, err := rs.GetResponse(pctx, &provider.ResponseGet{ID: t.ID, Public: t.Model, Upstream: t.UpstreamModel})
	cancel()
	var status store.ResponseStatus
	if err == nil {
		status = Status(res.Body)
	}
	switch {
	case err != nil && apierr.From(err).Status == http.StatusNotFound:
		w.lost(ctx, t)
	case err != nil:
		w.retry(ctx, t, t.Status, err)
	case status.Final():
		s.settle(ctx, w.Owner, t, status, res)
	case status.Valid():
		if status.Rank() < t.Status.Rank() {
			status = t.Status // a vendor that reports queued again does not move the task back
		}
		w.retry(ctx, t, status, nil)
	default:
		w.retry(ctx, t, t.Status, provider.BadResponse(t.Provider, fmt.Errorf("unknown response status in %.200s", res.Body)))
	}
}

// retry stores that t is still open in status and schedules its next
// poll; err, when not nil, is why this poll learned nothing (logged). A
// shutdown is no failure: the lease expires and another poll takes over.
func (w *Worker) retry(ctx context.Context, t store.ResponseTask, status store.ResponseStatus, err error) {
	if ctx.Err() != nil {
		return
	}
	s := w.Service
	at := s.now()
	u := t
	u.Status, u.Polls, u.UpdatedAt = status, t.Polls+1, at
	u.NextPollAt = s.schedule().Next(t.ID, u.Polls, at, t.Deadline)
	if err != nil {
		s.log().Warn("background: poll failed; will retry", "response_id", t.ID, "provider", t.Provider,
			"polls", u.Polls, "next", u.NextPollAt, "err", err)
	}
	switch err := s.Store.UpdateResponseTask(ctx, w.Owner, u); {
	case err == nil, ctx.Err() != nil:
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
		s.log().Info("background: task changed meanwhile; skipped", "response_id", t.ID, "err", err)
	default:
		s.log().Error("background: storing a poll's result failed", "response_id", t.ID, "err", err)
	}
}

// timeout ends a task past its deadline: the response is cancelled
// upstream where the vendor can, and the task is charged its whole
// reservation, the most the request could cost, whatever the cancel
// answered: the gateway could not see the response end in time, and the
// vendor may have run it to the end (the usage the cancel reports, if
// any, is recorded with it).
func (w *Worker) timeout(ctx context.Context, t store.ResponseTask, rs provider.Responder, ok bool) {
	s := w.Service
	e := ending{status: store.ResponseCancelled, cost: t.Held, code: http.StatusGatewayTimeout, errCode: CodeTimeout,
		why: fmt.Sprintf("The response did not finish within %s; it was cancelled and charged its reservation.", task.DurationText(t.Deadline.Sub(t.CreatedAt)))}
	if cn, can := rs.(provider.ResponseCanceller); ok && can {
		cctx, cancel := context.WithTimeout(ctx, w.PollTimeout)
		res, err := cn.CancelResponse(cctx, &provider.ResponseGet{ID: t.ID, Public: t.Model, Upstream: t.UpstreamModel})
		cancel()
		switch {
		case err != nil:
			s.log().Warn("background: cancelling a timed-out response upstream failed", "response_id", t.ID, "provider", t.Provider, "err", err)
		case res.HasUsage:
			e.usage, e.known = res.Usage, true
		}
	}
	if ctx.Err() != nil {
		return
	}
	s.finish(ctx, w.Owner, t, e)
}

// lost ends a task whose vendor no longer knows the response (404 for its
// own id): the vendor had the request, so its prompt (as the gateway
// counted it) is charged.
func (w *Worker) lost(ctx context.Context, t store.ResponseTask) {
	if ctx.Err() != nil {
		return
	}
	s := w.Service
	u := provider.Usage{PromptTokens: t.PromptEstimate, TotalTokens: t.PromptEstimate}
	s.finish(ctx, w.Owner, t, ending{status: store.ResponseFailed, why: "The upstream lost the response.",
		cost: s.cost(t, u, nil), usage: u, estimated: true, code: http.StatusBadGateway, errCode: CodeUpstreamLost})
}
