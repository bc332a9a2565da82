package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// geminiModels are public ids served by the fake Gemini upstream; the
// upstream id (in the URL) picks its scenario.
var geminiModels = []config.ModelRef{
	{ID: "gemini-test", Upstream: "gemini-2.5-flash"},
	{ID: "gemini-tools", Upstream: "tool-call"},
	{ID: "gemini-quota", Upstream: "err-429"},
	{ID: "gemini-invalid", Upstream: "err-400"},
	{ID: "gemini-midstream", Upstream: "midstream-error"},
}

// startGeminiGateway runs the gateway with a type gemini provider in front
// of the fake Gemini upstream.
func startGeminiGateway(t *testing.T) (*gateway, *providertest.Gemini) {
	t.Helper()
	fake := providertest.NewGemini(t)
	g := startGateway(t, func(c *config.Config) {
		c.Providers = append(c.Providers, config.Provider{Name: "fake-gemini", Type: "gemini", BaseURL: fake.URL,
			APIKey: "x", Models: geminiModels, Weight: 1,
			Timeout: config.Duration(3 * time.Second), IdleTimeout: config.Duration(time.Second)})
		in, out := config.Amount(money.Unit), config.Amount(2*money.Unit)
		for _, m := range geminiModels {
			c.Models = append(c.Models, config.ModelConfig{ID: m.ID, Input: &in, Output: &out})
		}
	})
	return g, fake
}

