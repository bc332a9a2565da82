package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// anthropicModels are public ids served by the fake Anthropic upstream;
// the upstream id picks its scenario.
var anthropicModels = []config.ModelRef{
	{ID: "claude-test", Upstream: "claude-sonnet-4-5"},
	{ID: "claude-tools", Upstream: "tool-call"},
	{ID: "claude-overloaded", Upstream: "err-529"},
	{ID: "claude-invalid", Upstream: "err-400"},
	{ID: "claude-midstream", Upstream: "midstream-error"},
}

// startAnthropicGateway runs the gateway with a type anthropic provider in
// front of the fake Anthropic upstream.
func startAnthropicGateway(t *testing.T) (*gateway, *providertest.Anthropic) {
	t.Helper()
	fake := providertest.NewAnthropic(t)
	g := startGateway(t, func(c *config.Config) {
		c.Providers = append(c.Providers, config.Provider{Name: "fake-anthropic", Type: "anthropic", BaseURL: fake.URL,
			APIKey: "x", Models: anthropicModels, Weight: 1,
			Timeout: config.Duration(3 * time.Second), IdleTimeout: config.Duration(time.Second)})
		in, out := config.Amount(money.Unit), config.Amount(2*money.Unit)
		for _, m := range anthropicModels {
			c.Models = append(c.Models, config.ModelConfig{ID: m.ID, Input: &in, Output: &out})
		}
	})
	return g, fake
}

func TestAnthropicChat(t *testing.T) {
	g, fake := startAnthropicGateway(t)
	c := g.client(g.keys["default"])
	r, err := c.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{
		Model: "claude-test",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.SystemMessage("Be brief."), oai.UserMessage("Hello"),
			oai.UserMessage("Are you there?")},
		Temperature: oai.Float(1.7),
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "claude-test" || r.Choices[0].Message.Content != "Hello! How can I help you today?" || r.Choices[0].FinishReason != "stop" {
		t.Errorf("response %+v", r)
	}
	if !strings.HasPrefix(r.ID, "chatcmpl-msg_") || r.Usage.PromptTokens != 16 || r.Usage.CompletionTokens != 10 || r.Usage.PromptTokensDetails.CachedTokens != 4 {
		t.Errorf("id %q usage %+v", r.ID, r.Usage)
	}
	last := fake.Last()
	if last.Model != "claude-sonnet-4-5" || last.Header.Get("X-Api-Key") != "x" || last.Header.Get("Anthropic-Version") != "2023-06-01" ||
		!strings.HasPrefix(last.Header.Get("User-Agent"), "modelgate/") {
		t.Errorf("upstream got model %q headers %v", last.Model, last.Header)
	}
	var sent struct {
		System      []map[string]any `json:"system"`
		Messages    []map[string]any `json:"messages"`
		MaxTokens   int64            `json:"max_tokens"`
		Temperature float64          `json:"temperature"`
	}
	if err := json.Unmarshal(last.Body, &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.System) != 1 || len(sent.Messages) != 1 || sent.MaxTokens <= 0 || sent.Temperature != 1 {
		t.Errorf("upstream body %s", last.Body)
	}
	recs := g.usage()
	if len(recs) != 1 || recs[0].PromptTokens != 16 || recs[0].CompletionTokens != 10 {
		t.Errorf("usage records %+v", recs)
	}
}

