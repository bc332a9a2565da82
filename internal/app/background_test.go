package app_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
	"github.com/modelgate/modelgate/internal/store"
)

// bgPrice is what the background models cost per million tokens (o3's
// list prices): $2 input, $0.50 cached input, $8 output.
var bgPrice = billing.TokenPrice{Input: 2 * money.Unit, CachedInput: money.Unit / 2, Output: 8 * money.Unit}

// bgCost is what the given usage of a background model costs.
func bgCost(t *testing.T, in, cached, out int64) money.Micros {
	t.Helper()
	c, err := billing.Cost(bgPrice, billing.Tokens{Prompt: in, Cached: cached, Completion: out}, money.PPM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// completedCost is what the fake's completed background response costs:
// 1,200 input tokens (200 cached) and 60,000 output tokens.
func completedCost(t *testing.T) money.Micros {
	return bgCost(t, providertest.BackgroundInput, providertest.BackgroundCached, providertest.BackgroundOutput)
}

// backgroundConfig serves "deep" (the fake completes its background
// responses on the second GET) and "deep-never" (they never finish), at
// bgPrice, and polls background responses every 20 to 40 ms.
func backgroundConfig(c *config.Config) {
	in, cached, out := config.Amount(bgPrice.Input), config.Amount(bgPrice.CachedInput), config.Amount(bgPrice.Output)
	for i := range c.Providers {
		if c.Providers[i].Name == "fake-openai" {
			c.Providers[i].Models = append(c.Providers[i].Models, config.ModelRef{ID: "deep", Upstream: "deep-1"},
				config.ModelRef{ID: "deep-never", Upstream: providertest.BackgroundNever})
		}
	}
	for _, id := range []string{"deep", "deep-never"} {
		c.Models = append(c.Models, config.ModelConfig{ID: id, Input: &in, CachedInput: &cached, Output: &out})
	}
	c.Background.PollMin = config.Duration(20 * time.Millisecond)
	c.Background.PollMax = config.Duration(40 * time.Millisecond)
}

// startBackgroundGateway serves backgroundConfig in front of a fake
// OpenAI, on clock. It returns the config, for a second process on the
// same database.
func startBackgroundGateway(t *testing.T, clock *fakeClock) (*gateway, *config.Config) {
	t.Helper()
	up := providertest.NewOpenAI(t)
	cfg := testConfig(t, up.URL)
	backgroundConfig(cfg)
	g := serveApp(t, cfg, app.Options{Logger: testLogger(t), Version: "test", Now: clock.Now})
	g.upstream = up
	g.keys["default"] = g.createKey("default", false)
	return g, cfg
}

// newClock is a fake clock at a fixed time; nothing the worker schedules
// comes due until the test moves it.
func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)} }

