package anthropic

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

// TestTranslateRejects lists requests answered with a 400 before any
// upstream call, naming the parameter.
func TestTranslateRejects(t *testing.T) {
	c := testClient(t)
	user := `{"role":"user","content":"hi"}`
	cases := []struct {
		name, body, param, msg string
	}{
		{"n", `{"model":"m","n":2,"messages":[` + user + `]}`, "n", "not supported"},
		{"audio", `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA==","format":"wav"}}]}]}`, "messages", "not supported by this model's provider"},
		{"file", `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"f"}}]}]}`, "messages", "not supported by this model's provider"},
		{"bmp", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/bmp;base64,AA=="}}]}]}`, "messages", "image/bmp"},
		{"not base64", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png,AA"}}]}]}`, "messages", "base64"},
		{"ftp image", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/y.png"}}]}]}`, "messages", "http(s) or data URL"},
		{"bad arguments", `{"model":"m","messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{oops"}}]}]}`, "messages", "tool_calls[0].function.arguments"},
		{"array arguments", `{"model":"m","messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, "messages", "JSON object"},
		{"legacy bad arguments", `{"model":"m","messages":[` + user + `,{"role":"assistant","function_call":{"name":"f","arguments":"x"}}]}`, "messages", "function_call.arguments"},
		{"only system", `{"model":"m","messages":[{"role":"system","content":"be nice"}]}`, "messages", "at least one"},
		{"schema without name", `{"model":"m","messages":[` + user + `],"response_format":{"type":"json_schema","json_schema":{"name":""}}}`, "response_format", "name"},
		{"bad tool_choice", `{"model":"m","messages":[` + user + `],"tool_choice":"sometimes"}`, "tool_choice", "sometimes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.translate(&provider.ChatRequest{UpstreamModel: "u", Body: []byte(tc.body)}, false)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Param != tc.param || !strings.Contains(ae.Message, tc.msg) {
				t.Fatalf("got %#v, want 400 param %q containing %q", err, tc.param, tc.msg)
			}
		})
	}
}

// TestMaxTokens checks where max_tokens comes from.
func TestMaxTokens(t *testing.T) {
	c := testClient(t)
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	cases := []struct {
		configured int64 // the provider's max_tokens
		body       string
		maxOutput  int64 // the catalog's
		want       string
	}{
		{1234, `{"model":"m",` + msgs + `}`, 0, `"max_tokens":1234`},
		{1234, `{"model":"m",` + msgs + `}`, 64000, `"max_tokens":1234`}, // the operator's default beats the catalog
		{0, `{"model":"m",` + msgs + `}`, 64000, `"max_tokens":64000`},
		{0, `{"model":"m",` + msgs + `}`, 0, `"max_tokens":4096`},
		{1234, `{"model":"m","max_tokens":10,` + msgs + `}`, 64000, `"max_tokens":10`},
		{0, `{"model":"m","max_tokens":10,"max_completion_tokens":20,` + msgs + `}`, 0, `"max_tokens":20`},
		{0, `{"model":"m","temperature":-1,` + msgs + `}`, 0, `"temperature":0`},
		{0, `{"model":"m","top_p":0.9,` + msgs + `}`, 0, `"top_p":0.9`},
	}
	for _, tc := range cases {
		c.maxTokens = tc.configured
		tr, err := c.translate(&provider.ChatRequest{UpstreamModel: "u", Body: []byte(tc.body), MaxOutput: tc.maxOutput}, false)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(tr.body), tc.want) {
			t.Errorf("%s (max output %d): got %s, want %s", tc.body, tc.maxOutput, tr.body, tc.want)
		}
	}
}

// TestHTTP runs Chat and ChatStream against a fake server: headers, path,
// and the mapping of each error status and body.
func TestHTTP(t *testing.T) {
	text, _ := os.ReadFile("testdata/responses/text.json")
	stream, _ := os.ReadFile("testdata/streams/text.sse")
	cases := []struct {
		name, ctype, body string
		status            int
		wantStatus        int // 0: success
		wantCode          string
	}{
		{"ok", "application/json", string(text), 200, 0, ""},
		{"overloaded", "application/json", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, 529, 503, apierr.CodeUpstreamUnavailable},
		{"invalid", "application/json", `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}`, 400, 400, apierr.CodeInvalidRequest},
		{"auth", "application/json", `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, 401, 502, apierr.CodeUpstreamAuth},
		{"rate", "application/json", `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, 429, 429, apierr.CodeRateLimitExceeded},
		{"api", "application/json", `{"type":"error","error":{"type":"api_error","message":"boom"}}`, 500, 502, apierr.CodeUpstreamError},
		{"not json", "text/html", `<html>bad gateway</html>`, 502, 502, apierr.CodeUpstreamError},
		{"200 error body", "application/json", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, 200, 503, apierr.CodeUpstreamUnavailable},
		{"malformed", "application/json", `{"id":"msg_1",`, 200, 502, apierr.CodeBadUpstreamResponse},
	}
	for _, tc := range cases {
		for _, streaming := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "secret" ||
						r.Header.Get("Anthropic-Version") != "2023-06-01" || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Extra") != "1" {
						t.Errorf("bad request %s %v", r.URL.Path, r.Header)
					}
					b, _ := io.ReadAll(r.Body)
					if err := requestOracle(b); err != nil {
						t.Error(err)
					}
					ct, body := tc.ctype, tc.body
					if streaming && tc.status == 200 && tc.wantStatus == 0 {
						ct, body = "text/event-stream", string(stream)
					}
					w.Header().Set("Content-Type", ct)
					w.WriteHeader(tc.status)
					_, _ = io.WriteString(w, body)
				}))
				defer srv.Close()
				c, err := New(Options{Name: "a", BaseURL: srv.URL + "/", APIKey: "secret", Headers: map[string]string{"X-Extra": "1"}, Timeout: 5 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				req := &provider.ChatRequest{PublicModel: "p", UpstreamModel: "u", Stream: streaming,
					Body: []byte(`{"model":"p","messages":[{"role":"user","content":"hi"}]}`)}
				if streaming {
					var s provider.ChatStream
					s, err = c.ChatStream(context.Background(), req)
					if err == nil {
						for s.Next() {
						}
						err = s.Err()
						_ = s.Close()
					}
				} else {
					_, err = c.Chat(context.Background(), req)
				}
				if tc.wantStatus == 0 {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				if streaming && tc.name == "malformed" {
					tc.wantCode = apierr.CodeBadUpstreamResponse // a JSON body that is no error
				}
				var ae *apierr.Error
				if !errors.As(err, &ae) || ae.Status != tc.wantStatus || ae.Code != tc.wantCode {
					t.Fatalf("stream=%v: got %#v, want %d %s", streaming, err, tc.wantStatus, tc.wantCode)
				}
			})
		}
	}
}

func TestNewRejectsBadURL(t *testing.T) {
	if _, err := New(Options{Name: "a", BaseURL: "api.anthropic.com"}); err == nil {
		t.Fatal("want an error for a base URL without scheme")
	}
	c, err := New(Options{Name: "a"})
	if err != nil || c.url != "https://api.anthropic.com/v1/messages" {
		t.Fatalf("default URL %q, %v", c.url, err)
	}
	c, _ = New(Options{Name: "a", BaseURL: "https://proxy.example/anthropic/v1/"})
	if c.url != "https://proxy.example/anthropic/v1/messages" {
		t.Fatalf("url %q", c.url)
	}
}

// TestThinkingOffAfterToolUse: with an earlier tool_use turn Anthropic
// would want signed thinking blocks back, so reasoning_effort is not sent.
func TestThinkingOffAfterToolUse(t *testing.T) {
	c := testClient(t)
	body := `{"model":"m","reasoning_effort":"high","messages":[{"role":"user","content":"hi"},
		{"role":"assistant","tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"t1","content":"ok"}]}`
	tr, err := c.translate(&provider.ChatRequest{UpstreamModel: "u", Body: []byte(body)}, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(tr.body), "thinking") {
		t.Errorf("thinking sent after tool use: %s", tr.body)
	}
	checkRequestOracle(t, tr.body)
}
