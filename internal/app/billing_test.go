package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// payer is an account with one key, made for a billing test.
type payer struct {
	secret, accountID, keyID string
}

func (g *gateway) newPayer(group string, credit, spendCap money.Micros, expires time.Time) payer {
	g.t.Helper()
	ctx := context.Background()
	st := g.app.Store()
	now := time.Now().UTC()
	acct := store.Account{ID: app.NewID("acct_"), Name: app.NewID("payer-"), CreatedAt: now}
	if err := st.CreateAccount(ctx, acct); err != nil {
		g.t.Fatal(err)
	}
	secret, display, hash := apikey.Generate()
	k := store.Key{ID: app.NewID("key_"), AccountID: acct.ID, Group: group, Prefix: display, Hash: hash, CreatedAt: now,
		SpendCap: spendCap, ExpiresAt: expires}
	if err := st.CreateKey(ctx, k); err != nil {
		g.t.Fatal(err)
	}
	if credit != 0 {
		if _, err := st.Post(ctx, store.LedgerEntry{AccountID: acct.ID, Kind: store.KindTopUp, Amount: credit, Time: now}); err != nil {
			g.t.Fatal(err)
		}
	}
	return payer{secret, acct.ID, k.ID}
}

// audit fails unless the account's balance equals its ledger sum and its
// spent equals the cost of its usage records, and returns the balance.
func audit(t *testing.T, st store.Store, accountID string) money.Micros {
	t.Helper()
	ctx := context.Background()
	a, err := st.AccountByID(ctx, accountID)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := st.LedgerSum(ctx, accountID)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.ListUsage(ctx, store.UsageFilter{AccountID: accountID})
	if err != nil {
		t.Fatal(err)
	}
	var cost money.Micros
	for _, r := range recs {
		cost += r.Cost
	}
	if sum != a.Balance || cost != a.Spent || a.Balance < 0 {
		t.Errorf("account %s: balance %v, ledger sum %v, spent %v, records cost %v", accountID, a.Balance, sum, a.Spent, cost)
	}
	return a.Balance
}

// budgetModel costs exactly its reservation: no input price, and the fake
// upstream always answers with 10 completion tokens, so max_tokens 10
// reserves what it will cost: 10 × $1000/M = $0.01.
func withBudgetModel(c *config.Config) {
	c.Providers[0].Models = append(c.Providers[0].Models, config.ModelRef{ID: "budget-model", Upstream: "gpt-4o-mini-2024-07-18"})
	zero, out := config.Amount(0), config.Amount(1000*money.Unit)
	c.Models = append(c.Models, config.ModelConfig{ID: "budget-model", Input: &zero, Output: &out})
}

const budgetCost = 10_000 // micro-units per budget-model request

func TestChargesAndCostHeader(t *testing.T) {
	g := startGateway(t)
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	c := g.client(p.secret)
	ctx := context.Background()
	// gpt-4o-mini: 19 prompt × $0.15/M + 10 completion × $0.60/M = 8.85 µ → 9 µ.
	var raw *http.Response
	if _, err := c.Chat.Completions.New(ctx, streamParams("gpt-4o-mini", false), option.WithResponseInto(&raw)); err != nil {
		t.Fatal(err)
	}
	if got := raw.Header.Get("X-Modelgate-Cost"); got != "0.000009" {
		t.Errorf("X-Modelgate-Cost = %q", got)
	}
	// Streams carry it as a trailer, with or without usage for the client.
	// A plain HTTP client reads the body to its end, where trailers are
	// (the SDK may close the body at [DONE] before reading them).
	for _, includeUsage := range []bool{false, true} {
		b, err := json.Marshal(streamParams("gpt-4o-mini", includeUsage))
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatal(err)
		}
		body["stream"] = true
		b, _ = json.Marshal(body)
		resp, out := g.post("/v1/chat/completions", "application/json", p.secret, bytes.NewReader(b))
		if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte("data: [DONE]")) {
			t.Fatalf("stream: %d %s", resp.StatusCode, out)
		}
		if got := resp.Trailer.Get("X-Modelgate-Cost"); got != "0.000009" {
			t.Errorf("stream trailer X-Modelgate-Cost = %q (include_usage %v)", got, includeUsage)
		}
	}
	// A free model costs nothing; an upstream failure is not charged.
	if _, err := c.Chat.Completions.New(ctx, streamParams("demo-chat", false), option.WithResponseInto(&raw)); err != nil {
		t.Fatal(err)
	}
	if got := raw.Header.Get("X-Modelgate-Cost"); got != "0.000000" {
		t.Errorf("demo X-Modelgate-Cost = %q", got)
	}
	_, err := c.Chat.Completions.New(ctx, streamParams("err-500", false))
	apiError(t, err, 502, "upstream_error")

	recs := g.usage()
	var charged int
	for _, r := range recs {
		if r.AccountID != p.accountID {
			continue
		}
		if r.Model == "gpt-4o-mini" {
			charged++
			if r.Cost != 9 || r.PromptTokens != 19 || r.CompletionTokens != 10 || r.Estimated {
				t.Errorf("record %+v", r)
			}
		} else if r.Cost != 0 {
			t.Errorf("%s charged %v", r.Model, r.Cost)
		}
	}
	if charged != 3 {
		t.Errorf("%d charged records", charged)
	}
	if b := audit(t, g.app.Store(), p.accountID); b != money.Unit-27 {
		t.Errorf("balance %v", b)
	}
}

