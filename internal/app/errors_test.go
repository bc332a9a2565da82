package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/config"
)

func TestAuthErrors(t *testing.T) {
	g := startGateway(t)
	ctx := context.Background()
	cases := []struct {
		name string
		opts []option.RequestOption
	}{
		{"missing", []option.RequestOption{option.WithHeaderDel("Authorization")}},
		{"malformed", []option.RequestOption{option.WithHeader("Authorization", "Basic dXNlcjpwYXNz")}},
		{"unknown", []option.RequestOption{option.WithAPIKey("sk-mg-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")}},
		{"revoked", []option.RequestOption{option.WithAPIKey(g.revoked)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := g.client(g.keys["default"], tc.opts...)
			_, err := c.Chat.Completions.New(ctx, streamParams("gpt-4o-mini", false))
			apiError(t, err, 401, "invalid_api_key")
			_, err = c.Models.List(ctx)
			apiError(t, err, 401, "invalid_api_key")
		})
	}
	if n := len(g.upstream.Received()); n != 0 {
		t.Errorf("the upstream was called %d times for unauthenticated requests", n)
	}
}

// Validation failures come back as 400 naming the parameter, and nothing
// goes upstream.
func TestValidationErrors(t *testing.T) {
	g := startGateway(t)
	c := g.client(g.keys["default"])
	user := []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}
	cases := []struct {
		name   string
		params oai.ChatCompletionNewParams
		opts   []option.RequestOption
		param  string
		code   string // OpenAI's code for the broken rule
	}{
		{"temperature high", oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: user, Temperature: oai.Float(2.5)}, nil, "temperature", "decimal_above_max_value"},
		{"temperature negative", oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: user, Temperature: oai.Float(-0.1)}, nil, "temperature", "decimal_below_min_value"},
		{"top_p", oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: user, TopP: oai.Float(1.5)}, nil, "top_p", "decimal_above_max_value"},
		{"n zero", oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: user, N: oai.Int(0)}, nil, "n", "integer_below_min_value"},
		{"max_tokens zero", oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: user, MaxTokens: oai.Int(0)}, nil, "max_tokens", "integer_below_min_value"},
		{"missing model", oai.ChatCompletionNewParams{Messages: user}, nil, "model", "missing_required_parameter"},
		{"missing messages", oai.ChatCompletionNewParams{Model: "gpt-4o-mini"}, nil, "messages", "missing_required_parameter"},
		{"empty messages", oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: []oai.ChatCompletionMessageParamUnion{}}, nil, "messages", "empty_array"},
		{"unknown role", oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: user},
			[]option.RequestOption{option.WithJSONSet("messages", []map[string]any{{"role": "robot", "content": "beep"}})}, "messages[0].role", "invalid_value"},
		{"temperature string", oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: user},
			[]option.RequestOption{option.WithJSONSet("temperature", "hot")}, "temperature", "invalid_type"},
		{"messages object", oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: user},
			[]option.RequestOption{option.WithJSONSet("messages", map[string]any{"role": "user"})}, "messages", "invalid_type"},
		{"content number", oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: user},
			[]option.RequestOption{option.WithJSONSet("messages", []map[string]any{{"role": "user", "content": 42}})}, "messages[0].content", "invalid_type"},
		{"stream not bool", oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: user},
			[]option.RequestOption{option.WithJSONSet("stream", "yes")}, "stream", "invalid_type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Chat.Completions.New(context.Background(), tc.params, tc.opts...)
			e := apiError(t, err, 400, tc.code)
			if e.Param != tc.param || e.Type != "invalid_request_error" || e.Message == "" {
				t.Errorf("param %q type %q message %q; want param %q", e.Param, e.Type, e.Message, tc.param)
			}
		})
	}
	if n := len(g.upstream.Received()); n != 0 {
		t.Errorf("the upstream was called %d times for invalid requests", n)
	}
}

// Vendor failures map to the documented statuses; the vendor's words reach
// the client only when they are about the client's own request.
func TestUpstreamErrors(t *testing.T) {
	g := startGateway(t)
	c := g.client(g.keys["default"])
	cases := []struct {
		model      string
		status     int
		code       string
		retryAfter string
		message    string // substring the client must see
		hidden     string // substring the client must not see
	}{
		{"err-400", 400, "string_above_max_length", "", "string too long", ""},
		{"err-401", 502, "upstream_auth_failed", "", "", "sk-upstr"},
		{"err-404", 502, "upstream_error", "", "", "gpt-5-turbo-nonexistent"},
		{"err-429", 429, "rate_limit_exceeded", "7", "rate limiting", "org-upstream"},
		{"err-429-quota", 503, "upstream_unavailable", "30", "", "quota"},
		{"err-500", 502, "upstream_error", "1", "", ""},
		{"err-503", 503, "upstream_unavailable", "7", "", ""},
		{"slow", 504, "upstream_timeout", "1", "", ""},
		{"unreachable", 503, "upstream_unavailable", "2", "", "127.0.0.1"},
		{"malformed", 502, "bad_upstream_response", "", "malformed", ""},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			var raw *http.Response
			_, err := c.Chat.Completions.New(context.Background(), streamParams(tc.model, false), option.WithResponseInto(&raw))
			e := apiError(t, err, tc.status, tc.code)
			if got := raw.Header.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tc.retryAfter)
			}
			if !strings.Contains(e.Message, tc.message) {
				t.Errorf("message %q lacks %q", e.Message, tc.message)
			}
			if tc.hidden != "" && strings.Contains(e.RawJSON(), tc.hidden) {
				t.Errorf("response leaks %q: %s", tc.hidden, e.RawJSON())
			}
			if raw.Header.Get("Content-Type") != "application/json" {
				t.Errorf("content type %q", raw.Header.Get("Content-Type"))
			}
		})
	}
}