// startBackground creates a background response through the SDK.
func startBackground(t *testing.T, c oai.Client, model string) *responses.Response {
	t.Helper()
	r, err := c.Responses.New(context.Background(), responses.ResponseNewParams{Model: model, Input: textInput("Prove it."),
		Background: oai.Bool(true), MaxOutputTokens: oai.Int(100_000)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != responses.ResponseStatusQueued || !r.Background || r.Model != model {
		t.Fatalf("created: status %s background %v model %s", r.Status, r.Background, r.Model)
	}
	return r
}

// responseTask reads the task of a background response.
func responseTask(t *testing.T, st store.Store, id string) store.ResponseTask {
	t.Helper()
	task, err := st.ResponseTaskByID(context.Background(), id)
	if err != nil {
		t.Fatalf("task of %s: %v", id, err)
	}
	return task
}

// waitTask waits until the task of id satisfies ok. The clock does not
// move meanwhile, so no lease of the worker's ends under a poll it runs.
func waitTask(t *testing.T, st store.Store, id string, ok func(store.ResponseTask) bool) store.ResponseTask {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if task := responseTask(t, st, id); ok(task) {
			return task
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the task of %s did not get there: %+v", id, responseTask(t, st, id))
	return store.ResponseTask{}
}

// final reports whether a task has ended.
func final(task store.ResponseTask) bool { return !task.Open() }

// polled reports whether a task has been polled n times or has ended.
func polled(n int) func(store.ResponseTask) bool {
	return func(task store.ResponseTask) bool { return task.Polls >= n || !task.Open() }
}

// settlements returns the usage records whose request id is the response's.
func settlements(recs []store.UsageRecord, id string) []store.UsageRecord {
	var out []store.UsageRecord
	for _, r := range recs {
		if r.RequestID == id {
			out = append(out, r)
		}
	}
	return out
}

// checkHeld fails unless the account and the key hold want.
func checkHeld(t *testing.T, st store.Store, key string, want money.Micros) {
	t.Helper()
	ctx := context.Background()
	a, err := st.AccountByID(ctx, accountOf(t, st, key))
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := st.ListKeys(ctx)
	for _, k := range keys {
		if strings.HasPrefix(key, k.Prefix) && (k.Held != want || a.Held != want) {
			t.Errorf("held: account %v key %v, want %v", a.Held, k.Held, want)
		}
	}
}

// TestBackgroundResponseSettledByGet is the regression test of the free
// background response: created in the background, then read with GET
// until completed. The hold lives in the store (Account.Held, Key.Held)
// while the vendor runs it; the first GET that sees it completed charges
// the vendor's usage (60,000 output tokens), exactly once; the POST and
// the GETs cost nothing themselves.
func TestBackgroundResponseSettledByGet(t *testing.T) {
	clock := newClock() // frozen: the worker never polls, the GETs settle
	g, _ := startBackgroundGateway(t, clock)
	key := g.keys["default"]
	st := g.app.Store()
	acct := accountOf(t, st, key)
	before := balance(t, st, acct)
	c := g.client(key)
	ctx := context.Background()

	r := startBackground(t, c, "deep")
	task := responseTask(t, st, r.ID)
	if task.Held <= completedCost(t) || task.Status != store.ResponseQueued || task.Model != "deep" || task.Provider != "fake-openai" {
		t.Fatalf("task %+v", task)
	}
	checkHeld(t, st, key, task.Held)
	if got, err := c.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); err != nil || got.Status != responses.ResponseStatusInProgress {
		t.Fatalf("first GET: %v %v", got, err)
	}
	if b := balance(t, st, acct); b != before {
		t.Fatalf("charged %v before the response ended", before-b)
	}
	done, err := c.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
	if err != nil || done.Status != responses.ResponseStatusCompleted || done.Usage.OutputTokens != providertest.BackgroundOutput || done.Model != "deep" {
		t.Fatalf("second GET: %+v %v", done, err)
	}
	want := completedCost(t)
	if got := before - balance(t, st, acct); got != want {
		t.Fatalf("charged %v, want %v (the vendor's usage)", got, want)
	}
	checkHeld(t, st, key, 0)
	for range 2 { // more reads, and the worker's turn: nothing more
		if _, err := c.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Hour)
	time.Sleep(100 * time.Millisecond)
	if got := before - balance(t, st, acct); got != want {
		t.Fatalf("charged %v after more reads, want %v", got, want)
	}
	if task := responseTask(t, st, r.ID); task.Status != store.ResponseCompleted || task.Cost != want {
		t.Errorf("settled task %+v", task)
	}
	recs := g.usage()
	settled := settlements(recs, r.ID)
	if len(settled) != 1 {
		t.Fatalf("%d settlement records, want 1", len(settled))
	}
	if s := settled[0]; s.Cost != want || s.Status != 200 || s.Endpoint != "responses" || s.PromptTokens != providertest.BackgroundInput ||
		s.CachedTokens != providertest.BackgroundCached || s.CompletionTokens != providertest.BackgroundOutput ||
		s.ReasoningTokens != providertest.BackgroundReasoning || s.Estimated {
		t.Errorf("settlement record %+v", s)
	}
	var posts, gets int
	for _, rec := range recs {
		switch {
		case rec.Endpoint == "responses" && rec.RequestID != r.ID:
			posts++
			if rec.Cost != 0 || rec.Status != 200 {
				t.Errorf("the POST's record %+v: want status 200, cost 0", rec)
			}
		case rec.Endpoint == "responses.get":
			gets++
			if rec.Cost != 0 {
				t.Errorf("a GET cost %v", rec.Cost)
			}
		}
	}
	if posts != 1 || gets != 4 {
		t.Errorf("%d POST and %d GET records, want 1 and 4", posts, gets)
	}
	audit(t, st, acct)
}

// TestBackgroundResponseSettledByWorker: nobody reads the response; the
// worker polls it to its end and charges it, once; a GET afterwards
// charges nothing more.
func TestBackgroundResponseSettledByWorker(t *testing.T) {
	clock := newClock()
	g, _ := startBackgroundGateway(t, clock)
	key := g.keys["default"]
	st := g.app.Store()
	acct := accountOf(t, st, key)
	before := balance(t, st, acct)
	c := g.client(key)
	r := startBackground(t, c, "deep")
	clock.Advance(time.Second) // the first poll: in progress
	waitTask(t, st, r.ID, polled(1))
	clock.Advance(time.Second) // the second: completed
	task := waitTask(t, st, r.ID, final)
	want := completedCost(t)
	if task.Status != store.ResponseCompleted || task.Cost != want || g.upstream.BackgroundGets(r.ID) != 2 {
		t.Fatalf("task %+v after %d upstream GETs", task, g.upstream.BackgroundGets(r.ID))
	}
	if got := before - balance(t, st, acct); got != want {
		t.Fatalf("charged %v, want %v", got, want)
	}
	got, err := c.Responses.Get(context.Background(), r.ID, responses.ResponseGetParams{})
	if err != nil || got.Status != responses.ResponseStatusCompleted {
		t.Fatalf("GET: %v", err)
	}
	if got := before - balance(t, st, acct); got != want {
		t.Fatalf("charged %v after a GET, want %v", got, want)
	}
	checkHeld(t, st, key, 0)
	if n := len(settlements(g.usage(), r.ID)); n != 1 {
		t.Errorf("%d settlement records", n)
	}
	audit(t, st, acct)
}

// TestBackgroundResponseConcurrentGets: eight GETs that all see the
// response completed at once charge it once.
func TestBackgroundResponseConcurrentGets(t *testing.T) {
	g, _ := startBackgroundGateway(t, newClock())
	key := g.keys["default"]
	st := g.app.Store()
	acct := accountOf(t, st, key)
	before := balance(t, st, acct)
	c := g.client(key)
	ctx := context.Background()
	r := startBackground(t, c, "deep")
	if _, err := c.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); err != nil { // in_progress
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			<-start
			got, err := c.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
			if err != nil || got.Status != responses.ResponseStatusCompleted {
				t.Errorf("GET: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if got, want := before-balance(t, st, acct), completedCost(t); got != want {
		t.Fatalf("charged %v, want %v once", got, want)
	}
	if n := len(settlements(g.usage(), r.ID)); n != 1 {
		t.Errorf("%d settlement records, want 1", n)
	}
	audit(t, st, acct)
}

// TestBackgroundResponseRestart: the process that took the request stops
// while the vendor runs it; a new process on the same database sees the
// hold and settles the response when it ends.
func TestBackgroundResponseRestart(t *testing.T) {
	clock := newClock()
	g, cfg := startBackgroundGateway(t, clock)
	key := g.keys["default"]
	acct := accountOf(t, g.app.Store(), key)
	before := balance(t, g.app.Store(), acct)
	r := startBackground(t, g.client(key), "deep")
	held := responseTask(t, g.app.Store(), r.ID).Held
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	_ = g.app.Close()

	g2 := serveApp(t, cfg, app.Options{Logger: testLogger(t), Version: "test", Now: clock.Now})
	st := g2.app.Store()
	checkHeld(t, st, key, held)
	c := g2.client(key)
	for range 2 {
		if _, err := c.Responses.Get(context.Background(), r.ID, responses.ResponseGetParams{}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := before-balance(t, st, acct), completedCost(t); got != want {
		t.Fatalf("charged %v after the restart, want %v", got, want)
	}
	checkHeld(t, st, key, 0)
	audit(t, st, acct)
}

// TestBackgroundResponseCancel: the owner's cancel is passed through and
// settles what the vendor reports for the cancelled response; another
// account's cancel is 404 and reaches no vendor.
func TestBackgroundResponseCancel(t *testing.T) {
	g, _ := startBackgroundGateway(t, newClock())
	key := g.keys["default"]
	st := g.app.Store()
	acct := accountOf(t, st, key)
	before := balance(t, st, acct)
	c := g.client(key)
	ctx := context.Background()
	r := startBackground(t, c, "deep-never")

	other := g.client(g.createKey("default", false))
	_, err := other.Responses.Cancel(ctx, r.ID)
	apiError(t, err, http.StatusNotFound, "not_found")
	if n := g.upstream.BackgroundCancels(r.ID); n != 0 {
		t.Fatalf("another account's cancel reached the vendor")
	}
	got, err := c.Responses.Cancel(ctx, r.ID)
	if err != nil || got.Status != responses.ResponseStatusCancelled || got.Model != "deep-never" {
		t.Fatalf("cancel: %+v %v", got, err)
	}
	want := bgCost(t, providertest.BackgroundInput, 0, providertest.BackgroundCancelledOutput)
	if got := before - balance(t, st, acct); got != want {
		t.Fatalf("charged %v for the cancelled response, want %v", got, want)
	}
	if task := responseTask(t, st, r.ID); task.Status != store.ResponseCancelled || task.Cost != want {
		t.Errorf("task %+v", task)
	}
	// Reading or cancelling it again charges nothing more.
	if _, err := c.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Responses.Cancel(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if got := before - balance(t, st, acct); got != want {
		t.Fatalf("charged %v after more reads, want %v", got, want)
	}
	checkHeld(t, st, key, 0)
	settled := settlements(g.usage(), r.ID)
	if len(settled) != 1 || settled[0].Status != 499 || settled[0].ErrorCode != "response_cancelled" || settled[0].Cost != want {
		t.Errorf("settlement records %+v", settled)
	}
	audit(t, st, acct)
}

// TestBackgroundResponseTimeout: a response still in progress at the
// timeout is cancelled upstream and charged its whole reservation (the
// body's bytes as input tokens, max_output_tokens as output).
func TestBackgroundResponseTimeout(t *testing.T) {
	clock := newClock()
	g, _ := startBackgroundGateway(t, clock)
	key := g.keys["default"]
	st := g.app.Store()
	acct := accountOf(t, st, key)
	before := balance(t, st, acct)
	body := `{"model":"deep-never","input":"Think for a long time.","background":true,"max_output_tokens":100000}`
	resp, b := postResponses(t, g, key, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	id := responseIDIn(t, b)
	hold := bgCost(t, int64(len(body)), 0, 100_000)
	if task := responseTask(t, st, id); task.Held != hold {
		t.Fatalf("held %v, want %v", task.Held, hold)
	}
	checkHeld(t, st, key, hold)
	clock.Advance(59 * time.Minute) // a poll sees it in progress
	waitTask(t, st, id, polled(1))
	clock.Advance(2 * time.Minute) // past the deadline
	task := waitTask(t, st, id, final)
	if task.Status != store.ResponseCancelled || task.Cost != hold || !strings.Contains(task.Error, "did not finish within 1 hour") {
		t.Fatalf("timed out: %+v", task)
	}
	if n := g.upstream.BackgroundCancels(id); n != 1 {
		t.Errorf("%d cancels upstream, want 1", n)
	}
	if got := before - balance(t, st, acct); got != hold {
		t.Fatalf("charged %v, want the reservation %v", got, hold)
	}
	checkHeld(t, st, key, 0)
	settled := settlements(g.usage(), id)
	if len(settled) != 1 || settled[0].Status != 504 || settled[0].ErrorCode != "response_timeout" {
		t.Errorf("settlement records %+v", settled)
	}
	audit(t, st, acct)
}

// responseIDIn is the id of the Response object b.
func responseIDIn(t *testing.T, b []byte) string {
	t.Helper()
	var r responses.Response
	if err := r.UnmarshalJSON(b); err != nil || r.ID == "" {
		t.Fatalf("no response in %s: %v", b, err)
	}
	return r.ID
}

// TestBackgroundResponseRefused: what the gateway does not serve in the
// background is a 400 naming the parameter, with no upstream call and no
// charge: a background stream, an unstored background response, and
// background on any vendor the gateway translates (demo, Anthropic,
// Gemini).
func TestBackgroundResponseRefused(t *testing.T) {
	g, _ := startBackgroundGateway(t, newClock())
	key := g.keys["default"]
	st := g.app.Store()
	acct := accountOf(t, st, key)
	before := balance(t, st, acct)
	calls := len(g.upstream.Received())
	for _, tc := range []struct{ name, body, param string }{
		{"stream", `{"model":"deep","input":"hi","background":true,"stream":true}`, "stream"},
		{"not stored", `{"model":"deep","input":"hi","background":true,"store":false}`, "store"},
		{"translated (demo)", `{"model":"demo-chat","input":"hi","background":true}`, "background"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := postResponses(t, g, key, tc.body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"param":"`+tc.param+`"`) {
				t.Errorf("%d %s", resp.StatusCode, b)
			}
		})
	}
	if n := len(g.upstream.Received()); n != calls {
		t.Errorf("%d requests reached the vendor", n-calls)
	}
	if b := balance(t, st, acct); b != before {
		t.Errorf("charged %v", before-b)
	}
	checkHeld(t, st, key, 0)

	ga, anthropic := startAnthropicGateway(t)
	gg, gemini := startGeminiGateway(t)
	for _, tc := range []struct {
		name  string
		g     *gateway
		model string
		calls func() int
	}{
		{"anthropic", ga, "claude-test", func() int { return len(anthropic.Received()) }},
		{"gemini", gg, "gemini-test", func() int { return len(gemini.Received()) }},
	} {
		c := tc.g.client(tc.g.keys["default"])
		_, err := c.Responses.New(context.Background(), responses.ResponseNewParams{Model: tc.model,
			Input: textInput("hi"), Background: oai.Bool(true)})
		if e := apiError(t, err, http.StatusBadRequest, "invalid_request_error"); e.Param != "background" {
			t.Errorf("%s: param %q", tc.name, e.Param)
		}
		if n := tc.calls(); n != 0 {
			t.Errorf("%s: %d requests reached the vendor", tc.name, n)
		}
	}
}
