package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// The reservation covers the largest output the upstream request allows:
// max_tokens 1 with reasoning_effort high makes the Anthropic adapter send
// max_tokens 16,385, so an account holding 0.0005 (or a key capped at
// 0.001) is refused with 429 insufficient_quota and Anthropic is not
// called, on chat and on the Responses API alike; an account that can pay
// is served and charged what it used.
func TestReservationCoversAdapterOutput(t *testing.T) {
	g, fake := startAnthropicGateway(t)
	ctx := context.Background()
	thinking := oai.ChatCompletionNewParams{Model: "claude-test", MaxTokens: oai.Int(1), ReasoningEffort: shared.ReasoningEffortHigh,
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Think hard.")}}
	thinkingResponse := responses.ResponseNewParams{Model: "claude-test", MaxOutputTokens: oai.Int(16),
		Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortHigh},
		Input:     responses.ResponseNewParamsInputUnion{OfString: oai.String("Think hard.")}}

	poor := g.newPayer("default", 500, 0, time.Time{})             // 0.0005
	capped := g.newPayer("default", money.Unit, 1000, time.Time{}) // 1.0, capped at 0.001
	for _, p := range []payer{poor, capped} {
		c := g.client(p.secret)
		before := len(fake.Received())
		_, err := c.Chat.Completions.New(ctx, thinking)
		apiError(t, err, 429, "insufficient_quota")
		_, err = c.Responses.New(ctx, thinkingResponse)
		apiError(t, err, 429, "insufficient_quota")
		if len(fake.Received()) != before {
			t.Error("Anthropic was called for a request the payer cannot cover")
		}
	}

	rich := g.newPayer("default", money.Unit, 0, time.Time{})
	rc := g.client(rich.secret)
	if _, err := rc.Chat.Completions.New(ctx, thinking); err != nil {
		t.Fatal(err)
	}
	var sent struct {
		MaxTokens int64 `json:"max_tokens"`
		Thinking  struct {
			BudgetTokens int64 `json:"budget_tokens"`
		} `json:"thinking"`
	}
	if err := json.Unmarshal(fake.Last().Body, &sent); err != nil || sent.MaxTokens != 16385 || sent.Thinking.BudgetTokens != 16384 {
		t.Errorf("sent %+v (%v): the adapter's limit changed, so this test no longer proves the bound", sent, err)
	}
	g.usage() // stop and flush: the records are written in the background
	for _, p := range []payer{poor, capped, rich} {
		audit(t, g.app.Store(), p.accountID)
	}
}

// No answer takes a balance below zero: a vendor that counts more prompt
// tokens than the gateway's bound (Anthropic's 125 for this short prompt)
// is charged what the account has left, and the rest is written off.
func TestChargeNeverBelowZero(t *testing.T) {
	g, _ := startAnthropicGateway(t)
	body := `{"model":"claude-test","prompt":"Say this is a test","stream":true}`
	// Reserved: one token per body byte at $1/M plus the 16 output tokens
	// the translation asks for at $2/M; the stream costs 155 µ.
	reserved := money.Micros(len(body) + 2*16)
	p := g.newPayer("default", reserved+10, 0, time.Time{})
	resp, b := g.post("/v1/completions", "application/json", p.secret, strings.NewReader(body))
	if resp.StatusCode != 200 || !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if got := resp.Trailer.Get("X-Modelgate-Cost"); got != (reserved + 10).String() {
		t.Errorf("cost %s, want what the account had, %s (the vendor's 0.000155 exceeds it)", got, (reserved + 10).String())
	}
	recs := g.usage()
	if balance := audit(t, g.app.Store(), p.accountID); balance != 0 {
		t.Errorf("balance %v, want 0", balance)
	}
	for _, r := range recs {
		if r.AccountID == p.accountID && r.Cost != reserved+10 {
			t.Errorf("record cost %v", r.Cost)
		}
	}
}

// An account at or below zero, or a key whose cap is used up, is refused
// whatever the request's estimated cost (embedding "a" with
// text-embedding-3-small at its list price of $0.02 per million tokens
// rounds to a reservation of zero), before any upstream call; free models
// are still served.
func TestNothingLeftNothingServed(t *testing.T) {
	g := startGateway(t, func(c *config.Config) {
		c.Providers[0].Models = append(c.Providers[0].Models, config.ModelRef{ID: "text-embedding-3-small"})
	})
	ctx := context.Background()
	st := g.app.Store()
	negative := g.newPayer("default", 0, 0, time.Time{})
	if _, err := st.Post(ctx, store.LedgerEntry{AccountID: negative.accountID, Kind: store.KindAdjustment, Amount: -245_805, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	zero := g.newPayer("default", 0, 0, time.Time{})
	spent := g.newPayer("default", money.Unit, 1000, time.Time{})
	if err := st.InsertUsage(ctx, []store.UsageRecord{{RequestID: "req_spent", Time: time.Now(), AccountID: spent.accountID,
		KeyID: spent.keyID, Endpoint: "embeddings", Model: "text-embedding-3-small", Status: 200, Cost: 1000}}); err != nil {
		t.Fatal(err)
	}
	tiny := oai.EmbeddingNewParams{Model: "text-embedding-3-small", Input: strs("a")}
	for name, p := range map[string]payer{"negative balance": negative, "zero balance": zero, "spend cap used up": spent} {
		before := len(g.upstream.Received())
		c := g.client(p.secret)
		_, err := c.Embeddings.New(ctx, tiny)
		if e := apiError(t, err, 429, "insufficient_quota"); e == nil {
			t.Errorf("%s: served", name)
		}
		if len(g.upstream.Received()) != before {
			t.Errorf("%s: the vendor was called", name)
		}
		if _, err := c.Embeddings.New(ctx, oai.EmbeddingNewParams{Model: "demo-embed", Input: strs("a")}); err != nil {
			t.Errorf("%s: a free model refused: %v", name, err)
		}
	}
}
