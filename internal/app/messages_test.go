package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/modelgate/modelgate/internal/store"
)

// claudeClient is anthropic-sdk-go pointed at the gateway, without retries
// so each error is seen as the gateway sent it.
func (g *gateway) claudeClient(key string, opts ...option.RequestOption) anthropic.Client {
	base := []option.RequestOption{option.WithBaseURL(g.URL), option.WithAPIKey(key), option.WithMaxRetries(0)}
	return anthropic.NewClient(append(base, opts...)...)
}

func claudeHello(model string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: 256,
		System:   []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello"))}}
}

// onlyRecord is the one usage record of the gateway's run.
func onlyRecord(t *testing.T, g *gateway) store.UsageRecord {
	t.Helper()
	recs := g.usage()
	if len(recs) != 1 {
		t.Fatalf("%d usage records, want 1: %+v", len(recs), recs)
	}
	return recs[0]
}

func TestMessagesPassThrough(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "stream"}[stream], func(t *testing.T) {
			g, fake := startAnthropicGateway(t)
			key := g.keys["default"]
			c := g.claudeClient(key, option.WithHeader("anthropic-beta", "claude-code-20250219,interleaved-thinking-2025-05-14"),
				option.WithHeader("x-app", "cli"))
			var msg anthropic.Message
			if stream {
				s := c.Messages.NewStreaming(context.Background(), claudeHello("claude-test"))
				for s.Next() {
					if err := msg.Accumulate(s.Current()); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
			} else {
				m, err := c.Messages.New(context.Background(), claudeHello("claude-test"))
				if err != nil {
					t.Fatal(err)
				}
				msg = *m
			}
			want := map[bool]string{false: "Hello! How can I help you today?", true: "Héllo 世界 👋, how can I help?"}[stream]
			if msg.Model != "claude-test" || len(msg.Content) != 1 || msg.Content[0].Text != want || msg.StopReason != "end_turn" {
				t.Errorf("message %+v", msg)
			}
			last := fake.Last()
			h := last.Header
			if last.Model != "claude-sonnet-4-5" || h.Get("X-Api-Key") != "x" || h.Get("Authorization") != "" ||
				h.Get("Anthropic-Version") != "2023-06-01" || h.Get("Anthropic-Beta") != "claude-code-20250219,interleaved-thinking-2025-05-14" ||
				h.Get("X-App") != "" || h.Get("X-Stainless-Lang") != "" {
				t.Errorf("upstream got model %q headers %v", last.Model, h)
			}
			if strings.Contains(string(last.Body), key) || !strings.Contains(string(last.Body), `"system":[{"text":"Be brief.","type":"text"}]`) {
				t.Errorf("upstream body %s", last.Body)
			}
			rec := onlyRecord(t, g)
			wantIn, wantOut := map[bool]int64{false: 16, true: 125}[stream], map[bool]int64{false: 10, true: 15}[stream]
			if rec.Endpoint != "messages" || rec.Model != "claude-test" || rec.Status != http.StatusOK || rec.Stream != stream ||
				rec.PromptTokens != wantIn || rec.CompletionTokens != wantOut || rec.Cost <= 0 {
				t.Errorf("record %+v", rec)
			}
		})
	}
}

// TestMessagesTranslated sends a Messages request for an OpenAI model with
// Claude Code's max_tokens (32,000): it goes upstream as a chat completion
// with max_tokens lowered to gpt-4o-mini's output limit (16,384), and the
// answer comes back as a Message.
func TestMessagesTranslated(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "stream"}[stream], func(t *testing.T) {
			g, _ := startAnthropicGateway(t)
			c := g.claudeClient(g.keys["default"])
			p := claudeHello("gpt-4o-mini")
			p.MaxTokens = 32000
			if !stream {
				p.MaxTokens = 20000 // the SDK refuses more without streaming
			}
			var msg anthropic.Message
			if stream {
				s := c.Messages.NewStreaming(context.Background(), p)
				for s.Next() {
					if err := msg.Accumulate(s.Current()); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
			} else {
				m, err := c.Messages.New(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				msg = *m
			}
			if msg.Model != "gpt-4o-mini" || len(msg.Content) != 1 || !strings.HasPrefix(msg.Content[0].Text, "Hello") ||
				msg.StopReason != "end_turn" || msg.Usage.InputTokens <= 0 || msg.Usage.OutputTokens <= 0 {
				t.Errorf("message %+v", msg)
			}
			sent := g.upstream.Last()
			var chat struct {
				Messages []struct{ Role string } `json:"messages"`
				Max      int64                   `json:"max_tokens"`
			}
			if err := json.Unmarshal(sent.Body, &chat); err != nil || len(chat.Messages) != 2 || chat.Messages[0].Role != "system" || chat.Max != 16384 {
				t.Errorf("upstream chat body %s", sent.Body)
			}
			rec := onlyRecord(t, g)
			if rec.Endpoint != "messages" || rec.Model != "gpt-4o-mini" || rec.Status != http.StatusOK || rec.PromptTokens <= 0 || rec.Cost <= 0 {
				t.Errorf("record %+v", rec)
			}
		})
	}
}

