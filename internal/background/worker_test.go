package background

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/store"
)

func TestWorkerRequiresItsParts(t *testing.T) {
	e := newEnv(t)
	for name, w := range map[string]*Worker{
		"no service":    {Owner: "w"},
		"no owner":      {Service: e.svc},
		"no responders": {Service: &Service{Store: e.st}, Owner: "w"},
	} {
		if _, err := w.Step(testCtx(t)); err == nil {
			t.Errorf("%s: Step ran", name)
		}
		if err := w.Run(testCtx(t)); err == nil {
			t.Errorf("%s: Run ran", name)
		}
	}
}

// TestWorkerDrivesToTheEnd: polls move the task forward (never back) and
// schedule the next; transient errors retry; the poll that sees the
// response completed settles it once; later steps find nothing due.
func TestWorkerDrivesToTheEnd(t *testing.T) {
	e := newEnv(t)
	if _, err := e.submit(t, 900_000, result(respID, "queued", nil, "")); err != nil {
		t.Fatal(err)
	}
	answers := []func() (*provider.ResponsesResult, error){
		func() (*provider.ResponsesResult, error) { return result(respID, "in_progress", nil, ""), nil },
		func() (*provider.ResponsesResult, error) { return nil, errors.New("connection reset") },
		func() (*provider.ResponsesResult, error) { return result(respID, "queued", nil, ""), nil }, // never back
		func() (*provider.ResponsesResult, error) { return result(respID, "thinking", nil, ""), nil },
		func() (*provider.ResponsesResult, error) {
			return result(respID, "completed", []int64{1200, 200, 60_000}, ""), nil
		},
	}
	wantStatus := []store.ResponseStatus{store.ResponseInProgress, store.ResponseInProgress, store.ResponseInProgress,
		store.ResponseInProgress, store.ResponseCompleted}
	i := 0
	e.vendor.get = func(string) (*provider.ResponsesResult, error) { return answers[i]() }
	for ; i < len(answers); i++ {
		before := e.task(t, respID)
		e.clock.Set(before.NextPollAt)
		if n := e.step(t); n != 1 {
			t.Fatalf("poll %d: stepped %d tasks", i, n)
		}
		got := e.task(t, respID)
		if got.Status != wantStatus[i] {
			t.Fatalf("poll %d: status %s, want %s", i, got.Status, wantStatus[i])
		}
		if got.Open() && (got.Polls != before.Polls+1 || !got.NextPollAt.After(before.NextPollAt) || got.LeaseOwner != "") {
			t.Fatalf("poll %d: polls %d next %v lease %q", i, got.Polls, got.NextPollAt, got.LeaseOwner)
		}
	}
	want := cost(t, 1200, 200, 60_000)
	if got := e.task(t, respID); got.Cost != want || got.LeaseOwner != "" {
		t.Fatalf("settled %+v", got)
	}
	e.clock.Set(t0.Add(2 * time.Hour))
	if n := e.step(t); n != 0 {
		t.Errorf("a final task was polled")
	}
	if a := e.account(t); a.Balance != testBalance-want || a.Held != 0 {
		t.Errorf("balance %v held %v", a.Balance, a.Held)
	}
	if recs := e.records(t, respID); len(recs) != 1 || recs[0].Cost != want || recs[0].PromptTokens != 1200 || recs[0].CompletionTokens != 60_000 {
		t.Errorf("records %+v", recs)
	}
	if len(e.settled) != 1 {
		t.Errorf("OnSettled %d times", len(e.settled))
	}
}

