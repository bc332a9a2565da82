package background

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/store/sqlstore"
	"github.com/modelgate/modelgate/internal/task"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

const (
	testAccount = "acct_bg"
	testKey     = "key_bg"
	testBalance = 100 * money.Unit
)

// testPrice is o3's: $2 input, $0.50 cached, $8 output per million tokens.
var testPrice = billing.TokenPrice{Input: 2 * money.Unit, CachedInput: money.Unit / 2, Output: 8 * money.Unit}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newStore opens a fresh SQLite store with one funded account.
func newStore(t *testing.T) *sqlstore.Store {
	t.Helper()
	ctx := testCtx(t)
	s, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "modelgate.db"))
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.CreateAccount(ctx, store.Account{ID: testAccount, Name: "bg", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Post(ctx, store.LedgerEntry{AccountID: testAccount, Kind: store.KindTopUp, Amount: testBalance, Time: t0}); err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeResponder is a scripted vendor with the Responses API. Each func
// answers its call (nil: an error).
type fakeResponder struct {
	mu      sync.Mutex
	respond func() (*provider.ResponsesResult, error)
	get     func(id string) (*provider.ResponsesResult, error)
	cancel  func(id string) (*provider.ResponsesResult, error)
	gets    int
	cancels []string
}

var (
	_ provider.Responder         = (*fakeResponder)(nil)
	_ provider.ResponseCanceller = (*fakeResponder)(nil)
)

func (f *fakeResponder) NativeResponses() bool { return true }

func (f *fakeResponder) Respond(context.Context, *provider.ResponsesRequest) (*provider.ResponsesResult, error) {
	if f.respond == nil {
		return nil, errors.New("not scripted")
	}
	return f.respond()
}

func (f *fakeResponder) RespondStream(context.Context, *provider.ResponsesRequest) (provider.EventStream, error) {
	return nil, errors.New("not used")
}

func (f *fakeResponder) GetResponse(_ context.Context, g *provider.ResponseGet) (*provider.ResponsesResult, error) {
	f.mu.Lock()
	f.gets++
	f.mu.Unlock()
	if f.get == nil {
		return nil, errors.New("not scripted")
	}
	return f.get(g.ID)
}

func (f *fakeResponder) CancelResponse(_ context.Context, g *provider.ResponseGet) (*provider.ResponsesResult, error) {
	f.mu.Lock()
	f.cancels = append(f.cancels, g.ID)
	f.mu.Unlock()
	if f.cancel == nil {
		return nil, errors.New("not scripted")
	}
	return f.cancel(g.ID)
}

// result is a Response object of id in status, with usage (in, cached,
// out) when usage is not nil, and text as its output.
func result(id, status string, usage []int64, text string) *provider.ResponsesResult {
	obj := map[string]any{"id": id, "object": "response", "status": status, "background": true, "model": "o3",
		"output": []any{map[string]any{"type": "message", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text}}}}}
	res := &provider.ResponsesResult{}
	if usage != nil {
		res.Usage = provider.Usage{PromptTokens: usage[0], CachedTokens: usage[1], CompletionTokens: usage[2], TotalTokens: usage[0] + usage[2]}
		res.HasUsage = true
		obj["usage"] = map[string]any{"input_tokens": usage[0], "input_tokens_details": map[string]any{"cached_tokens": usage[1]},
			"output_tokens": usage[2], "total_tokens": usage[0] + usage[2]}
	}
	res.Body, _ = json.Marshal(obj)
	return res
}

// notFound is the vendor's 404 for its own id, as the adapter maps it.
func notFound(id string) error {
	return &apierr.Error{Status: http.StatusNotFound, Type: apierr.TypeInvalidRequest, Code: apierr.CodeNotFound,
		Message: "Response with id '" + id + "' not found."}
}