func TestMessagesToolRoundTrip(t *testing.T) {
	for _, model := range []string{"claude-tools", "tool-model"} { // passed through, translated
		for _, stream := range []bool{false, true} {
			t.Run(model+map[bool]string{false: "/json", true: "/stream"}[stream], func(t *testing.T) {
				g, _ := startAnthropicGateway(t)
				c := g.claudeClient(g.keys["default"])
				p := claudeHello(model)
				p.Tools = []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather", Description: anthropic.String("Weather"),
					InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"location": map[string]any{"type": "string"}}}}}}
				turn := func() anthropic.Message {
					var msg anthropic.Message
					if !stream {
						m, err := c.Messages.New(context.Background(), p)
						if err != nil {
							t.Fatal(err)
						}
						return *m
					}
					s := c.Messages.NewStreaming(context.Background(), p)
					for s.Next() {
						if err := msg.Accumulate(s.Current()); err != nil {
							t.Fatal(err)
						}
					}
					if err := s.Err(); err != nil {
						t.Fatal(err)
					}
					return msg
				}
				first := turn()
				var use *anthropic.ContentBlockUnion
				for i := range first.Content {
					if first.Content[i].Type == "tool_use" {
						use = &first.Content[i]
					}
				}
				if first.StopReason != "tool_use" || use == nil || use.Name == "" || use.ID == "" || !json.Valid(use.Input) {
					t.Fatalf("first turn %+v", first)
				}
				p.Messages = append(p.Messages, first.ToParam(),
					anthropic.NewUserMessage(anthropic.NewToolResultBlock(use.ID, "22 degrees and sunny", false)))
				second := turn()
				if second.StopReason != "end_turn" || len(second.Content) == 0 || second.Content[0].Text == "" {
					t.Errorf("second turn %+v", second)
				}
			})
		}
	}
}

func TestMessagesErrors(t *testing.T) {
	g, _ := startAnthropicGateway(t)
	broke := g.newPayer("default", 0, 0, time.Time{})
	cases := []struct {
		name, key, model string
		status           int
		typ              string
	}{
		{"bad key", "sk-wrong", "claude-test", 401, "authentication_error"},
		{"unknown model", g.keys["default"], "no-such-model", 404, "not_found_error"},
		{"model outside the group", g.keys["basic"], "claude-test", 404, "not_found_error"},
		{"no balance", broke.secret, "claude-test", 402, "billing_error"},
		{"vendor overloaded", g.keys["default"], "claude-overloaded", 529, "overloaded_error"},
		{"vendor refuses", g.keys["default"], "claude-invalid", 400, "invalid_request_error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := g.claudeClient(tc.key)
			_, err := c.Messages.New(context.Background(), claudeHello(tc.model))
			var ae *anthropic.Error
			if !errors.As(err, &ae) {
				t.Fatalf("err %v", err)
			}
			checkClaudeError(t, ae.StatusCode, ae.Response.Header, []byte(ae.RawJSON()), tc.status, tc.typ)
		})
	}
	raw := []struct{ name, body, typ string }{
		{"no max_tokens", `{"model":"claude-test","messages":[{"role":"user","content":"hi"}]}`, "invalid_request_error"},
		{"empty messages", `{"model":"claude-test","max_tokens":5,"messages":[]}`, "invalid_request_error"},
		{"stream yes", `{"model":"claude-test","max_tokens":5,"stream":"yes","messages":[{"role":"user","content":"hi"}]}`, "invalid_request_error"},
		{"unknown block", `{"model":"gpt-4o-mini","max_tokens":5,"messages":[{"role":"user","content":[{"type":"hologram"}]}]}`, "invalid_request_error"},
		{"orphan tool_result", `{"model":"gpt-4o-mini","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"1"}]}]}`, "invalid_request_error"},
		{"server tool translated", `{"model":"gpt-4o-mini","max_tokens":5,"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":"hi"}]}`, "invalid_request_error"},
	}
	for _, tc := range raw {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/messages?beta=true", strings.NewReader(tc.body))
			req.Header.Set("x-api-key", g.keys["default"])
			req.Header.Set("anthropic-version", "2023-06-01")
			req.Header.Set("content-type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b json.RawMessage
			_ = json.NewDecoder(resp.Body).Decode(&b)
			checkClaudeError(t, resp.StatusCode, resp.Header, b, 400, tc.typ)
		})
	}
	for _, r := range g.usage() {
		if r.Endpoint == "messages" && r.Cost != 0 {
			t.Errorf("a refused request was charged: %+v", r)
		}
	}
	if n := len(g.upstream.Received()); n != 0 {
		t.Errorf("refused requests reached the OpenAI upstream %d times", n)
	}
}

