package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/provider/demo"
)

func weatherTool() oai.ChatCompletionToolUnionParam {
	return oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "get_current_weather",
		Description: oai.String("Current weather in a city"),
		Parameters: shared.FunctionParameters{
			"type":       "object",
			"properties": map[string]any{"location": map[string]any{"type": "string"}},
			"required":   []string{"location"},
		},
	})
}

func TestChatCompletion(t *testing.T) {
	g := startGateway(t)
	c := g.client(g.keys["default"])
	var raw *http.Response
	resp, err := c.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.SystemMessage("Be brief."), oai.UserMessage("Hello")},
	}, option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Model != "gpt-4o-mini" {
		t.Errorf("response model = %q, want the public id", resp.Model)
	}
	if got := resp.Choices[0].Message.Content; got != "Hello! How can I assist you today?" {
		t.Errorf("content = %q", got)
	}
	if resp.Usage.PromptTokens != 19 || resp.Usage.CompletionTokens != 10 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if raw.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}
	up := g.upstream.Last()
	if up.Model != "gpt-4o-mini-2024-07-18" {
		t.Errorf("upstream got model %q, want the upstream id", up.Model)
	}
	if got := up.Header.Get("Authorization"); got != "Bearer sk-upstream-secret" {
		t.Errorf("upstream Authorization = %q", got)
	}
}

// Every parameter the official API accepts, and fields nobody knows yet,
// reach the upstream exactly as sent; only model changes.
func TestChatPassThrough(t *testing.T) {
	g := startGateway(t)
	c := g.client(g.keys["default"])
	params := oai.ChatCompletionNewParams{
		Model: "gpt-4o-mini",
		Messages: []oai.ChatCompletionMessageParamUnion{
			oai.DeveloperMessage("You are terse."),
			oai.UserMessage([]oai.ChatCompletionContentPartUnionParam{
				oai.TextContentPart("What is in this image?"),
				oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: "https://example.com/cat.png", Detail: "low"}),
			}),
		},
		Tools:               []oai.ChatCompletionToolUnionParam{weatherTool()},
		ToolChoice:          oai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: oai.String("auto")},
		ParallelToolCalls:   oai.Bool(false),
		ResponseFormat:      oai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}},
		Stop:                oai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"END", "STOP"}},
		N:                   oai.Int(2),
		Seed:                oai.Int(42),
		Logprobs:            oai.Bool(true),
		TopLogprobs:         oai.Int(3),
		MaxTokens:           oai.Int(100),
		MaxCompletionTokens: oai.Int(120),
		Temperature:         oai.Float(0.3),
		TopP:                oai.Float(0.9),
		User:                oai.String("user-1234"),
		LogitBias:           map[string]int64{"50256": -100},
	}
	_, err := c.Chat.Completions.New(context.Background(), params,
		option.WithJSONSet("x_vendor_extension", map[string]any{"keep": []int{1, 2, 3}}),
		option.WithJSONSet("functions", []map[string]any{{"name": "legacy_fn", "parameters": map[string]any{"type": "object"}}}),
		option.WithJSONSet("function_call", "auto"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(g.upstream.Last().Body, &got); err != nil {
		t.Fatal(err)
	}
	if got["model"] != "gpt-4o-mini-2024-07-18" {
		t.Errorf("upstream model = %v", got["model"])
	}
	// Rebuild what the client sent by marshalling the same params.
	sent, _ := json.Marshal(params)
	var want map[string]any
	_ = json.Unmarshal(sent, &want)
	want["x_vendor_extension"] = map[string]any{"keep": []any{1.0, 2.0, 3.0}}
	want["functions"] = []any{map[string]any{"name": "legacy_fn", "parameters": map[string]any{"type": "object"}}}
	want["function_call"] = "auto"
	want["model"] = "gpt-4o-mini-2024-07-18"
	if !reflect.DeepEqual(got, want) {
		t.Errorf("upstream body differs from what the client sent:\n got %v\nwant %v", got, want)
	}
}

// A tool call and the follow-up turn, through the official SDK, against
// both the fake vendor and the built-in demo provider.
func TestToolConversation(t *testing.T) {
	g := startGateway(t)
	c := g.client(g.keys["default"])
	for _, model := range []string{"tool-model", "demo-chat"} {
		for _, stream := range []bool{false, true} {
			name := model + map[bool]string{false: "/plain", true: "/stream"}[stream]
			t.Run(name, func(t *testing.T) {
				params := oai.ChatCompletionNewParams{
					Model:    model,
					Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("What is the weather in Boston?")},
					Tools:    []oai.ChatCompletionToolUnionParam{weatherTool()},
				}
				first := complete(t, c, params, stream)
				if first.Choices[0].FinishReason != "tool_calls" || len(first.Choices[0].Message.ToolCalls) != 1 {
					t.Fatalf("first turn: finish %q, %d tool calls", first.Choices[0].FinishReason, len(first.Choices[0].Message.ToolCalls))
				}
				call := first.Choices[0].Message.ToolCalls[0]
				if call.Function.Name != "get_current_weather" || call.ID == "" {
					t.Fatalf("tool call = %+v", call)
				}
				var args map[string]any
				if err := json.Unmarshal([]byte(call.Function.Arguments), &args); err != nil || args["location"] == nil {
					t.Fatalf("arguments %q: %v", call.Function.Arguments, err)
				}
				params.Messages = append(params.Messages, first.Choices[0].Message.ToParam(),
					oai.ToolMessage(`{"temperature_c": 22, "sky": "sunny"}`, call.ID))
				second := complete(t, c, params, stream)
				if second.Choices[0].FinishReason != "stop" || second.Choices[0].Message.Content == "" {
					t.Fatalf("second turn: %+v", second.Choices[0])
				}
			})
		}
	}
}