// geminiSent is the part of the upstream body the tests look at.
type geminiSent struct {
	Contents []struct {
		Role  string           `json:"role"`
		Parts []map[string]any `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts []map[string]any `json:"parts"`
	} `json:"systemInstruction"`
	GenerationConfig map[string]any `json:"generationConfig"`
}

func TestGeminiChat(t *testing.T) {
	g, fake := startGeminiGateway(t)
	c := g.client(g.keys["default"])
	r, err := c.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{
		Model: "gemini-test",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.SystemMessage("Be brief."), oai.UserMessage("Hello"),
			oai.UserMessage([]oai.ChatCompletionContentPartUnionParam{
				oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64,iVBORw0KGgo="})})},
		Temperature:         oai.Float(0.5),
		MaxCompletionTokens: oai.Int(200),
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "gemini-test" || r.Choices[0].Message.Content != "Hello! How can I help you today?" || r.Choices[0].FinishReason != "stop" {
		t.Errorf("response %+v", r)
	}
	if r.ID != "chatcmpl-fake-text-1" || r.Usage.PromptTokens != 6 || r.Usage.CompletionTokens != 9 || r.Usage.TotalTokens != 15 {
		t.Errorf("id %q usage %+v", r.ID, r.Usage)
	}
	last := fake.Last()
	if last.Model != "gemini-2.5-flash" || last.Header.Get("X-Goog-Api-Key") != "x" || !strings.HasPrefix(last.Header.Get("User-Agent"), "modelgate/") ||
		last.Header.Get("Authorization") != "" {
		t.Errorf("upstream got model %q headers %v", last.Model, last.Header)
	}
	var sent geminiSent
	if err := json.Unmarshal(last.Body, &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.Contents) != 1 || len(sent.Contents[0].Parts) != 2 || sent.Contents[0].Parts[1]["inlineData"] == nil ||
		sent.SystemInstruction == nil || sent.GenerationConfig["maxOutputTokens"] != 200.0 || sent.GenerationConfig["temperature"] != 0.5 {
		t.Errorf("upstream body %s", last.Body)
	}
	recs := g.usage()
	if len(recs) != 1 || recs[0].PromptTokens != 6 || recs[0].CompletionTokens != 9 || recs[0].Model != "gemini-test" {
		t.Errorf("usage records %+v", recs)
	}
}

func TestGeminiStream(t *testing.T) {
	g, fake := startGeminiGateway(t)
	c := g.client(g.keys["default"])
	for _, includeUsage := range []bool{false, true} {
		s := c.Chat.Completions.NewStreaming(context.Background(), streamParams("gemini-test", includeUsage))
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
		if got := acc.Choices[0].Message.Content; got != "Hello! How can I help you today?" || acc.Choices[0].FinishReason != "stop" {
			t.Errorf("content %q finish %q", got, acc.Choices[0].FinishReason)
		}
		if includeUsage && (usageChunks != 1 || acc.Usage.PromptTokens != 6 || acc.Usage.CompletionTokens != 9) {
			t.Errorf("usage %+v in %d chunks", acc.Usage, usageChunks)
		}
		if !includeUsage && usageChunks != 0 {
			t.Errorf("usage sent in %d chunks though not asked for", usageChunks)
		}
		if u := fake.Last().Header.Get("Accept"); u != "text/event-stream" {
			t.Errorf("stream request Accept %q", u)
		}
	}
	for _, r := range g.usage() {
		if r.PromptTokens != 6 || r.CompletionTokens != 9 || !r.Stream {
			t.Errorf("stream usage record %+v", r)
		}
	}
}

func TestGeminiToolConversation(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			g, fake := startGeminiGateway(t)
			c := g.client(g.keys["default"])
			params := oai.ChatCompletionNewParams{
				Model:      "gemini-tools",
				Messages:   []oai.ChatCompletionMessageParamUnion{oai.UserMessage("What is the weather in Paris?")},
				Tools:      []oai.ChatCompletionToolUnionParam{weatherTool()},
				ToolChoice: oai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: oai.String("required")},
			}
			first := complete(t, c, params, stream)
			ch := first.Choices[0]
			if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 {
				t.Fatalf("first turn: finish %q, %d tool calls", ch.FinishReason, len(ch.Message.ToolCalls))
			}
			call := ch.Message.ToolCalls[0]
			if call.Function.Name != "get_weather" || call.ID == "" || call.Function.Arguments != `{"city":"Paris"}` {
				t.Fatalf("tool call %+v", call)
			}
			var sent struct {
				ToolConfig struct {
					FunctionCallingConfig struct {
						Mode string `json:"mode"`
					} `json:"functionCallingConfig"`
				} `json:"toolConfig"`
				Tools []struct {
					FunctionDeclarations []map[string]any `json:"functionDeclarations"`
				} `json:"tools"`
			}
			_ = json.Unmarshal(fake.Last().Body, &sent)
			if sent.ToolConfig.FunctionCallingConfig.Mode != "ANY" || len(sent.Tools) != 1 || len(sent.Tools[0].FunctionDeclarations) != 1 {
				t.Errorf("first upstream body %s", fake.Last().Body)
			}
			params.Messages = append(params.Messages, ch.Message.ToParam(),
				oai.ToolMessage(`{"temp_c": 18, "sky": "clear"}`, call.ID))
			params.ToolChoice = oai.ChatCompletionToolChoiceOptionUnionParam{}
			second := complete(t, c, params, false)
			if second.Choices[0].FinishReason != "stop" || second.Choices[0].Message.Content != "It is 18°C and clear in Paris." {
				t.Fatalf("second turn: %+v", second.Choices[0])
			}
			var sent2 geminiSent
			if err := json.Unmarshal(fake.Last().Body, &sent2); err != nil {
				t.Fatal(err)
			}
			if n := len(sent2.Contents); n != 3 || sent2.Contents[1].Role != "model" || sent2.Contents[2].Role != "user" {
				t.Fatalf("second upstream body %s", fake.Last().Body)
			}
			fr, _ := sent2.Contents[2].Parts[0]["functionResponse"].(map[string]any)
			if fr["name"] != "get_weather" || fr["response"].(map[string]any)["sky"] != "clear" {
				t.Errorf("functionResponse %v", fr)
			}
		})
	}
}

func TestGeminiErrors(t *testing.T) {
	g, _ := startGeminiGateway(t)
	c := g.client(g.keys["default"])
	ctx := context.Background()
	hello := []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Hello")}
	_, err := c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gemini-quota", Messages: hello})
	apiError(t, err, 429, "rate_limit_exceeded")
	_, err = c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gemini-invalid", Messages: hello})
	if e := apiError(t, err, 400, "invalid_argument"); !strings.Contains(e.Message, "max_output_tokens") {
		t.Errorf("400 message %q", e.Message)
	}
	// The SSRF guard refuses to fetch an image from the loopback interface.
	_, err = c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gemini-test", Messages: []oai.ChatCompletionMessageParamUnion{
		oai.UserMessage([]oai.ChatCompletionContentPartUnionParam{
			oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: g.URL + "/cat.png"})})}})
	if e := apiError(t, err, 400, "invalid_request_error"); e.Param != "messages" {
		t.Errorf("image fetch refusal: param %q", e.Param)
	}
	s := c.Chat.Completions.NewStreaming(ctx, streamParams("gemini-midstream", false))
	var text strings.Builder
	for s.Next() {
		if len(s.Current().Choices) > 0 {
			text.WriteString(s.Current().Choices[0].Delta.Content)
		}
	}
	if s.Err() == nil || text.String() != "Hello" {
		t.Errorf("midstream error: text %q, err %v", text.String(), s.Err())
	}
}