// checkClaudeError checks an error answer's status, its Anthropic shape
// and that its request_id is the request-id and X-Request-Id headers'.
func checkClaudeError(t *testing.T, status int, h http.Header, body []byte, wantStatus int, wantType string) {
	t.Helper()
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if status != wantStatus || e.Type != "error" || e.Error.Type != wantType || e.Error.Message == "" {
		t.Errorf("status %d body %s, want %d %s", status, body, wantStatus, wantType)
	}
	if e.RequestID == "" || h.Get("Request-Id") != e.RequestID || h.Get("X-Request-Id") != e.RequestID {
		t.Errorf("request ids: body %q request-id %q x-request-id %q", e.RequestID, h.Get("Request-Id"), h.Get("X-Request-Id"))
	}
}

func TestMessagesCountTokensAndModels(t *testing.T) {
	g, fake := startAnthropicGateway(t)
	c := g.claudeClient(g.keys["default"])
	for _, model := range []string{"gpt-4o-mini", "claude-test"} {
		n, err := c.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{Model: anthropic.Model(model),
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello there, how are you?"))}})
		if err != nil {
			t.Fatal(model, err)
		}
		if n.InputTokens < 5 || n.InputTokens > 40 || model == "claude-test" && n.InputTokens != 14 {
			t.Errorf("%s: input_tokens %d", model, n.InputTokens)
		}
	}
	// Anthropic counted the Claude model's (the fake always says 14).
	if last := fake.Last(); last.Model != "claude-sonnet-4-5" || last.Header.Get("X-Api-Key") != "x" {
		t.Errorf("count_tokens upstream got model %q headers %v", last.Model, last.Header)
	}
	page, err := c.Models.List(context.Background(), anthropic.ModelListParams{Limit: anthropic.Int(2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 2 || !page.HasMore || page.FirstID != page.Data[0].ID || page.LastID != page.Data[1].ID || page.Data[0].Type != "model" {
		t.Errorf("first page %+v", page)
	}
	next, err := c.Models.List(context.Background(), anthropic.ModelListParams{Limit: anthropic.Int(2), AfterID: anthropic.String(page.LastID)})
	if err != nil || len(next.Data) == 0 || next.Data[0].ID == page.Data[1].ID {
		t.Errorf("next page %+v, %v", next, err)
	}
	bc := g.claudeClient(g.keys["basic"])
	basic, err := bc.Models.List(context.Background(), anthropic.ModelListParams{Limit: anthropic.Int(1000)})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range basic.Data {
		if m.ID != "gpt-4o-mini" && !strings.HasPrefix(m.ID, "demo-") {
			t.Errorf("basic group sees %q", m.ID)
		}
	}
	resp, err := http.Head(g.URL + "/")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD /: %v %v", resp, err)
	}
	for _, r := range g.usage() {
		if r.Endpoint == "messages.count_tokens" {
			t.Errorf("count_tokens left a usage record: %+v", r)
		}
	}
}
