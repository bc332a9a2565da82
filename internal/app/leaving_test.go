package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
	"github.com/modelgate/modelgate/internal/store"
)

// These tests hold every way a client can leave early to one rule: the key
// pays at least what the vendor bills (see lifecycle/streamend.go). The
// fake vendors' reasoning scenarios (providertest/reasoning.go) stream the
// visible answer, then, after a gap, usage holding 20,000 reasoning tokens
// the client never saw.

// The leaving gateway's models, priced at $1 in and $2 out per million
// tokens: o3-mini and claude-sonnet-4-5 are reasoning models in the
// catalog, think-* are made so by the config; plain-* are not.
var leavingModels = []config.ModelRef{
	{ID: "o3-mini", Upstream: "usage-gap"},
	{ID: "think-late", Upstream: "usage-late-end"},
	{ID: "think-stall", Upstream: "usage-stall"},
	{ID: "plain-gap", Upstream: "usage-gap"},
	{ID: "plain-late", Upstream: "usage-late-end"},
}

// vendorCost is what the reasoning scenarios' usage costs at $1/$2 per
// million tokens, in micro-units.
const (
	vendorCost          = money.Micros(providertest.ReasoningPrompt*1 + providertest.ReasoningCompletion*2)
	anthropicVendorCost = money.Micros(30*1 + providertest.AnthropicCompletion*2)
)

// startLeavingGateway runs the gateway with the leaving models on the fake
// OpenAI upstream and claude-sonnet-4-5 on a fake Anthropic one, both with
// an idle_timeout longer than the scenarios' gap.
func startLeavingGateway(t *testing.T, mutate ...func(*config.Config)) *gateway {
	t.Helper()
	ant := providertest.NewAnthropic(t)
	return startGateway(t, append([]func(*config.Config){func(c *config.Config) {
		c.Providers[0].Models = append(c.Providers[0].Models, leavingModels...)
		c.Providers[0].Timeout, c.Providers[0].IdleTimeout = config.Duration(10*time.Second), config.Duration(5*time.Second)
		c.Providers = append(c.Providers, config.Provider{Name: "fake-anthropic", Type: "anthropic", BaseURL: ant.URL,
			APIKey: "x", Models: []config.ModelRef{{ID: "claude-sonnet-4-5", Upstream: "thinking-gap"}}, Weight: 1,
			Timeout: config.Duration(10 * time.Second), IdleTimeout: config.Duration(5 * time.Second)})
		in, out, yes := config.Amount(money.Unit), config.Amount(2*money.Unit), true
		for _, id := range []string{"o3-mini", "claude-sonnet-4-5", "think-late", "think-stall", "plain-gap", "plain-late"} {
			mc := config.ModelConfig{ID: id, Input: &in, Output: &out}
			if strings.HasPrefix(id, "think-") {
				mc.Reasoning = &yes
			}
			c.Models = append(c.Models, mc)
		}
	}}, mutate...)...)
}

// recordOf is the one usage record of p's account.
func recordOf(t *testing.T, recs []store.UsageRecord, p payer) store.UsageRecord {
	t.Helper()
	var found []store.UsageRecord
	for _, r := range recs {
		if r.AccountID == p.accountID {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d usage records for the account, want 1: %+v", len(found), found)
	}
	return found[0]
}

// chatUntil streams a chat completion and closes the stream as soon as
// stop says so, as a client that leaves does; it returns the text seen.
func chatUntil(t *testing.T, c oai.Client, model string, usage bool, stop func(oai.ChatCompletionChunk, string) bool) string {
	t.Helper()
	params := streamParams(model, usage)
	params.ReasoningEffort = oai.ReasoningEffortLow
	s := c.Chat.Completions.NewStreaming(context.Background(), params)
	var text string
	for s.Next() {
		ch := s.Current()
		if len(ch.Choices) > 0 {
			text += ch.Choices[0].Delta.Content
		}
		if stop(ch, text) {
			_ = s.Close()
			return text
		}
	}
	t.Fatalf("the stream ended (%v) before the client meant to leave; text %q", s.Err(), text)
	return ""
}

// responsesUntil streams a Responses request and closes the stream after
// the event named last.
func responsesUntil(t *testing.T, c oai.Client, model, last string) {
	t.Helper()
	s := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{Model: model, Input: textInput("Hello")})
	for s.Next() {
		if s.Current().Type == last {
			_ = s.Close()
			return
		}
	}
	t.Fatalf("the stream ended (%v) before %s", s.Err(), last)
}

