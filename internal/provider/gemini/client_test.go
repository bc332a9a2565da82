package gemini

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

// upstream is a one-handler fake Gemini that records the last request.
type upstream struct {
	*httptest.Server
	path, query, key, body string
}

func newUpstream(t *testing.T, status int, contentType, body string) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.path, u.query, u.key, u.body = r.URL.Path, r.URL.RawQuery, r.Header.Get("X-Goog-Api-Key"), string(b)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(u.Close)
	return u
}

func fixture(t *testing.T, name string) string {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const hello = `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`

func TestChat(t *testing.T) {
	up := newUpstream(t, 200, "application/json", fixture(t, "response/thinking.gemini.json"))
	c := testClient(t, up.URL+"/")
	res, err := c.Chat(context.Background(), &provider.ChatRequest{PublicModel: "pub", UpstreamModel: "gemini-2.5-pro", Body: []byte(hello)})
	if err != nil {
		t.Fatal(err)
	}
	if up.path != "/v1beta/models/gemini-2.5-pro:generateContent" || up.key != "k" {
		t.Errorf("sent to %s with key %q", up.path, up.key)
	}
	want := provider.Usage{PromptTokens: 8, CompletionTokens: 31, TotalTokens: 39, CachedTokens: 4, ReasoningTokens: 30, WebSearchesCounted: true}
	if !res.HasUsage || res.Usage != want {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
	}
	if !strings.Contains(string(res.Body), `"model":"pub"`) {
		t.Errorf("body %s", res.Body)
	}
}

func TestChatStreamHTTP(t *testing.T) {
	up := newUpstream(t, 200, "text/event-stream", fixture(t, "stream/text.sse"))
	c := testClient(t, up.URL)
	s, err := c.ChatStream(context.Background(), &provider.ChatRequest{PublicModel: "pub", UpstreamModel: "gemini-2.5-flash",
		Body: []byte(hello), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	for s.Next() {
		n++
	}
	if s.Err() != nil || n != 5 { // role, three deltas, finish
		t.Errorf("%d chunks, err %v", n, s.Err())
	}
	if up.path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || up.query != "alt=sse" {
		t.Errorf("sent to %s?%s", up.path, up.query)
	}
}

// Google's error statuses map to the client's: quota 429, overload 503,
// bad argument 400 with Google's message, key problems 502.
func TestErrors(t *testing.T) {
	tests := []struct {
		name, body string
		status     int
		stream     bool
		ctype      string
		want       int
		code       string
	}{
		{"429", `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`, 429, false, "application/json", 429, apierr.CodeRateLimitExceeded},
		{"503", `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`, 503, true, "application/json", 503, apierr.CodeUpstreamUnavailable},
		{"400", `{"error":{"code":400,"message":"* GenerateContentRequest.contents: contents is not specified","status":"INVALID_ARGUMENT"}}`, 400, false, "application/json", 400, "invalid_argument"},
		{"400 array", `[{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}]`, 400, true, "application/json", 400, "invalid_argument"},
		{"403", `{"error":{"code":403,"message":"API key not valid.","status":"PERMISSION_DENIED"}}`, 403, false, "application/json", 502, apierr.CodeUpstreamAuth},
		{"200 error body", `{"error":{"code":500,"message":"Internal error","status":"INTERNAL"}}`, 200, false, "application/json", 502, apierr.CodeUpstreamError},
		{"stream json error", `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`, 200, true, "application/json", 429, apierr.CodeRateLimitExceeded},
		{"stream wrong type", `hello`, 200, true, "text/plain", 502, apierr.CodeBadUpstreamResponse},
		{"malformed", `{"candidates":[`, 200, false, "application/json", 502, apierr.CodeBadUpstreamResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, tt.status, tt.ctype, tt.body)
			c := testClient(t, up.URL)
			req := &provider.ChatRequest{PublicModel: "pub", UpstreamModel: "g", Body: []byte(hello), Stream: tt.stream}
			var err error
			if tt.stream {
				_, err = c.ChatStream(context.Background(), req)
			} else {
				_, err = c.Chat(context.Background(), req)
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != tt.want || ae.Code != tt.code {
				t.Fatalf("got %v (%+v), want %d %s", err, ae, tt.want, tt.code)
			}
			if tt.want == 400 && ae.Message == "" {
				t.Errorf("a 400 should carry Google's message")
			}
		})
	}
}

// Requests Gemini cannot take are refused before any upstream call.
func TestRequestErrors(t *testing.T) {
	tests := []struct{ name, body, param string }{
		{"audio", `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA==","format":"wav"}}]}]}`, "messages"},
		{"file", `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"f"}}]}]}`, "messages"},
		{"non-image data", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:application/pdf;base64,AA=="}}]}]}`, "messages"},
		{"gif", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/gif;base64,R0lGODlh"}}]}]}`, "messages"},
		{"bad base64", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,@@"}}]}]}`, "messages"},
		{"ftp url", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/y.png"}}]}]}`, "messages"},
		{"fetched html", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/page.html"}}]}]}`, "messages"},
		{"fetch fails", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/404.png"}}]}]}`, "messages"},
		{"image in system", `{"messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]},{"role":"user","content":"x"}]}`, "messages"},
		{"unknown tool id", `{"messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"nope","content":"1"}]}`, "messages"},
		{"bad args", `{"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, "messages"},
		{"only system", `{"messages":[{"role":"system","content":"x"}]}`, "messages"},
		{"n too big", `{"n":9,"messages":[{"role":"user","content":"x"}]}`, "n"},
		{"effort", `{"reasoning_effort":"extreme","messages":[{"role":"user","content":"x"}]}`, "reasoning_effort"},
		{"schema", `{"tools":[{"type":"function","function":{"name":"f","parameters":[1]}}],"messages":[{"role":"user","content":"x"}]}`, "tools"},
		{"recursive schema", `{"tools":[{"type":"function","function":{"name":"f","parameters":{"$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"$ref":"#/$defs/n"}}}],"messages":[{"role":"user","content":"x"}]}`, "tools"},
		{"dangling ref", `{"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}}}],"messages":[{"role":"user","content":"x"}]}`, "tools"},
		{"recursive response schema", `{"response_format":{"type":"json_schema","json_schema":{"name":"t","schema":{"definitions":{"n":{"type":"object","properties":{"next":{"$ref":"#/definitions/n"}}}},"$ref":"#/definitions/n"}}},"messages":[{"role":"user","content":"x"}]}`, "response_format"},
		{"tool_choice", `{"tool_choice":"sometimes","tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"x"}]}`, "tool_choice"},
	}
	c := testClient(t, "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Chat(context.Background(), &provider.ChatRequest{PublicModel: "p", UpstreamModel: "u", Body: []byte(tt.body)})
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != 400 || ae.Param != tt.param {
				t.Fatalf("got %v, want a 400 on %s", err, tt.param)
			}
		})
	}
	c.fetcher = nil
	body := `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}]}]}`
	_, err := c.Chat(context.Background(), &provider.ChatRequest{Body: []byte(body)})
	if ae := apierr.From(err); ae.Status != 400 {
		t.Errorf("no fetcher: %v", err)
	}
}

func TestNew(t *testing.T) {
	if _, err := New(Options{BaseURL: "ftp://x"}); err == nil {
		t.Error("ftp base URL accepted")
	}
	c, err := New(Options{})
	if err != nil || c.base != DefaultBaseURL {
		t.Errorf("default base %q, %v", c.base, err)
	}
}

// Timeouts and transport failures reach the client as 504/503, before and
// during a stream.
func TestTransportFailures(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // a read body lets the server notice the client leaving
		if strings.Contains(r.URL.Path, "stall-stream") {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]}}]}\n\n")
			http.NewResponseController(w).Flush()
		}
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(block) }) // runs first: Close waits for handlers
	c := testClient(t, srv.URL)
	c.idle = 100 * time.Millisecond
	_, err := c.Chat(context.Background(), &provider.ChatRequest{UpstreamModel: "stall", Body: []byte(hello)})
	if ae := apierr.From(err); ae.Status != http.StatusGatewayTimeout {
		t.Errorf("stalled answer: %v", err)
	}
	s, err := c.ChatStream(context.Background(), &provider.ChatRequest{UpstreamModel: "stall-stream", Body: []byte(hello), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	for s.Next() {
		n++
	}
	if ae := apierr.From(s.Err()); n != 2 || ae.Status != http.StatusGatewayTimeout {
		t.Errorf("stalled stream: %d chunks, %v", n, s.Err())
	}
	down := testClient(t, "http://127.0.0.1:1")
	_, err = down.Chat(context.Background(), &provider.ChatRequest{UpstreamModel: "m", Body: []byte(hello)})
	if ae := apierr.From(err); ae.Status != http.StatusServiceUnavailable {
		t.Errorf("unreachable: %v", err)
	}
}
