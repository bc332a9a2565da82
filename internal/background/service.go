// Package background serves background Responses API requests
// (background: true) passed through to a vendor that runs them itself:
// the vendor answers "queued" at once, with no usage, and finishes the
// response later. Each one is a durable task (store.ResponseTasks) that
// holds the request's reservation, so restarts and other replicas see the
// hold; the first to see the response end, whether a Worker's poll or a
// client's GET or cancel (Service.Observe), settles it from the vendor's
// usage in one store transaction, exactly once. A response still open at
// its deadline is cancelled upstream and charged its reservation.
//
// The leased pool the Worker runs on is internal/task's, shared with video
// generation.
package background

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/task"
)

// Defaults of a Service.
const (
	// DefaultTimeout is how long a response may run before it is
	// cancelled and charged its reservation.
	DefaultTimeout = time.Hour
	DefaultPollMin = 5 * time.Second
	DefaultPollMax = 30 * time.Second
)

// TTL is how long a task's row is kept after its creation; final rows
// older than that are purged (the vendor keeps the response itself).
const TTL = 24 * time.Hour

// Store is the part of store.Store the package uses.
type Store interface {
	store.ResponseTasks
}

// Responders finds the Responses adapter of a configured provider by name.
type Responders func(provider string) (provider.Responder, bool)

// Service is what the front door calls: submit a background request, and
// report what a GET or a cancel saw. Store and Responders are required.
type Service struct {
	Store      Store
	Responders Responders
	// Billing finds a task's tokenizer when the vendor reports no usage
	// (nil: output is not counted then).
	Billing *charge.Billing
	Log     *slog.Logger     // nil: discarded
	Now     func() time.Time // nil: time.Now
	// Timeout is how long a response may stay open (0: DefaultTimeout).
	Timeout time.Duration
	// Schedule spaces the polls of a task (zero: DefaultPollMin growing
	// to DefaultPollMax).
	Schedule task.Backoff
	// Wake tells the worker a task was submitted (nil: nothing).
	Wake func()
	// OnSettled is called after a task's settlement has committed, once
	// per task, with the usage it was charged for (the vendor's, or the
	// gateway's count when the vendor reported none). It is not called
	// when the charge is the reservation because the usage is unknown (a
	// response that timed out and whose cancel reported none). nil:
	// nothing.
	OnSettled func(ctx context.Context, responseID string, u provider.Usage)
}

// Submission is a validated background request, reserved and routed.
type Submission struct {
	RequestID string
	Payer     billing.Payer
	Provider  string // the deployment's provider name
	Responder provider.Responder
	Request   *provider.ResponsesRequest
	// Charge holds the request's reservation (nil: billing off). Submit
	// hands it to the task, or releases it when the request fails.
	Charge *charge.Charge
	// Terms are the request's surcharge terms (surcharge.Plan.Marshal;
	// "" none), kept with the task for its settlement.
	Terms string
}

// Submit sends the request to the vendor and stores the task that holds
// its reservation until the response ends; it returns the vendor's answer
// (normally a queued Response object). A vendor error releases the
// reservation and is returned as is; an answer without a usable response
// id is a bad response (released: there is nothing to follow); a store
// failure cancels the response upstream where the vendor can and releases
// the reservation. A response the vendor reports finished at once (a
// vendor that ignores background) is settled at once; one in a status the
// gateway does not know is followed as queued. Once the vendor has
// accepted the request, recording it no longer depends on the client:
// the store writes outlive ctx's cancellation.
func (s *Service) Submit(ctx context.Context, sub Submission) (*provider.ResponsesResult, error) {
	c := sub.Charge
	res, err := sub.Responder.Respond(ctx, sub.Request)
	if err != nil {
		c.Release()
		return nil, err
	}
	id, status := ResponseID(res.Body), Status(res.Body)
	if !ValidID(id) {
		c.Release()
		return nil, provider.BadResponse(sub.Provider, fmt.Errorf("background response without a valid id (%.64q)", id))
	}
	if !status.Valid() {
		s.log().Warn("background: the vendor answered with an unknown status; following the response as queued",
			"provider", sub.Provider, "response_id", id)
	}
	ctx = context.WithoutCancel(ctx)
	now := s.now()
	t := store.ResponseTask{
		ID: id, AccountID: sub.Payer.AccountID, KeyID: sub.Payer.KeyID, RequestID: sub.RequestID,
		Model: sub.Request.PublicModel, Provider: sub.Provider, UpstreamModel: sub.Request.UpstreamModel,
		Status: store.ResponseQueued, Held: c.Held(),
		CreatedAt: now, Deadline: now.Add(s.timeout()), UpdatedAt: now,
	}
	if status == store.ResponseInProgress {
		t.Status = status
	}
	if c != nil && !c.Free() {
		p := c.Price.Price
		t.InputPrice, t.CachedInputPrice, t.OutputPrice, t.RatioPPM = p.Input, p.CachedInput, p.Output, c.Ratio
		t.PromptEstimate = int64(c.Tok.Count(sub.Request.Body))
		t.Terms = sub.Terms
	}
	t.NextPollAt = s.schedule().Next(t.ID, 0, now, t.Deadline)
	if err := s.Store.CreateResponseTask(ctx, t); err != nil {
		s.abandon(sub, t)
		c.Release()
		return nil, fmt.Errorf("background: store task: %w", err)
	}
	c.Persist()
	if status.Final() {
		s.settle(ctx, "", t, status, res)
	} else if s.Wake != nil {
		s.Wake()
	}
	return res, nil
}

// abandon cancels a started response the gateway could not record, where
// the vendor can; otherwise it is only logged (the operator's vendor
// account may be charged for it, the client is not).
func (s *Service) abandon(sub Submission, t store.ResponseTask) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cn, ok := sub.Responder.(provider.ResponseCanceller); ok {
		if _, err := cn.CancelResponse(ctx, &provider.ResponseGet{ID: t.ID, Public: t.Model, Upstream: t.UpstreamModel}); err == nil {
			return
		}
	}
	s.log().Error("background: a started response could not be recorded; it is abandoned",
		"provider", sub.Provider, "response_id", t.ID, "request_id", sub.RequestID)
}

// Task returns the task of the response id; false when there is none (a
// response that was not created in the background, a purged task) or the
// store failed (logged).
func (s *Service) Task(ctx context.Context, id string) (store.ResponseTask, bool) {
	t, err := s.Store.ResponseTaskByID(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return t, false
	case err != nil:
		s.log().Error("background: read a response's task", "response_id", id, "err", err)
		return t, false
	}
	return t, true
}

// Observe is told the Response object a client's GET or cancel of id got
// from the vendor: when it shows the response ended and its task is still
// open, the task is settled from it, unless a poll or another request
// settled it first. Failures are logged: the client's answer goes out
// either way, and the worker settles the task later.
func (s *Service) Observe(ctx context.Context, id string, res *provider.ResponsesResult) {
	status := Status(res.Body)
	if !status.Final() {
		return
	}
	if v, ok := jsonx.Field(res.Body, "background"); ok && string(v) == "false" {
		return // the vendor says it is no background response: there is no task to look up
	}
	t, ok := s.Task(ctx, id)
	if !ok || !t.Open() {
		return
	}
	s.settle(context.WithoutCancel(ctx), "", t, status, res)
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) timeout() time.Duration { return task.OrDefault(s.Timeout, DefaultTimeout) }

func (s *Service) schedule() task.Backoff {
	b := s.Schedule
	b.Start = task.OrDefault(b.Start, DefaultPollMin)
	b.Ceil = task.OrDefault(b.Ceil, DefaultPollMax)
	return b
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}