func TestAnthropicStream(t *testing.T) {
	g, _ := startAnthropicGateway(t)
	c := g.client(g.keys["default"])
	for _, includeUsage := range []bool{false, true} {
		s := c.Chat.Completions.NewStreaming(context.Background(), streamParams("claude-test", includeUsage))
		var acc oai.ChatCompletionAccumulator
		usageChunks := 0
		for s.Next() {
			acc.AddChunk(s.Current())
			if s.Current().JSON.Usage.Valid() {
				usageChunks++
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if got := acc.Choices[0].Message.Content; got != "Héllo 世界 👋, how can I help?" {
			t.Errorf("content %q", got)
		}
		if acc.Choices[0].FinishReason != "stop" {
			t.Errorf("finish %q", acc.Choices[0].FinishReason)
		}
		if includeUsage && (usageChunks != 1 || acc.Usage.PromptTokens != 125 || acc.Usage.CompletionTokens != 15) {
			t.Errorf("usage %+v in %d chunks", acc.Usage, usageChunks)
		}
		if !includeUsage && usageChunks != 0 {
			t.Errorf("usage sent in %d chunks though not asked for", usageChunks)
		}
	}
}

func TestAnthropicToolConversation(t *testing.T) {
	g, fake := startAnthropicGateway(t)
	c := g.client(g.keys["default"])
	tool := oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name: "get_weather", Description: oai.String("Current weather in a city"),
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
	})
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			params := oai.ChatCompletionNewParams{
				Model:    "claude-tools",
				Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("What is the weather in Paris?")},
				Tools:    []oai.ChatCompletionToolUnionParam{tool},
			}
			first := complete(t, c, params, stream)
			if first.Choices[0].FinishReason != "tool_calls" || len(first.Choices[0].Message.ToolCalls) != 1 {
				t.Fatalf("first turn: %+v", first.Choices[0])
			}
			call := first.Choices[0].Message.ToolCalls[0]
			var args map[string]any
			if err := json.Unmarshal([]byte(call.Function.Arguments), &args); err != nil || args["city"] != "Paris" || call.Function.Name != "get_weather" {
				t.Fatalf("tool call %+v: %v", call, err)
			}
			params.Messages = append(params.Messages, first.Choices[0].Message.ToParam(), oai.ToolMessage("18C, sunny", call.ID))
			second := complete(t, c, params, stream)
			if second.Choices[0].FinishReason != "stop" || second.Choices[0].Message.Content == "" {
				t.Fatalf("second turn: %+v", second.Choices[0])
			}
			var sent struct {
				Messages []struct {
					Role    string `json:"role"`
					Content []struct {
						Type      string         `json:"type"`
						ID        string         `json:"id"`
						ToolUseID string         `json:"tool_use_id"`
						Input     map[string]any `json:"input"`
					} `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(fake.Last().Body, &sent); err != nil {
				t.Fatal(err)
			}
			m := sent.Messages
			if len(m) != 3 || m[1].Role != "assistant" || m[2].Role != "user" || m[2].Content[0].Type != "tool_result" ||
				m[2].Content[0].ToolUseID != call.ID {
				t.Fatalf("second upstream request: %s", fake.Last().Body)
			}
			var use bool
			for _, b := range m[1].Content {
				use = use || (b.Type == "tool_use" && b.ID == call.ID && b.Input["city"] == "Paris")
			}
			if !use {
				t.Fatalf("assistant turn lacks the tool_use: %s", fake.Last().Body)
			}
		})
	}
}

func TestAnthropicErrors(t *testing.T) {
	g, _ := startAnthropicGateway(t)
	c := g.client(g.keys["default"])
	ctx := context.Background()
	msg := []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}
	_, err := c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "claude-overloaded", Messages: msg})
	apiError(t, err, 503, "upstream_unavailable")
	_, err = c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "claude-invalid", Messages: msg})
	if e := apiError(t, err, 400, "invalid_request_error"); !strings.Contains(e.Message, "non-empty") {
		t.Errorf("vendor message not shown: %q", e.Message)
	}
	// Rejected by the adapter, never sent upstream.
	_, err = c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "claude-test", Messages: msg, N: oai.Int(2)})
	if e := apiError(t, err, 400, "invalid_request_error"); e.Param != "n" {
		t.Errorf("param %q", e.Param)
	}
	s := c.Chat.Completions.NewStreaming(ctx, streamParams("claude-midstream", false))
	n := 0
	for s.Next() {
		n++
	}
	if s.Err() == nil || n == 0 {
		t.Fatalf("midstream error: %d chunks, err %v", n, s.Err())
	}
	var e *oai.Error
	if errors.As(s.Err(), &e) && e.Code != "" && e.Code != "upstream_unavailable" {
		t.Errorf("midstream error code %q", e.Code)
	}
}