func TestInsufficientQuota(t *testing.T) {
	g := startGateway(t, withBudgetModel)
	ctx := context.Background()
	broke := g.newPayer("default", 0, 0, time.Time{})
	before := len(g.upstream.Received())
	bc := g.client(broke.secret)
	_, err := bc.Chat.Completions.New(ctx, streamParams("gpt-4o-mini", false))
	e := apiError(t, err, 429, "insufficient_quota")
	if e.Type != "insufficient_quota" {
		t.Errorf("type %q", e.Type)
	}
	s := bc.Chat.Completions.NewStreaming(ctx, streamParams("gpt-4o-mini", false))
	for s.Next() {
	}
	apiError(t, s.Err(), 429, "insufficient_quota")
	if n := len(g.upstream.Received()); n != before {
		t.Errorf("the upstream was called %d times for a broke account", n-before)
	}
	// The demo models are free: a zero balance still works.
	if _, err := bc.Chat.Completions.New(ctx, streamParams("demo-chat", false)); err != nil {
		t.Errorf("free model: %v", err)
	}
	// A key's spend cap: two budget requests fit a cap of 0.025, the third does not.
	capped := g.newPayer("default", money.Unit, 25_000, time.Time{})
	p := streamParams("budget-model", false)
	p.MaxTokens = oai.Int(10)
	cc := g.client(capped.secret)
	for i := range 3 {
		_, err := cc.Chat.Completions.New(ctx, p)
		if i < 2 && err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if i == 2 {
			apiError(t, err, 429, "insufficient_quota")
		}
	}
	// An expired key is an invalid key.
	old := g.newPayer("default", money.Unit, 0, time.Now().Add(-time.Minute))
	oc := g.client(old.secret)
	_, err = oc.Chat.Completions.New(ctx, streamParams("demo-chat", false))
	apiError(t, err, 401, "invalid_api_key")
}

// 200 concurrent requests against a balance that pays for exactly 20: 20
// succeed, 180 get 429 insufficient_quota without reaching the upstream,
// and the balance ends at zero, equal to the ledger.
func TestConcurrentBudget(t *testing.T) {
	// 200 requests at once on a busy CI machine (race detector, packages
	// tested in parallel): the fake upstream gets time enough to answer.
	g := startGateway(t, withBudgetModel, func(c *config.Config) {
		c.Providers[0].Timeout, c.Providers[0].IdleTimeout = config.Duration(time.Minute), config.Duration(30*time.Second)
	})
	p := g.newPayer("default", 20*budgetCost, 0, time.Time{})
	c := g.client(p.secret)
	params := streamParams("budget-model", false)
	params.MaxTokens = oai.Int(10)
	before := len(g.upstream.Received())
	var (
		wg         sync.WaitGroup
		mu         sync.Mutex
		ok, refuse int
	)
	for range 200 {
		wg.Go(func() {
			_, err := c.Chat.Completions.New(context.Background(), params)
			var e *oai.Error
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.As(err, &e) && e.StatusCode == 429 && e.Code == "insufficient_quota":
				refuse++
			default:
				t.Errorf("unexpected: %v", err)
			}
		})
	}
	wg.Wait()
	if ok != 20 || refuse != 180 {
		t.Errorf("%d succeeded, %d refused; want 20 and 180", ok, refuse)
	}
	if n := len(g.upstream.Received()) - before; n != 20 {
		t.Errorf("upstream called %d times", n)
	}
	g.usage() // stop and flush
	if b := audit(t, g.app.Store(), p.accountID); b != 0 {
		t.Errorf("balance %v, want 0", b)
	}
}

