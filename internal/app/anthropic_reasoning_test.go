package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// The recorded answer with extended thinking (providertest's
// anthropic/thinking.json and .sse): 30 input and 180 output tokens, of
// which the delivered thinking text counts 59 with o200k, the tokenizer
// the catalog implies for Claude models.
const (
	thinkingPrompt    = 30
	thinkingOutput    = 180
	thinkingReasoning = 59
	// thinkingCost is 30 tokens at $1 and 180 at $2 per million, in
	// micro-units: the vendor's output_tokens are billed, nothing else.
	thinkingCost = money.Micros(thinkingPrompt*1 + thinkingOutput*2)
)

// startThinkingGateway runs the gateway in front of a fake Anthropic
// upstream that answers every request with the recorded thinking answer,
// streamed in 7-byte pieces (cut inside multi-byte characters) when asked.
func startThinkingGateway(t *testing.T) *gateway {
	t.Helper()
	msg, sse := providertest.Fixture(t, "anthropic/thinking.json"), providertest.Fixture(t, "anthropic/thinking.sse")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream bool `json:"stream"`
		}
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/messages" || json.Unmarshal(body, &req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(msg)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for b := sse; len(b) > 0; {
			n := min(7, len(b))
			if _, err := w.Write(b[:n]); err != nil {
				return
			}
			_ = rc.Flush()
			b = b[n:]
		}
	}))
	t.Cleanup(up.Close)
	return startGateway(t, func(c *config.Config) {
		c.Providers = append(c.Providers, config.Provider{Name: "thinking-anthropic", Type: "anthropic", BaseURL: up.URL,
			APIKey: "x", Models: []config.ModelRef{{ID: "claude-think", Upstream: "claude-sonnet-4-5"}}, Weight: 1,
			Timeout: config.Duration(5 * time.Second), IdleTimeout: config.Duration(2 * time.Second)})
		in, out := config.Amount(money.Unit), config.Amount(2*money.Unit)
		c.Models = append(c.Models, config.ModelConfig{ID: "claude-think", Input: &in, Output: &out})
	})
}

// TestAnthropicReasoningTokens: a Claude answer with thinking reports the
// counted thinking as reasoning_tokens, the same streamed and not, while
// completion_tokens and the charge stay the vendor's output_tokens.
func TestAnthropicReasoningTokens(t *testing.T) {
	g := startThinkingGateway(t)
	c := g.client(g.keys["default"])
	ctx := context.Background()
	params := oai.ChatCompletionNewParams{Model: "claude-think", ReasoningEffort: oai.ReasoningEffortLow,
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("What is 17 + 25?")}}

	r, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	plain := r.Usage
	if r.Choices[0].Message.Content != "17 + 25 = 42." {
		t.Errorf("content %q", r.Choices[0].Message.Content)
	}

	params.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
	s := c.Chat.Completions.NewStreaming(ctx, params)
	var streamed oai.CompletionUsage
	usageChunks := 0
	for s.Next() {
		if ch := s.Current(); ch.JSON.Usage.Valid() {
			streamed = ch.Usage
			usageChunks++
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if usageChunks != 1 {
		t.Fatalf("%d usage chunks", usageChunks)
	}

	for how, u := range map[string]oai.CompletionUsage{"plain": plain, "streamed": streamed} {
		if got := u.CompletionTokensDetails.ReasoningTokens; got != thinkingReasoning {
			t.Errorf("%s: reasoning_tokens %d, want %d", how, got, thinkingReasoning)
		}
		if u.CompletionTokens != thinkingOutput || u.PromptTokens != thinkingPrompt || u.TotalTokens != thinkingPrompt+thinkingOutput {
			t.Errorf("%s: usage %+v, want the vendor's %d + %d", how, u, thinkingPrompt, thinkingOutput)
		}
	}
	if plain.CompletionTokensDetails.ReasoningTokens != streamed.CompletionTokensDetails.ReasoningTokens {
		t.Errorf("reasoning_tokens %d plain, %d streamed", plain.CompletionTokensDetails.ReasoningTokens,
			streamed.CompletionTokensDetails.ReasoningTokens)
	}

	recs := g.usage()
	if len(recs) != 2 {
		t.Fatalf("%d usage records", len(recs))
	}
	for _, rec := range recs {
		if rec.CompletionTokens != thinkingOutput || rec.ReasoningTokens != thinkingReasoning || rec.Cost != thinkingCost || rec.Estimated {
			t.Errorf("usage record (stream %v): completion %d reasoning %d cost %d estimated %v; want %d, %d, %d",
				rec.Stream, rec.CompletionTokens, rec.ReasoningTokens, rec.Cost, rec.Estimated, thinkingOutput, thinkingReasoning, thinkingCost)
		}
	}
}

// TestAnthropicReasoningTokensResponses: the Responses API, translated to
// a chat completion for Claude, shows the same figure as
// output_tokens_details.reasoning_tokens, streamed and not.
func TestAnthropicReasoningTokensResponses(t *testing.T) {
	g := startThinkingGateway(t)
	c := g.client(g.keys["default"])
	ctx := context.Background()
	params := responses.ResponseNewParams{Model: "claude-think", Input: textInput("What is 17 + 25?")}
	r, err := c.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	s := collectEvents(t, false, c.Responses.NewStreaming(ctx, params))
	for how, u := range map[string]responses.ResponseUsage{"plain": r.Usage, "streamed": s.final.Usage} {
		if u.OutputTokensDetails.ReasoningTokens != thinkingReasoning || u.OutputTokens != thinkingOutput {
			t.Errorf("%s: output_tokens %d, reasoning_tokens %d; want %d, %d", how, u.OutputTokens,
				u.OutputTokensDetails.ReasoningTokens, thinkingOutput, thinkingReasoning)
		}
	}
}