// complete runs one turn, streamed (accumulated) or not.
func complete(t *testing.T, c oai.Client, p oai.ChatCompletionNewParams, stream bool) *oai.ChatCompletion {
	t.Helper()
	ctx := context.Background()
	if !stream {
		r, err := c.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	s := c.Chat.Completions.NewStreaming(ctx, p)
	var acc oai.ChatCompletionAccumulator
	n := 0
	for s.Next() {
		acc.AddChunk(s.Current())
		if s.Current().Model != p.Model {
			t.Fatalf("chunk model %q, want %q", s.Current().Model, p.Model)
		}
		n++
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("only %d chunks", n)
	}
	return &acc.ChatCompletion
}

func TestModels(t *testing.T) {
	g := startGateway(t)
	ctx := context.Background()
	ids := func(key string) []string {
		c := g.client(key)
		page, err := c.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range page.Data {
			if m.Object != "model" || m.OwnedBy == "" {
				t.Errorf("model %+v lacks object or owned_by", m)
			}
			out = append(out, m.ID)
		}
		return out
	}
	if got, want := ids(g.keys["basic"]), []string{"demo-chat", "demo-echo", "demo-embed", "demo-image", "demo-instruct", "demo-transcribe",
		"demo-video-landscape", "demo-video-portrait", "gpt-4o-mini"}; !reflect.DeepEqual(got, want) {
		t.Errorf("basic group sees %v, want %v", got, want)
	}
	if got := ids(g.keys["default"]); len(got) != len(upstreamModels)+len(demo.Models)+1 {
		t.Errorf("default group sees %d models: %v", len(got), got)
	}
	basic, def := g.client(g.keys["basic"]), g.client(g.keys["default"])
	m, err := basic.Models.Get(ctx, "demo-chat")
	if err != nil || m.ID != "demo-chat" || m.OwnedBy != "demo" || m.Created == 0 {
		t.Fatalf("get demo-chat: %+v, %v", m, err)
	}
	m, err = def.Models.Get(ctx, "gpt-4o-mini")
	// Known to the catalog: its vendor label and release date; unknown
	// models keep the provider's label.
	if err != nil || m.OwnedBy != "openai" || m.Created != 1721260800 {
		t.Fatalf("get gpt-4o-mini: %+v, %v", m, err)
	}
	// Outside the group and unknown look the same.
	_, err = basic.Models.Get(ctx, "tool-model")
	e1 := apiError(t, err, 404, "model_not_found")
	_, err = basic.Models.Get(ctx, "no-such-model")
	e2 := apiError(t, err, 404, "model_not_found")
	if e1.Message == "" || e2.Message == "" {
		t.Error("404 without a message")
	}
	_, err = basic.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{
		Model: "tool-model", Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}})
	apiError(t, err, 404, "model_not_found")
	unknown := g.client("sk-mg-unknown0000000000000000000000000")
	if _, err := unknown.Models.List(ctx); err == nil {
		t.Fatal("unknown key listed models")
	}
}