// finished is true at the chunk that ends the visible answer.
func finished(ch oai.ChatCompletionChunk, _ string) bool {
	return len(ch.Choices) > 0 && ch.Choices[0].FinishReason != ""
}

// The review's finding: a client that closes a reasoning model's stream
// after the visible answer, before the vendor's final usage, paid for the
// prompt and the visible text (o3-mini: 38 tokens of 20,040). Now the
// gateway reads on and charges the vendor's usage, on chat streams, on the
// Responses pass-through and through the Anthropic adapter (thinking).
func TestLeaveBeforeUsagePaysVendorUsage(t *testing.T) {
	g := startLeavingGateway(t)
	type run struct {
		name  string
		p     payer
		want  money.Micros
		leave func(c oai.Client)
	}
	runs := []*run{
		{name: "chat", want: vendorCost, leave: func(c oai.Client) { chatUntil(t, c, "o3-mini", true, finished) }},
		{name: "chat without usage asked", want: vendorCost, leave: func(c oai.Client) { chatUntil(t, c, "o3-mini", false, finished) }},
		{name: "responses pass-through", want: vendorCost, leave: func(c oai.Client) {
			responsesUntil(t, c, "o3-mini", "response.output_item.done")
		}},
		{name: "anthropic thinking", want: anthropicVendorCost, leave: func(c oai.Client) {
			chatUntil(t, c, "claude-sonnet-4-5", true, func(_ oai.ChatCompletionChunk, text string) bool { return text == "17 + 25 = 42." })
		}},
	}
	for _, r := range runs {
		r.p = g.newPayer("default", money.Unit, 0, time.Time{})
		r.leave(g.client(r.p.secret))
	}
	recs := g.usage() // waits for the drains
	for _, r := range runs {
		rec := recordOf(t, recs, r.p)
		if rec.Status != 499 || rec.ErrorCode != "client_closed_request" || rec.Estimated || rec.Cost != r.want {
			t.Errorf("%s: record %+v, want 499 and the vendor's usage, %v", r.name, rec, r.want)
		}
		if r.want == vendorCost && (rec.CompletionTokens != providertest.ReasoningCompletion || rec.ReasoningTokens != providertest.ReasoningTokens) {
			t.Errorf("%s: %d completion tokens (%d reasoning), want the vendor's", r.name, rec.CompletionTokens, rec.ReasoningTokens)
		}
		if drop := money.Unit - audit(t, g.app.Store(), r.p.accountID); drop != r.want {
			t.Errorf("%s: the balance dropped %v, want the vendor's usage × price, %v", r.name, drop, r.want)
		}
	}
}

// A client that got the event carrying the vendor's usage (the final usage
// chunk, response.completed) and hung up before the upstream's body ended
// (Codex CLI does, at every turn) completed its request: 200 and the
// vendor's usage, whether or not the model drains.
func TestLeaveAfterUsageIsComplete(t *testing.T) {
	g := startLeavingGateway(t)
	type run struct {
		name  string
		p     payer
		leave func(c oai.Client)
	}
	runs := []*run{
		{name: "chat", leave: func(c oai.Client) {
			chatUntil(t, c, "plain-late", true, func(ch oai.ChatCompletionChunk, _ string) bool { return ch.JSON.Usage.Valid() })
		}},
		{name: "chat, reasoning", leave: func(c oai.Client) {
			chatUntil(t, c, "think-late", true, func(ch oai.ChatCompletionChunk, _ string) bool { return ch.JSON.Usage.Valid() })
		}},
		{name: "responses pass-through", leave: func(c oai.Client) { responsesUntil(t, c, "plain-late", "response.completed") }},
		{name: "responses pass-through, reasoning", leave: func(c oai.Client) { responsesUntil(t, c, "think-late", "response.completed") }},
	}
	for _, r := range runs {
		r.p = g.newPayer("default", money.Unit, 0, time.Time{})
		r.leave(g.client(r.p.secret))
	}
	recs := g.usage()
	for _, r := range runs {
		rec := recordOf(t, recs, r.p)
		if rec.Status != 200 || rec.ErrorCode != "" || rec.Estimated || rec.Cost != vendorCost {
			t.Errorf("%s: record %+v, want 200 and the vendor's usage, %v", r.name, rec, vendorCost)
		}
		if drop := money.Unit - audit(t, g.app.Store(), r.p.accountID); drop != vendorCost {
			t.Errorf("%s: the balance dropped %v, want %v", r.name, drop, vendorCost)
		}
	}
}

