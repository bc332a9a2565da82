package background

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/store"
)

const respID = "resp_68c1f0a5b6e48190a3a1c5a59b2e3f0d0a6b1c2d3e4f5a6b"

// failingCreate is a store whose CreateResponseTask fails.
type failingCreate struct{ Store }

func (failingCreate) CreateResponseTask(context.Context, store.ResponseTask) error {
	return errors.New("disk full")
}

// TestSubmitHandsTheHoldToTheTask: a queued answer stores a task holding
// the reservation (in the store now, no longer in memory), with the
// prices, the prompt count, the deadline and the first poll, and wakes
// the worker; nothing is charged yet.
func TestSubmitHandsTheHoldToTheTask(t *testing.T) {
	e := newEnv(t)
	const hold = 900_000
	res, err := e.submit(t, hold, result(respID, "queued", nil, ""))
	if err != nil || ResponseID(res.Body) != respID {
		t.Fatalf("Submit: %v", err)
	}
	got := e.task(t, respID)
	if got.Status != store.ResponseQueued || got.Held != hold || got.InputPrice != testPrice.Input ||
		got.CachedInputPrice != testPrice.CachedInput || got.OutputPrice != testPrice.Output || got.RatioPPM != money.PPM ||
		got.PromptEstimate < 10 || got.Model != "o3" || got.UpstreamModel != "o3-2025-04-16" || got.Provider != "openai" ||
		got.AccountID != testAccount || got.KeyID != testKey || got.RequestID != "req_1" {
		t.Fatalf("task %+v", got)
	}
	if !got.Deadline.Equal(t0.Add(time.Hour)) || got.NextPollAt.Before(t0.Add(4500*time.Millisecond)) || got.NextPollAt.After(t0.Add(5500*time.Millisecond)) {
		t.Errorf("deadline %v, first poll %v", got.Deadline, got.NextPollAt)
	}
	if a := e.account(t); a.Held != hold || a.Balance != testBalance {
		t.Errorf("account held %v balance %v", a.Held, a.Balance)
	}
	if r := e.reserved(); r != 0 {
		t.Errorf("%v still reserved in memory: the hold would count twice", r)
	}
	if e.wakes != 1 || len(e.settled) != 0 {
		t.Errorf("wakes %d, settled %v", e.wakes, e.settled)
	}
}

// TestSubmitFailures: whatever fails, the reservation is released and no
// task is left; a response the store could not record is cancelled
// upstream.
func TestSubmitFailures(t *testing.T) {
	for _, tc := range []struct {
		name       string
		respond    func() (*provider.ResponsesResult, error)
		failStore  bool
		wantStatus int
		cancelled  bool
	}{
		{"vendor error", func() (*provider.ResponsesResult, error) {
			return nil, &apierr.Error{Status: http.StatusTooManyRequests, Code: "rate_limit_exceeded"}
		}, false, http.StatusTooManyRequests, false},
		{"no id", func() (*provider.ResponsesResult, error) { return result("", "queued", nil, ""), nil }, false, http.StatusBadGateway, false},
		{"bad id", func() (*provider.ResponsesResult, error) { return result("resp/../x", "queued", nil, ""), nil }, false, http.StatusBadGateway, false},
		{"store down", func() (*provider.ResponsesResult, error) { return result(respID, "queued", nil, ""), nil }, true, http.StatusInternalServerError, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.failStore {
				e.svc.Store = failingCreate{e.st}
			}
			e.vendor.respond = tc.respond
			e.vendor.cancel = func(id string) (*provider.ResponsesResult, error) { return result(id, "cancelled", nil, ""), nil }
			_, err := e.svc.Submit(testCtx(t), e.submission(e.reserve(t, 500_000)))
			if got := apierr.From(err).Status; err == nil || got != tc.wantStatus {
				t.Fatalf("Submit: %v (status %d), want status %d", err, got, tc.wantStatus)
			}
			if r := e.reserved(); r != 0 {
				t.Errorf("%v left reserved", r)
			}
			if a := e.account(t); a.Held != 0 || a.Balance != testBalance {
				t.Errorf("account held %v balance %v", a.Held, a.Balance)
			}
			if _, err := e.st.ResponseTaskByID(testCtx(t), respID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a task was left: %v", err)
			}
			if got := len(e.vendor.cancels) == 1; got != tc.cancelled {
				t.Errorf("cancelled upstream %v, want %v", e.vendor.cancels, tc.cancelled)
			}
		})
	}
}

// TestSubmitUnknownStatus: a response in a status the gateway does not
// know is followed as queued, its hold kept.
func TestSubmitUnknownStatus(t *testing.T) {
	e := newEnv(t)
	if _, err := e.submit(t, 900_000, result(respID, "pondering", nil, "")); err != nil {
		t.Fatal(err)
	}
	if got := e.task(t, respID); got.Status != store.ResponseQueued || got.Held != 900_000 {
		t.Errorf("task %+v", got)
	}
}

