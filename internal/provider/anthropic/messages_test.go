package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

// fakeMessages is an httptest Anthropic: it records the last request and
// answers with status, content type and body.
type fakeMessages struct {
	srv    *httptest.Server
	header http.Header
	body   []byte
	path   string
}

func newFakeMessages(t *testing.T, status int, ctype string, body []byte) *fakeMessages {
	t.Helper()
	f := &fakeMessages{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.header, f.path = r.Header.Clone(), r.URL.RequestURI()
		f.body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeMessages) client(t *testing.T) *Client {
	t.Helper()
	c, err := New(Options{Name: "claude", BaseURL: f.srv.URL, APIKey: "adapter-key",
		Headers: map[string]string{"Anthropic-Beta": "operator-beta-1", "X-Operator": "o"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// clientBody is what a client sends: odd spacing, a field the gateway does
// not know, cache_control and thinking, all of which must arrive as sent.
const clientBody = `{ "model" : "claude-public",  "max_tokens": 1024,
 "thinking": {"type": "enabled", "budget_tokens": 2000}, "context_management": {"edits": []},
 "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
 "messages": [{"role": "user", "content": "weather in Paris?"}], "stream": %s }`

func clientHeader() http.Header {
	h := http.Header{}
	h.Set("Anthropic-Version", "2023-06-01-client")
	h.Add("Anthropic-Beta", "interleaved-thinking-2025-05-14,context-1m-2025-08-07")
	h.Add("Anthropic-Beta", "operator-beta-1")
	h.Set("X-Api-Key", "client-gateway-key")
	h.Set("Authorization", "Bearer client-gateway-key")
	h.Set("X-Stainless-Lang", "js")
	return h
}

// checkUpstream checks what reached the vendor: only model (and stream)
// changed in the body, the adapter's key, the client's version and betas.
func checkUpstream(t *testing.T, f *fakeMessages, wantBody string) {
	t.Helper()
	if f.path != "/v1/messages" {
		t.Errorf("path %q", f.path)
	}
	if string(f.body) != wantBody {
		t.Errorf("upstream body\n got %s\nwant %s", f.body, wantBody)
	}
	h := f.header
	if h.Get("X-Api-Key") != "adapter-key" || h.Get("Authorization") != "" {
		t.Errorf("credentials: x-api-key %q authorization %q", h.Get("X-Api-Key"), h.Get("Authorization"))
	}
	if h.Get("Anthropic-Version") != "2023-06-01-client" {
		t.Errorf("anthropic-version %q", h.Get("Anthropic-Version"))
	}
	if got := strings.Join(h.Values("Anthropic-Beta"), "|"); got != "operator-beta-1,interleaved-thinking-2025-05-14,context-1m-2025-08-07" {
		t.Errorf("anthropic-beta %q", got)
	}
	if h.Get("X-Operator") != "o" || h.Get("X-Stainless-Lang") != "js" || h.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", h)
	}
}

func TestMessagesPassThrough(t *testing.T) {
	answer, err := os.ReadFile("testdata/messages/message.json")
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeMessages(t, 200, "application/json", answer)
	c := f.client(t)
	// A body that says stream: true sent to Messages goes up with false:
	// Claude Code retries a failed stream without it.
	body := strings.Replace(clientBody, "%s", "true", 1)
	resp, err := c.Messages(context.Background(), &provider.MessagesRequest{PublicModel: "claude-public",
		UpstreamModel: "claude-opus-4-1-20250805", Body: []byte(body), Header: clientHeader()})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(clientBody, `"claude-public"`, `"claude-opus-4-1-20250805"`, 1), "%s", "false", 1)
	checkUpstream(t, f, want)
	wantAnswer := bytes.Replace(answer, []byte(`"claude-opus-4-1-20250805"`), []byte(`"claude-public"`), 1)
	if !bytes.Equal(resp.Body, wantAnswer) {
		t.Errorf("answer\n got %s\nwant %s", resp.Body, wantAnswer)
	}
	var m sdk.Message
	if err := json.Unmarshal(resp.Body, &m); err != nil || m.Model != "claude-public" || len(m.Content) != 3 {
		t.Fatalf("SDK decode: %v %+v", err, m)
	}
	wantUsage := provider.Usage{PromptTokens: 2095 + 10 + 500, CompletionTokens: 503, TotalTokens: 2605 + 503,
		CachedTokens: 500, ReasoningTokens: 120}
	if resp.Usage != wantUsage {
		t.Errorf("usage %+v, want %+v", resp.Usage, wantUsage)
	}
}

// TestMessagesDefaults: without the client's version the adapter's default
// goes up; without a stream member none is added for a plain request.
func TestMessagesDefaults(t *testing.T) {
	answer, _ := os.ReadFile("testdata/messages/message.json")
	f := newFakeMessages(t, 200, "application/json", answer)
	c := f.client(t)
	body := `{"model":"x","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	if _, err := c.Messages(context.Background(), &provider.MessagesRequest{PublicModel: "x", UpstreamModel: "up",
		Body: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	if string(f.body) != `{"model":"up","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}` {
		t.Errorf("body %s", f.body)
	}
	if f.header.Get("Anthropic-Version") != DefaultVersion || f.header.Get("Anthropic-Beta") != "operator-beta-1" {
		t.Errorf("headers %v", f.header)
	}
}

// relay reads a whole stream, returning the concatenated events.
func relay(t *testing.T, s provider.MessagesStream) ([]byte, error) {
	t.Helper()
	defer s.Close()
	var out []byte
	for s.Next() {
		ev := s.Event()
		if !bytes.HasPrefix(ev, []byte("event: ")) || !bytes.HasSuffix(ev, []byte("\n\n")) || bytes.Count(ev, []byte("\n\n")) != 1 {
			t.Fatalf("not one SSE event: %q", ev)
		}
		out = append(out, ev...)
	}
	return out, s.Err()
}

// accumulate feeds a relayed stream to anthropic-sdk-go's accumulator.
func accumulate(t *testing.T, stream []byte) sdk.Message {
	t.Helper()
	var m sdk.Message
	for _, ev := range bytes.Split(bytes.TrimSuffix(stream, []byte("\n\n")), []byte("\n\n")) {
		_, data, ok := bytes.Cut(ev, []byte("\ndata: "))
		if !ok {
			t.Fatalf("event without data: %q", ev)
		}
		var e sdk.MessageStreamEventUnion
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatal(err)
		}
		if err := m.Accumulate(e); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func TestMessagesStreamRelay(t *testing.T) {
	sse, err := os.ReadFile("testdata/messages/thinking_tools.sse")
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeMessages(t, 200, "text/event-stream", sse)
	c := f.client(t)
	// A stream request whose body lacks stream: true gets it.
	body := strings.Replace(clientBody, `, "stream": %s`, "", 1)
	s, err := c.MessagesStream(context.Background(), &provider.MessagesRequest{PublicModel: "claude-public",
		UpstreamModel: "claude-opus-4-1-20250805", Body: []byte(body), Stream: true, Header: clientHeader()})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Usage(); ok {
		t.Error("usage final before the stream was read")
	}
	got, err := relay(t, s)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(body, `"claude-public"`, `"claude-opus-4-1-20250805"`, 1)
	checkUpstream(t, f, strings.TrimSuffix(want, " }")+" ,\"stream\":true}")
	if f.header.Get("Accept") != "text/event-stream" {
		t.Errorf("accept %q", f.header.Get("Accept"))
	}
	wantStream := bytes.Replace(sse, []byte(`"model":"claude-opus-4-1-20250805"`), []byte(`"model":"claude-public"`), 1)
	if !bytes.Equal(got, wantStream) {
		t.Errorf("relayed stream differs:\n got %s\nwant %s", got, wantStream)
	}
	m := accumulate(t, got)
	if m.Model != "claude-public" || m.StopReason != sdk.StopReasonToolUse || len(m.Content) != 3 ||
		m.Content[0].Signature == "" || m.Content[0].Thinking != `The user wants the weather; call get_weather for "Paris".` ||
		string(m.Content[2].Input) != `{"location": "Paris, FR", "unit": "celsius"}` {
		t.Errorf("accumulated %+v", m)
	}
	u, ok := s.Usage()
	want2 := provider.Usage{PromptTokens: 472 + 120 + 2048, CompletionTokens: 89, TotalTokens: 472 + 120 + 2048 + 89,
		CachedTokens: 2048, ReasoningTokens: 31}
	if !ok || u != want2 {
		t.Errorf("usage %+v %v, want %+v", u, ok, want2)
	}
}

// TestMessagesStreamEnds covers how a stream may end: an error event, a
// cut, a stop reason without message_stop, a multi-line data event.
func TestMessagesStreamEnds(t *testing.T) {
	errSSE, _ := os.ReadFile("testdata/messages/error_midstream.sse")
	full, _ := os.ReadFile("testdata/messages/thinking_tools.sse")
	noStop := full[:bytes.Index(full, []byte("event: message_stop"))]
	cut := full[:bytes.Index(full, []byte("event: message_delta"))]
	cases := []struct {
		name       string
		sse        []byte
		events     int
		wantStatus int // 0: clean end
		usage      bool
	}{
		{"error event", errSSE, 3, http.StatusServiceUnavailable, false},
		{"cut off", cut, 15, http.StatusBadGateway, false},
		{"no message_stop", noStop, 16, 0, true},
		{"message_start without message", []byte("event: message_start\ndata: {\"type\":\"message_start\"}\n\n"), 0, http.StatusBadGateway, false},
		{"multi-line data", []byte("event: message_start\ndata: {\"type\":\"message_start\",\ndata: \"message\":{\"id\":\"m\",\"model\":\"up\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"), 3, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeMessages(t, 200, "text/event-stream", tc.sse)
			s, err := f.client(t).MessagesStream(context.Background(), &provider.MessagesRequest{PublicModel: "pub",
				UpstreamModel: "up", Body: []byte(`{"model":"pub","stream":true}`), Stream: true})
			if err != nil {
				t.Fatal(err)
			}
			got, err := relay(t, s)
			if n := bytes.Count(got, []byte("\n\n")); n != tc.events {
				t.Errorf("%d events relayed, want %d:\n%s", n, tc.events, got)
			}
			if bytes.Contains(got, []byte("event: error")) {
				t.Error("the vendor's error event was relayed")
			}
			var ae *apierr.Error
			switch {
			case tc.wantStatus == 0 && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantStatus != 0 && (!errors.As(err, &ae) || ae.Status != tc.wantStatus):
				t.Fatalf("error %#v, want status %d", err, tc.wantStatus)
			}
			if _, ok := s.Usage(); ok != tc.usage {
				t.Errorf("usage ok %v, want %v", ok, tc.usage)
			}
			if tc.name == "multi-line data" && !bytes.Contains(got, []byte("data: {\"type\":\"message_start\",\ndata: \"message\":{\"id\":\"m\",\"model\":\"pub\",")) {
				t.Errorf("multi-line event: %q", got)
			}
		})
	}
}

// TestMessagesErrors checks that vendor errors map as the chat path maps
// them (failover and circuits classify them the same way).
func TestMessagesErrors(t *testing.T) {
	cases := []struct {
		name, ctype, body string
		status            int
		wantStatus        int
		wantCode          string
	}{
		{"overloaded", "application/json", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, 529, 503, apierr.CodeUpstreamUnavailable},
		{"invalid", "application/json", `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"},"request_id":"req_1"}`, 400, 400, apierr.CodeInvalidRequest},
		{"auth", "application/json", `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key adapter-key"}}`, 401, 502, apierr.CodeUpstreamAuth},
		{"rate", "application/json", `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, 429, 429, apierr.CodeRateLimitExceeded},
		{"html", "text/html", `<html>bad gateway</html>`, 502, 502, apierr.CodeUpstreamError},
		{"200 error body", "application/json", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, 200, 503, apierr.CodeUpstreamUnavailable},
		{"malformed", "application/json", `{"id":"msg_1",`, 200, 502, apierr.CodeBadUpstreamResponse},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				f := newFakeMessages(t, tc.status, tc.ctype, []byte(tc.body))
				c := f.client(t)
				req := &provider.MessagesRequest{PublicModel: "p", UpstreamModel: "u", Body: []byte(`{"model":"p"}`), Stream: stream}
				var err error
				if stream {
					_, err = c.MessagesStream(context.Background(), req)
				} else {
					_, err = c.Messages(context.Background(), req)
				}
				var ae *apierr.Error
				if !errors.As(err, &ae) || ae.Status != tc.wantStatus || ae.Code != tc.wantCode {
					t.Fatalf("stream %v: got %#v, want %d %s", stream, err, tc.wantStatus, tc.wantCode)
				}
				if strings.Contains(ae.Message, "adapter-key") {
					t.Errorf("key leaked: %q", ae.Message)
				}
			})
		}
	}
}

// benchMessagesSSE is a typical streamed answer: message_start, a text
// block of 40 deltas, message_delta, message_stop.
func benchMessagesSSE() []byte {
	var b bytes.Buffer
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-up\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":1000,\"cache_read_input_tokens\":200,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range 40 {
		b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"piece " + string(rune('a'+i%26)) + " of the answer, \"}}\n\n")
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":300}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.Bytes()
}

// BenchmarkMessagesRelay relays one stream from memory: the pass-through's
// own cost per stream, without HTTP.
func BenchmarkMessagesRelay(b *testing.B) {
	sse := benchMessagesSSE()
	b.SetBytes(int64(len(sse)))
	b.ReportAllocs()
	for b.Loop() {
		k := provider.StartCall(context.Background(), time.Minute, time.Minute)
		s := &messagesStream{SSEBody: provider.NewSSEBody(k, io.NopCloser(bytes.NewReader(sse))), name: "b",
			model: []byte(`"claude-public"`)}
		n := 0
		for s.Next() {
			n += len(s.Event())
		}
		if s.Err() != nil || n < len(sse) {
			b.Fatal(s.Err(), n)
		}
		_ = s.Close()
	}
}

// The door's relay batches flushes only for streams that tell whether the
// next event is already read.
var _ provider.Buffered = (*messagesStream)(nil)