// A client that leaves once the vendor has its request, before any byte
// of the answer, pays for the prompt: the vendor bills it. The usage
// record shows the gateway's count of it. On a reasoning model the gateway
// waits for the vendor's answer and charges its usage.
func TestLeaveBeforeFirstByte(t *testing.T) {
	g := startLeavingGateway(t)
	type run struct {
		name    string
		call    func(ctx context.Context, c oai.Client) error
		reasons bool
		p       payer
	}
	stream := func(s interface {
		Next() bool
		Err() error
	}) error {
		for s.Next() {
		}
		return s.Err()
	}
	runs := []*run{
		{name: "chat", call: func(ctx context.Context, c oai.Client) error {
			_, err := c.Chat.Completions.New(ctx, streamParams("slow", false))
			return err
		}},
		{name: "chat stream", call: func(ctx context.Context, c oai.Client) error {
			return stream(c.Chat.Completions.NewStreaming(ctx, streamParams("slow", true)))
		}},
		{name: "completions", call: func(ctx context.Context, c oai.Client) error {
			_, err := c.Completions.New(ctx, legacyParams("slow", false))
			return err
		}},
		{name: "responses pass-through stream", call: func(ctx context.Context, c oai.Client) error {
			return stream(c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "slow", Input: textInput("Hello")}))
		}},
		{name: "chat, reasoning", reasons: true, call: func(ctx context.Context, c oai.Client) error {
			_, err := c.Chat.Completions.New(ctx, streamParams("o3-mini", false))
			return err
		}},
	}
	for _, r := range runs {
		r.p = g.newPayer("default", money.Unit, 0, time.Time{})
		before := len(g.upstream.Received())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.call(ctx, g.client(r.p.secret)) }()
		for deadline := time.Now().Add(10 * time.Second); len(g.upstream.Received()) == before; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the upstream never got the request", r.name)
			}
		}
		cancel()
		if err := <-done; err == nil {
			t.Fatalf("%s: the request succeeded though its client left", r.name)
		}
	}
	recs := g.usage()
	for _, r := range runs {
		rec := recordOf(t, recs, r.p)
		if rec.Status != 499 || rec.ErrorCode != "client_closed_request" {
			t.Errorf("%s: record %+v, want 499", r.name, rec)
		}
		want := money.Micros(rec.PromptTokens) // $1 per million prompt tokens
		if r.reasons {
			want = vendorCost
		} else if !rec.Estimated || rec.PromptTokens <= 0 || rec.CompletionTokens != 0 {
			t.Errorf("%s: record %+v, want the prompt counted by the gateway", r.name, rec)
		}
		if rec.Cost != want {
			t.Errorf("%s: charged %v, want %v", r.name, rec.Cost, want)
		}
		if drop := money.Unit - audit(t, g.app.Store(), r.p.accountID); drop != want {
			t.Errorf("%s: the balance dropped %v, want %v", r.name, drop, want)
		}
	}
}