// TestWorkerTimeout: a response open at its deadline is cancelled
// upstream and charged its whole reservation, whatever the cancel says;
// OnSettled hears of it only when the cancel reported usage.
func TestWorkerTimeout(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cancel   func(string) (*provider.ResponsesResult, error)
		told     bool
		provider string
	}{
		{"cancelled with usage", func(id string) (*provider.ResponsesResult, error) {
			return result(id, "cancelled", []int64{100, 0, 50}, ""), nil
		}, true, "openai"},
		{"cancel fails", func(string) (*provider.ResponsesResult, error) { return nil, errors.New("timeout") }, false, "openai"},
		{"provider gone", nil, false, "removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			const hold = 900_000
			if _, err := e.submit(t, hold, result(respID, "queued", nil, "")); err != nil {
				t.Fatal(err)
			}
			if tc.provider != "openai" {
				e.svc.Responders = func(string) (provider.Responder, bool) { return nil, false }
			}
			e.vendor.get = func(id string) (*provider.ResponsesResult, error) { return result(id, "in_progress", nil, ""), nil }
			e.vendor.cancel = tc.cancel
			e.clock.Set(t0.Add(time.Hour))
			e.step(t)
			got := e.task(t, respID)
			if got.Status != store.ResponseCancelled || got.Cost != hold || !strings.Contains(got.Error, "within 1 hour") {
				t.Fatalf("task %+v", got)
			}
			if e.vendor.gets != 0 {
				t.Errorf("polled %d times at the deadline", e.vendor.gets)
			}
			wantCancels := 1
			if tc.provider != "openai" {
				wantCancels = 0
			}
			if len(e.vendor.cancels) != wantCancels {
				t.Errorf("cancels %v", e.vendor.cancels)
			}
			recs := e.records(t, respID)
			if len(recs) != 1 || recs[0].Cost != hold || recs[0].Status != http.StatusGatewayTimeout || recs[0].ErrorCode != CodeTimeout {
				t.Errorf("records %+v", recs)
			}
			if (len(e.settled) == 1) != tc.told {
				t.Errorf("OnSettled %v, want told %v", e.settled, tc.told)
			}
			if a := e.account(t); a.Balance != testBalance-hold || a.Held != 0 {
				t.Errorf("balance %v held %v", a.Balance, a.Held)
			}
		})
	}
}

// TestWorkerLost: a vendor that no longer knows its own response (404)
// ends the task charged the prompt it received.
func TestWorkerLost(t *testing.T) {
	e := newEnv(t)
	if _, err := e.submit(t, 900_000, result(respID, "queued", nil, "")); err != nil {
		t.Fatal(err)
	}
	prompt := e.task(t, respID).PromptEstimate
	e.vendor.get = func(id string) (*provider.ResponsesResult, error) { return nil, notFound(id) }
	e.clock.Set(e.task(t, respID).NextPollAt)
	e.step(t)
	want := cost(t, prompt, 0, 0)
	if got := e.task(t, respID); got.Status != store.ResponseFailed || got.Cost != want || got.Error == "" {
		t.Fatalf("task %+v", got)
	}
	if recs := e.records(t, respID); len(recs) != 1 || recs[0].ErrorCode != CodeUpstreamLost || !recs[0].Estimated {
		t.Errorf("records %+v", recs)
	}
}

// TestWorkerProviderGone: a task whose provider is no longer configured
// waits (its deadline ends it), it is not settled for free.
func TestWorkerProviderGone(t *testing.T) {
	e := newEnv(t)
	if _, err := e.submit(t, 900_000, result(respID, "queued", nil, "")); err != nil {
		t.Fatal(err)
	}
	e.svc.Responders = func(string) (provider.Responder, bool) { return nil, false }
	before := e.task(t, respID)
	e.clock.Set(before.NextPollAt)
	e.step(t)
	if got := e.task(t, respID); !got.Open() || got.Polls != 1 || !got.NextPollAt.After(before.NextPollAt) {
		t.Errorf("task %+v", got)
	}
}

// TestPurge deletes final tasks a day old, never open ones.
func TestPurge(t *testing.T) {
	e := newEnv(t)
	if _, err := e.submit(t, 900_000, result(respID, "completed", []int64{1, 0, 1}, "")); err != nil {
		t.Fatal(err)
	}
	const openID = "resp_open"
	if _, err := e.submit(t, 900_000, result(openID, "queued", nil, "")); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(t0.Add(TTL - time.Second))
	if n, err := e.worker.Purge(testCtx(t)); err != nil || n != 0 {
		t.Fatalf("purge before a day: %d %v", n, err)
	}
	e.clock.Set(t0.Add(TTL + time.Second))
	if n, err := e.worker.Purge(testCtx(t)); err != nil || n != 1 {
		t.Fatalf("purge after a day: %d %v", n, err)
	}
	if _, err := e.st.ResponseTaskByID(testCtx(t), respID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the final task stayed: %v", err)
	}
	e.task(t, openID)
}
