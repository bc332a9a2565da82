package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// The requests of the parity report, which OpenAI refuses with 400, are
// refused the same way through the official SDK whichever vendor serves
// the model (passed through, translated to Anthropic or Gemini, or the
// demo), and no vendor is called.
func TestContractSameForEveryVendor(t *testing.T) {
	anth, gem := providertest.NewAnthropic(t), providertest.NewGemini(t)
	g := startGateway(t, func(c *config.Config) {
		for _, p := range []config.Provider{
			{Name: "fake-anthropic", Type: "anthropic", BaseURL: anth.URL, APIKey: "x", Models: []config.ModelRef{{ID: "claude-test", Upstream: "claude-sonnet-4-5"}}},
			{Name: "fake-gemini", Type: "gemini", BaseURL: gem.URL, APIKey: "x", Models: []config.ModelRef{{ID: "gemini-test", Upstream: "gemini-2.5-flash"}}},
		} {
			p.Weight, p.Timeout, p.IdleTimeout = 1, config.Duration(3*time.Second), config.Duration(time.Second)
			c.Providers = append(c.Providers, p)
		}
		in, out := config.Amount(money.Unit), config.Amount(2*money.Unit)
		c.Models = append(c.Models, config.ModelConfig{ID: "claude-test", Input: &in, Output: &out},
			config.ModelConfig{ID: "gemini-test", Input: &in, Output: &out})
	})
	c := g.client(g.keys["default"])
	meta := map[string]string{}
	for i := range 17 {
		meta["k"+strings.Repeat("x", i)] = "v"
	}
	cases := []struct {
		name        string
		opts        []option.RequestOption
		param, code string
	}{
		{"reasoning_effort", []option.RequestOption{option.WithJSONSet("reasoning_effort", "foo")}, "reasoning_effort", "invalid_value"},
		{"service_tier", []option.RequestOption{option.WithJSONSet("service_tier", "foo")}, "service_tier", "invalid_value"},
		{"metadata 17 keys", []option.RequestOption{option.WithJSONSet("metadata", meta)}, "metadata", "object_above_max_properties"},
		{"metadata key 65", []option.RequestOption{option.WithJSONSet("metadata", map[string]string{strings.Repeat("k", 65): "v"})},
			"metadata." + strings.Repeat("k", 65), "string_above_max_length"},
		{"metadata value 513", []option.RequestOption{option.WithJSONSet("metadata", map[string]string{"k": strings.Repeat("v", 513)})},
			"metadata.k", "string_above_max_length"},
		{"modalities empty", []option.RequestOption{option.WithJSONSet("modalities", []string{})}, "modalities", "empty_array"},
		{"modalities unknown", []option.RequestOption{option.WithJSONSet("modalities", []string{"video"})}, "modalities[0]", "invalid_value"},
		{"audio format", []option.RequestOption{option.WithJSONSet("audio", map[string]string{"voice": "alloy", "format": "ogg"})}, "audio.format", "invalid_value"},
		{"unknown content part", []option.RequestOption{option.WithJSONSet("messages",
			[]map[string]any{{"role": "user", "content": []map[string]any{{"type": "video_url", "video_url": map[string]string{"url": "x"}}}}})},
			"messages[0].content[0].type", "invalid_value"},
	}
	for _, model := range []string{"gpt-4o-mini", "claude-test", "gemini-test", "demo-chat"} {
		for _, tc := range cases {
			t.Run(model+"/"+tc.name, func(t *testing.T) {
				before := len(g.upstream.Received()) + len(anth.Received()) + len(gem.Received())
				_, err := c.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{
					Model: model, Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}}, tc.opts...)
				e := apiError(t, err, 400, tc.code)
				if e.Param != tc.param || e.Type != "invalid_request_error" || !strings.Contains(e.Message, tc.param) {
					t.Errorf("param %q type %q message %q; want param %q", e.Param, e.Type, e.Message, tc.param)
				}
				if after := len(g.upstream.Received()) + len(anth.Received()) + len(gem.Received()); after != before {
					t.Error("a vendor was called")
				}
			})
		}
	}
}

// A request for more output than the model's published limit is refused
// as OpenAI refuses it; within the limit it is served.
func TestContractOutputLimit(t *testing.T) {
	g := startGateway(t)
	c := g.client(g.keys["default"])
	ctx := context.Background()
	user := []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}
	for _, tc := range []struct {
		name   string
		params oai.ChatCompletionNewParams
		param  string
	}{
		{"max_tokens", oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: user, MaxTokens: oai.Int(1_000_000_000)}, "max_tokens"},
		{"max_completion_tokens", oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: user, MaxCompletionTokens: oai.Int(16385)}, "max_completion_tokens"},
		{"demo", oai.ChatCompletionNewParams{Model: "demo-chat", Messages: user, MaxTokens: oai.Int(4097)}, "max_tokens"},
	} {
		_, err := c.Chat.Completions.New(ctx, tc.params)
		e := apiError(t, err, 400, "invalid_value")
		if e.Param != tc.param || !strings.Contains(e.Message, "is too large") {
			t.Errorf("%s: param %q message %q", tc.name, e.Param, e.Message)
		}
	}
	if _, err := c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: user, MaxTokens: oai.Int(16384)}); err != nil {
		t.Errorf("the limit itself: %v", err)
	}
	_, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "demo-chat", MaxOutputTokens: oai.Int(5000),
		Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("hi")}})
	if e := apiError(t, err, 400, "invalid_value"); e.Param != "max_output_tokens" || !strings.Contains(e.Message, "max_output_tokens is too large") {
		t.Errorf("responses: param %q message %q", e.Param, e.Message)
	}
	_, err = c.Completions.New(ctx, oai.CompletionNewParams{Model: "demo-instruct", MaxTokens: oai.Int(5000),
		Prompt: oai.CompletionNewParamsPromptUnion{OfString: oai.String("hi")}})
	if e := apiError(t, err, 400, "invalid_value"); e.Param != "max_tokens" {
		t.Errorf("completions: param %q message %q", e.Param, e.Message)
	}
}