// When drain_timeout passes before the vendor's usage comes, the gateway
// stops reading, cancels the upstream request, and charges the reasoning
// allowance it reserved: the reservation. The model's input is free here,
// so the reservation is exactly max_completion_tokens at the output price.
func TestLeaveDrainBoundChargesReservation(t *testing.T) {
	g := startLeavingGateway(t, func(c *config.Config) {
		c.DrainTimeout = config.Duration(50 * time.Millisecond)
		zero, out, yes := config.Amount(0), config.Amount(2*money.Unit), true
		c.Models = append(c.Models, config.ModelConfig{ID: "think-stall", Input: &zero, Output: &out, Reasoning: &yes})
	})
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	c := g.client(p.secret)
	params := streamParams("think-stall", true)
	params.MaxCompletionTokens = oai.Int(5000)
	s := c.Chat.Completions.NewStreaming(context.Background(), params)
	for s.Next() {
		if finished(s.Current(), "") {
			break
		}
	}
	_ = s.Close()
	for deadline := time.Now().Add(10 * time.Second); g.upstream.Cancelled() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the drained upstream request was never cancelled")
		}
	}
	const reserved = money.Micros(5000 * 2)
	rec := recordOf(t, g.usage(), p)
	if rec.Status != 499 || rec.Cost != reserved || !rec.Estimated {
		t.Errorf("record %+v, want 499 and the reservation, %v", rec, reserved)
	}
	if drop := money.Unit - audit(t, g.app.Store(), p.accountID); drop != reserved {
		t.Errorf("the balance dropped %v, want %v", drop, reserved)
	}
}

// A drain never holds shutdown past its bound: when shutdown_timeout ends
// first, the drained call is cancelled with every other request and the
// reservation is charged.
func TestLeaveDrainEndsAtShutdown(t *testing.T) {
	g := startLeavingGateway(t, func(c *config.Config) {
		c.DrainTimeout = config.Duration(time.Hour)
		c.ShutdownTimeout = config.Duration(200 * time.Millisecond)
		zero, out, yes := config.Amount(0), config.Amount(2*money.Unit), true
		c.Models = append(c.Models, config.ModelConfig{ID: "think-stall", Input: &zero, Output: &out, Reasoning: &yes})
	})
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	params := streamParams("think-stall", true)
	params.MaxCompletionTokens = oai.Int(5000)
	c := g.client(p.secret)
	s := c.Chat.Completions.NewStreaming(context.Background(), params)
	for s.Next() && !finished(s.Current(), "") {
	}
	_ = s.Close()
	rec := recordOf(t, g.usage(), p) // returns once shutdown ended the drain
	for deadline := time.Now().Add(10 * time.Second); g.upstream.Cancelled() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the drained upstream request outlived shutdown")
		}
	}
	if rec.Status != 499 || rec.Cost != 5000*2 {
		t.Errorf("record %+v, want 499 and the reservation", rec)
	}
	audit(t, g.app.Store(), p.accountID)
}

// On a model without hidden tokens nothing is drained: the upstream
// request is cancelled as soon as the client leaves (the fake vendor sees
// it in the gap, before it sends its usage), and the client pays for the
// prompt and the text it was sent, counted.
func TestLeaveNonReasoningCancelsAtOnce(t *testing.T) {
	g := startLeavingGateway(t)
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	text := chatUntil(t, g.client(p.secret), "plain-gap", true, finished)
	for deadline := time.Now().Add(10 * time.Second); g.upstream.Cancelled() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the upstream request was not cancelled when the client left")
		}
	}
	rec := recordOf(t, g.usage(), p)
	if rec.Status != 499 || !rec.Estimated || rec.CompletionTokens <= 0 || rec.CompletionTokens > 20 ||
		rec.Cost != money.Micros(rec.PromptTokens+2*rec.CompletionTokens) {
		t.Errorf("record %+v, want the prompt and %q counted", rec, text)
	}
	audit(t, g.app.Store(), p.accountID)
}

// The non-streamed answer was written whole and the client closed: the
// request is complete.
func TestLeaveAfterWholeAnswer(t *testing.T) {
	g := startLeavingGateway(t)
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	c := g.client(p.secret)
	if _, err := c.Chat.Completions.New(context.Background(), streamParams("o3-mini", false), option.WithHTTPClient(hc)); err != nil {
		t.Fatal(err)
	}
	rec := recordOf(t, g.usage(), p)
	if rec.Status != 200 || rec.Cost != vendorCost || rec.Estimated {
		t.Errorf("record %+v, want 200 and the vendor's usage", rec)
	}
}