// TestSubmitFinishedAtOnce: a vendor that answers a background request
// already completed (one that ignores background) has it settled at once.
func TestSubmitFinishedAtOnce(t *testing.T) {
	e := newEnv(t)
	if _, err := e.submit(t, 900_000, result(respID, "completed", []int64{1000, 0, 500}, "done")); err != nil {
		t.Fatal(err)
	}
	want := cost(t, 1000, 0, 500)
	if got := e.task(t, respID); got.Status != store.ResponseCompleted || got.Cost != want {
		t.Fatalf("task %+v", got)
	}
	if a := e.account(t); a.Held != 0 || a.Balance != testBalance-want {
		t.Errorf("account held %v balance %v", a.Held, a.Balance)
	}
	if e.wakes != 0 || len(e.settled) != 1 {
		t.Errorf("wakes %d settled %v", e.wakes, e.settled)
	}
}

// TestObserve: a read that shows the response open, or that is no
// background response, changes nothing; the first that shows it ended
// settles it from the usage it carries; later ones change nothing.
func TestObserve(t *testing.T) {
	e := newEnv(t)
	ctx := testCtx(t)
	if _, err := e.submit(t, 900_000, result(respID, "queued", nil, "")); err != nil {
		t.Fatal(err)
	}
	e.svc.Observe(ctx, respID, result(respID, "in_progress", nil, ""))
	notBackground := result(respID, "completed", []int64{1, 0, 1}, "")
	notBackground.Body = []byte(`{"id":"` + respID + `","status":"completed","background":false}`)
	e.svc.Observe(ctx, respID, notBackground)
	e.svc.Observe(ctx, "resp_other", result("resp_other", "completed", []int64{1, 0, 1}, ""))
	if got := e.task(t, respID); got.Status != store.ResponseQueued || len(e.records(t, respID)) != 0 {
		t.Fatalf("before the end: %+v", got)
	}
	e.svc.Observe(ctx, respID, result(respID, "incomplete", []int64{1000, 400, 2000}, "cut"))
	want := cost(t, 1000, 400, 2000)
	for range 3 {
		e.svc.Observe(ctx, respID, result(respID, "completed", []int64{5000, 0, 9000}, ""))
	}
	got := e.task(t, respID)
	if got.Status != store.ResponseIncomplete || got.Cost != want || got.LeaseOwner != "" {
		t.Fatalf("task %+v", got)
	}
	recs := e.records(t, respID)
	if len(recs) != 1 || recs[0].Cost != want || recs[0].Status != 200 || recs[0].PromptTokens != 1000 || recs[0].CachedTokens != 400 ||
		recs[0].CompletionTokens != 2000 || recs[0].Estimated || recs[0].Endpoint != Endpoint {
		t.Errorf("records %+v", recs)
	}
	if len(e.settled) != 1 || e.usages[0].CompletionTokens != 2000 {
		t.Errorf("OnSettled %v %+v", e.settled, e.usages)
	}
}

// TestSettleWithoutUsage: a response that ends with no usage (a cancel
// the vendor answers without it) is charged the prompt as counted at
// submission and the output the answer shows, marked estimated.
func TestSettleWithoutUsage(t *testing.T) {
	e := newEnv(t)
	if _, err := e.submit(t, 900_000, result(respID, "queued", nil, "")); err != nil {
		t.Fatal(err)
	}
	prompt := e.task(t, respID).PromptEstimate
	e.svc.Observe(testCtx(t), respID, result(respID, "cancelled", nil, "There are infinitely many primes because"))
	recs := e.records(t, respID)
	if len(recs) != 1 {
		t.Fatalf("records %+v", recs)
	}
	r := recs[0]
	if !r.Estimated || r.PromptTokens != prompt || r.CompletionTokens < 5 || r.CompletionTokens > 12 ||
		r.Cost != cost(t, prompt, 0, r.CompletionTokens) || r.Status != 499 || r.ErrorCode != CodeCancelled {
		t.Errorf("record %+v (prompt %d)", r, prompt)
	}
}

// TestCostCappedAtHold: usage that costs more than the reservation (input
// the request body did not show) is charged the reservation, never more.
func TestCostCappedAtHold(t *testing.T) {
	e := newEnv(t)
	const hold = 10_000
	if _, err := e.submit(t, hold, result(respID, "queued", nil, "")); err != nil {
		t.Fatal(err)
	}
	e.svc.Observe(testCtx(t), respID, result(respID, "completed", []int64{500_000, 0, 100_000}, ""))
	if got := e.task(t, respID); got.Cost != hold {
		t.Errorf("charged %v, want the hold %v", got.Cost, hold)
	}
	if a := e.account(t); a.Balance != testBalance-hold || a.Held != 0 {
		t.Errorf("balance %v held %v", a.Balance, a.Held)
	}
}

// TestFreeModel: a free model holds and charges nothing, and its task
// still ends.
func TestFreeModel(t *testing.T) {
	e := newEnv(t)
	e.vendor.respond = func() (*provider.ResponsesResult, error) { return result(respID, "queued", nil, ""), nil }
	if _, err := e.svc.Submit(testCtx(t), e.submission(nil)); err != nil {
		t.Fatal(err)
	}
	e.svc.Observe(testCtx(t), respID, result(respID, "completed", []int64{1000, 0, 1000}, ""))
	if got := e.task(t, respID); got.Status != store.ResponseCompleted || got.Cost != 0 || got.Held != 0 {
		t.Errorf("task %+v", got)
	}
	if a := e.account(t); a.Balance != testBalance {
		t.Errorf("balance %v", a.Balance)
	}
}
