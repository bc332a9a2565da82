package demo

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
)

func chat(t *testing.T, model, body string) map[string]any {
	t.Helper()
	p := New(func() time.Time { return time.Unix(1700000000, 0) })
	res, err := p.Chat(context.Background(), &provider.ChatRequest{PublicModel: model, UpstreamModel: model, Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(res.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func message(out map[string]any) map[string]any {
	return out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
}

func TestDeterministic(t *testing.T) {
	body := `{"model":"demo-chat","messages":[{"role":"user","content":"Hello there"}]}`
	a, b := chat(t, "demo-chat", body), chat(t, "demo-chat", body)
	if a["id"] != b["id"] || message(a)["content"] != message(b)["content"] {
		t.Fatal("same request, different answers")
	}
	if !strings.Contains(message(a)["content"].(string), `"Hello there"`) || a["model"] != "demo-chat" {
		t.Fatalf("answer %v", a)
	}
}

func TestCases(t *testing.T) {
	weather := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"unit":{"enum":["c","f"]}},"required":["city","days","unit"]}}},{"type":"function","function":{"name":"other"}}]`
	cases := []struct {
		name, model, body string
		check             func(t *testing.T, out map[string]any)
	}{
		{"echo", "demo-echo", `{"messages":[{"role":"user","content":[{"type":"text","text":"ping"},{"type":"image_url","image_url":{"url":"x"}}]}]}`,
			func(t *testing.T, out map[string]any) {
				if got := message(out)["content"]; got != "ping[image]" {
					t.Errorf("echo = %v", got)
				}
			}},
		{"tool call", "demo-chat", `{"messages":[{"role":"user","content":"weather?"}],` + weather + `}`,
			func(t *testing.T, out map[string]any) {
				tc := message(out)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
				if tc["name"] != "get_weather" || tc["arguments"] != `{"city":"demo","days":1,"unit":"c"}` {
					t.Errorf("tool call %v", tc)
				}
				if out["choices"].([]any)[0].(map[string]any)["finish_reason"] != "tool_calls" {
					t.Error("finish_reason")
				}
			}},
		{"named tool", "demo-chat", `{"messages":[{"role":"user","content":"x"}],` + weather + `,"tool_choice":{"type":"function","function":{"name":"other"}}}`,
			func(t *testing.T, out map[string]any) {
				tc := message(out)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
				if tc["name"] != "other" || tc["arguments"] != `{}` {
					t.Errorf("tool call %v", tc)
				}
			}},
		{"tool_choice none", "demo-chat", `{"messages":[{"role":"user","content":"x"}],` + weather + `,"tool_choice":"none"}`,
			func(t *testing.T, out map[string]any) {
				if message(out)["tool_calls"] != nil {
					t.Error("tool called despite tool_choice none")
				}
			}},
		{"after tool", "demo-chat", `{"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"sunny"}],` + weather + `}`,
			func(t *testing.T, out map[string]any) {
				if got := message(out)["content"]; got != "The get_weather tool returned: sunny" {
					t.Errorf("after tool: %v", got)
				}
			}},
		{"max_tokens", "demo-chat", `{"messages":[{"role":"user","content":"x"}],"max_tokens":3}`,
			func(t *testing.T, out map[string]any) {
				if out["choices"].([]any)[0].(map[string]any)["finish_reason"] != "length" || len(strings.Fields(message(out)["content"].(string))) != 3 {
					t.Errorf("max_tokens: %v", out)
				}
			}},
		{"n", "demo-chat", `{"messages":[{"role":"user","content":"x"}],"n":3}`,
			func(t *testing.T, out map[string]any) {
				if len(out["choices"].([]any)) != 3 {
					t.Errorf("n=3 gave %d choices", len(out["choices"].([]any)))
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, chat(t, tc.model, tc.body)) })
	}
}

func TestStream(t *testing.T) {
	p := New(nil)
	body := []byte(`{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	for _, includeUsage := range []bool{false, true} {
		s, err := p.ChatStream(context.Background(), &provider.ChatRequest{PublicModel: "demo-chat", Body: body, Stream: true, IncludeUsage: includeUsage})
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		n, usageChunks := 0, 0
		for s.Next() {
			n++
			var c struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
				Usage *struct{} `json:"usage"`
			}
			if err := json.Unmarshal(s.Chunk(), &c); err != nil {
				t.Fatal(err)
			}
			if c.Usage != nil {
				usageChunks++
			}
			for _, ch := range c.Choices {
				text.WriteString(ch.Delta.Content)
			}
		}
		if s.Err() != nil || n < 5 || !strings.HasPrefix(text.String(), "Hello from the modelgate demo") {
			t.Fatalf("stream: %d chunks, %q, %v", n, text.String(), s.Err())
		}
		if want := map[bool]int{false: 0, true: 1}[includeUsage]; usageChunks != want {
			t.Errorf("include_usage=%v: %d usage chunks", includeUsage, usageChunks)
		}
	}
	// A cancelled client stops the stream with a 499.
	ctx, cancel := context.WithCancel(context.Background())
	s, _ := p.ChatStream(ctx, &provider.ChatRequest{PublicModel: "demo-chat", Body: body, Stream: true})
	s.Next()
	cancel()
	for s.Next() {
	}
	if s.Err() == nil {
		t.Error("cancelled stream ended without error")
	}
}

func TestSplitN(t *testing.T) {
	for _, s := range []string{"", "a", `{"city":"Zürich"}`, "日本語のテキスト"} {
		parts := splitN(s, 4)
		if strings.Join(parts, "") != s || len(parts) > 5 {
			t.Errorf("splitN(%q) = %q", s, parts)
		}
		for _, p := range parts {
			if !strings.HasPrefix(p, "") || (len(p) > 0 && !utf8Start(p[0])) {
				t.Errorf("piece %q starts inside a rune", p)
			}
		}
	}
}