// A client that leaves mid-stream pays for the tokens it was sent, counted
// by the gateway: more than nothing, less than the whole answer.
func TestDisconnectPaysDelivered(t *testing.T) {
	g := startGateway(t)
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	body := `{"model":"paced","stream":true,"messages":[{"role":"user","content":"Hi"}]}`
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", g.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+p.secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	rd := bufio.NewReader(resp.Body)
	var contentEvents int
	for contentEvents < 4 {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"content":"`) {
			contentEvents++
		}
	}
	cancel()
	resp.Body.Close()
	time.Sleep(300 * time.Millisecond) // let the gateway notice
	var rec store.UsageRecord
	for _, r := range g.usage() {
		if r.AccountID == p.accountID {
			rec = r
		}
	}
	if rec.Status != 499 || !rec.Estimated || rec.CompletionTokens < 3 || rec.CompletionTokens >= 10 || rec.Cost <= 0 {
		t.Errorf("record of the abandoned stream: %+v", rec)
	}
	if rec.PromptTokens < 5 || rec.PromptTokens > 30 {
		t.Errorf("prompt tokens %d (counted by the gateway)", rec.PromptTokens)
	}
	audit(t, g.app.Store(), p.accountID)
}

// A prompt that certainly does not fit the model's context window is
// refused before any upstream call.
func TestContextLengthExceeded(t *testing.T) {
	g := startGateway(t, func(c *config.Config) {
		w := int64(1000)
		c.Models = append(c.Models, config.ModelConfig{ID: "gpt-4o-mini", ContextWindow: &w})
	})
	before := len(g.upstream.Received())
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 300) // ~3000 tokens
	params := oai.ChatCompletionNewParams{Model: "gpt-4o-mini",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage(long)}}
	dc := g.client(g.keys["default"])
	_, err := dc.Chat.Completions.New(context.Background(), params)
	e := apiError(t, err, 400, "context_length_exceeded")
	if e.Param != "messages" || !strings.Contains(e.Message, "1000") {
		t.Errorf("error %+v", e)
	}
	if n := len(g.upstream.Received()); n != before {
		t.Errorf("upstream called")
	}
	// Just under the window passes.
	params.Messages = []oai.ChatCompletionMessageParamUnion{oai.UserMessage(strings.Repeat("The quick brown fox. ", 40))}
	if _, err := dc.Chat.Completions.New(context.Background(), params); err != nil {
		t.Errorf("short prompt: %v", err)
	}
}

// A model with neither a price nor free: true is refused, never served free.
func TestUnpricedModelRefused(t *testing.T) {
	g := startGateway(t, func(c *config.Config) {
		c.Providers[0].Models = append(c.Providers[0].Models, config.ModelRef{ID: "mystery-model", Upstream: "gpt-4o-mini-2024-07-18"})
	})
	before := len(g.upstream.Received())
	dc := g.client(g.keys["default"])
	_, err := dc.Chat.Completions.New(context.Background(), streamParams("mystery-model", false))
	apiError(t, err, 503, "model_not_priced")
	if len(g.upstream.Received()) != before {
		t.Error("upstream called for an unpriced model")
	}
}

// A group's price ratio scales the charge (rounded once); a public id the
// catalog does not know is priced by the upstream id it is served under.
func TestGroupRatioAndUpstreamPricing(t *testing.T) {
	g := startGateway(t, func(c *config.Config) {
		c.Groups["vip"] = config.Group{Models: []string{"*"}, PriceRatio: 800_000}
		c.Providers[0].Models = append(c.Providers[0].Models, config.ModelRef{ID: "house-mini", Upstream: "gpt-4o-mini"})
	})
	ctx := context.Background()
	for _, tc := range []struct {
		group, model, cost string
	}{
		{"default", "gpt-4o-mini", "0.000009"}, // 8.85 µ
		{"vip", "gpt-4o-mini", "0.000007"},     // 8.85 × 0.8 = 7.08 µ
		{"default", "house-mini", "0.000009"},  // priced as gpt-4o-mini
	} {
		p := g.newPayer(tc.group, money.Unit, 0, time.Time{})
		c := g.client(p.secret)
		var raw *http.Response
		if _, err := c.Chat.Completions.New(ctx, streamParams(tc.model, false), option.WithResponseInto(&raw)); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if got := raw.Header.Get("X-Modelgate-Cost"); got != tc.cost {
			t.Errorf("%+v: X-Modelgate-Cost = %q", tc, got)
		}
	}
}