// env is a service and a worker on one store, clock and vendor.
type env struct {
	st      *sqlstore.Store
	clock   *clock
	vendor  *fakeResponder
	bill    *charge.Billing
	svc     *Service
	worker  *Worker
	settled []string // OnSettled calls: id
	usages  []provider.Usage
	wakes   int
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{st: newStore(t), clock: &clock{t: t0}, vendor: &fakeResponder{}}
	e.bill = &charge.Billing{
		Prices: func(public, _ string) (billing.ModelPrice, bool) {
			return billing.ModelPrice{Price: testPrice, Priced: true, Tokenizer: "o200k"}, public == "o3"
		},
		Ratio:    func(string) int64 { return money.PPM },
		Reserver: billing.NewReserver(e.st, billing.Options{Now: e.clock.Now, Refresh: time.Nanosecond}),
		Tokens:   tokenize.NewSet(),
	}
	e.svc = &Service{Store: e.st, Billing: e.bill, Now: e.clock.Now, Timeout: time.Hour,
		Schedule: task.Backoff{Start: 5 * time.Second, Ceil: 30 * time.Second},
		Responders: func(name string) (provider.Responder, bool) {
			return e.vendor, name == "openai"
		},
		Wake: func() { e.wakes++ },
		OnSettled: func(_ context.Context, id string, u provider.Usage) {
			e.settled = append(e.settled, id)
			e.usages = append(e.usages, u)
		}}
	e.worker = &Worker{Service: e.svc, Owner: "w1"}
	return e
}

// reserve starts a charge for o3 holding amount.
func (e *env) reserve(t *testing.T, amount money.Micros) *charge.Charge {
	t.Helper()
	c, err := e.bill.Start(billing.Payer{AccountID: testAccount, KeyID: testKey}, "default", "o3", "o3",
		func(mp billing.ModelPrice) bool { return mp.Priced })
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Reserve(testCtx(t), amount, "max_output_tokens"); err != nil {
		t.Fatal(err)
	}
	return c
}

// submit submits a background request holding amount whose vendor answers
// with res.
func (e *env) submit(t *testing.T, amount money.Micros, res *provider.ResponsesResult) (*provider.ResponsesResult, error) {
	t.Helper()
	e.vendor.respond = func() (*provider.ResponsesResult, error) { return res, nil }
	return e.svc.Submit(testCtx(t), e.submission(e.reserve(t, amount)))
}

func (e *env) submission(c *charge.Charge) Submission {
	return Submission{RequestID: "req_1", Payer: billing.Payer{AccountID: testAccount, KeyID: testKey}, Provider: "openai",
		Responder: e.vendor, Charge: c,
		Request: &provider.ResponsesRequest{PublicModel: "o3", UpstreamModel: "o3-2025-04-16",
			Body: []byte(`{"model":"o3","input":"Prove that there are infinitely many primes.","background":true}`)}}
}

// account reads the test account.
func (e *env) account(t *testing.T) store.Account {
	t.Helper()
	a, err := e.st.AccountByID(testCtx(t), testAccount)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// reserved is what the reserver holds for the account in memory (a
// persisted hold is the store's, not counted here).
func (e *env) reserved() money.Micros { return e.bill.Reserver.Reserved()[testAccount] }

func (e *env) task(t *testing.T, id string) store.ResponseTask {
	t.Helper()
	task, err := e.st.ResponseTaskByID(testCtx(t), id)
	if err != nil {
		t.Fatalf("task %s: %v", id, err)
	}
	return task
}

// records are the usage records of id.
func (e *env) records(t *testing.T, id string) []store.UsageRecord {
	t.Helper()
	recs, err := e.st.ListUsage(testCtx(t), store.UsageFilter{AccountID: testAccount})
	if err != nil {
		t.Fatal(err)
	}
	var out []store.UsageRecord
	for _, r := range recs {
		if r.RequestID == id {
			out = append(out, r)
		}
	}
	return out
}

// cost is what usage costs at testPrice.
func cost(t *testing.T, in, cached, out int64) money.Micros {
	t.Helper()
	c, err := billing.Cost(testPrice, billing.Tokens{Prompt: in, Cached: cached, Completion: out}, money.PPM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// step runs one worker step and fails the test on an error.
func (e *env) step(t *testing.T) int {
	t.Helper()
	n, err := e.worker.Step(testCtx(t))
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	return n
}