// Inputs no SDK would send, sent raw.
func TestBadInput(t *testing.T) {
	g := startGateway(t, func(c *config.Config) { c.MaxRequestBytes = 1 << 20 })
	key := g.keys["default"]
	valid := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		name, contentType, body string
		status                  int
		code, param             string
	}{
		{"form content type", "application/x-www-form-urlencoded", valid, 415, "unsupported_media_type", ""},
		{"text content type", "text/plain", valid, 415, "unsupported_media_type", ""},
		{"latin1 charset", "application/json; charset=iso-8859-1", valid, 415, "unsupported_media_type", ""},
		{"no content type is fine", "", valid, 200, "", ""},
		{"malformed json", "application/json", `{"model":"gpt-4o-mini",`, 400, "invalid_request_error", ""},
		{"not an object", "application/json", `["gpt-4o-mini"]`, 400, "invalid_request_error", ""},
		{"empty body", "application/json", ``, 400, "invalid_request_error", ""},
		{"invalid utf-8", "application/json", "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}", 400, "invalid_request_error", ""},
		{"duplicate model", "application/json", `{"model":"demo-chat","model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", ""},
		{"escaped duplicate", "application/json", `{"model":"demo-chat","\u006dodel":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", ""},
		{"deep nesting", "application/json", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"x":` +
			strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`, 400, "invalid_request_error", ""},
		{"too large", "application/json", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` +
			strings.Repeat("a", 2<<20) + `"}]}`, 413, "request_too_large", ""},
		{"huge number", "application/json", `{"model":"gpt-4o-mini","max_tokens":1e400,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_type", "max_tokens"},
		{"fractional n", "application/json", `{"model":"gpt-4o-mini","n":1.5,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_type", "n"},
		{"tool without name", "application/json", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{}}]}`, 400, "missing_required_parameter", "tools[0].function.name"},
		{"tool message without id", "application/json", `{"model":"gpt-4o-mini","messages":[{"role":"tool","content":"x"}]}`, 400, "missing_required_parameter", "messages[0].tool_call_id"},
		{"image without url", "application/json", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`, 400, "missing_required_parameter", "messages[0].content[0].image_url.url"},
		{"bad tool_choice", "application/json", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"tool_choice":"always"}`, 400, "invalid_value", "tool_choice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := g.post("/v1/chat/completions", tc.contentType, key, strings.NewReader(tc.body))
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status == 200 {
				return
			}
			var e struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Param   *string `json:"param"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" || e.Error.Code == nil || *e.Error.Code != tc.code {
				t.Fatalf("error body %s (%v), want code %q", body, err, tc.code)
			}
			if tc.param != "" && (e.Error.Param == nil || *e.Error.Param != tc.param) {
				t.Errorf("param = %v, want %q", e.Error.Param, tc.param)
			}
			if resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("X-Request-Id") == "" {
				t.Errorf("headers %v", resp.Header)
			}
		})
	}
	// A 10 MB message under a limit that allows it is forwarded intact.
	g2 := startGateway(t, func(c *config.Config) {
		c.MaxRequestBytes = 16 << 20
		c.Providers[0].IdleTimeout = config.Duration(time.Minute) // the fake parses 10 MB slowly under -race
		c.Providers[0].Timeout = config.Duration(time.Minute)
		zero := int64(0) // no known context window: nothing to check the prompt against
		c.Models = append(c.Models, config.ModelConfig{ID: "gpt-4o-mini", ContextWindow: &zero})
	})
	big := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("x", 10<<20) + `"}]}`
	resp, body := g2.post("/v1/chat/completions", "application/json", g2.keys["default"], strings.NewReader(big))
	if resp.StatusCode != 200 {
		t.Fatalf("10 MB message: %d %s", resp.StatusCode, body)
	}
	if n := len(g2.upstream.Last().Body); n < 10<<20 {
		t.Errorf("upstream got %d bytes", n)
	}
	// Other methods and paths answer in the same error shape.
	for _, tc := range []struct {
		method, path string
		status       int
	}{{"GET", "/v1/chat/completions", 405}, {"POST", "/v1/models", 405}, {"GET", "/v1/nope", 404}, {"GET", "/", 404}} {
		req, _ := http.NewRequest(tc.method, g.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}
