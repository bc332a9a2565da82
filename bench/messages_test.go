package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// sdkClient is anthropic-sdk-go pointed at base, the oracle of the mock's
// answers.
func sdkClient(base string) sdk.Client {
	return sdk.NewClient(option.WithBaseURL(base), option.WithAPIKey("k"), option.WithMaxRetries(0))
}

// messageParams is the harness's Messages body as the SDK's params.
func messageParams(t *testing.T, model string) sdk.MessageNewParams {
	t.Helper()
	var p sdk.MessageNewParams
	if err := json.Unmarshal(messagesBody(model, false), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMessagesBodyIsAnthropics checks the Messages pass's body against
// the SDK: MessageNewParams reads the chat pass's prompt (system + one
// user message), max_tokens 256 and the temperature from it, and it has
// no other member (stream is set by the SDK's NewStreaming, not a param).
func TestMessagesBodyIsAnthropics(t *testing.T) {
	for _, stream := range []bool{false, true} {
		b := messagesBody(claudeModel, stream)
		var top map[string]json.RawMessage
		if err := json.Unmarshal(b, &top); err != nil {
			t.Fatal(err)
		}
		if got := string(top["stream"]); stream != (got == "true") {
			t.Errorf("stream=%v: body has stream %s", stream, got)
		}
		delete(top, "stream")
		var keys []string
		for k := range top {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"max_tokens", "messages", "model", "system", "temperature"}; !slices.Equal(keys, want) {
			t.Errorf("stream=%v: members %v, want %v", stream, keys, want)
		}
		var p sdk.MessageNewParams
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		if p.Model != claudeModel || p.Temperature.Value != 0.7 || p.MaxTokens != 256 || len(p.System) != 1 || p.System[0].Text != systemPrompt || len(p.Messages) != 1 ||
			p.Messages[0].Role != sdk.MessageParamRoleUser || p.Messages[0].Content[0].OfText.Text != userPrompt {
			t.Errorf("stream=%v: params %+v", stream, p)
		}
	}
}

// TestMessagesMockWithSDK has anthropic-sdk-go read the mock's Message and
// its event stream: the same text as the chat mock, end_turn and usage.
func TestMessagesMockWithSDK(t *testing.T) {
	srv := httptest.NewServer(newUpstream().handler())
	defer srv.Close()
	c := sdkClient(srv.URL)
	want := strings.Join(completionWords[:], "")
	check := func(how string, m *sdk.Message) {
		t.Helper()
		if len(m.Content) != 1 || m.Content[0].Type != "text" || m.Content[0].Text != want {
			t.Errorf("%s: content %+v, want one text block %q", how, m.Content, want)
		}
		if m.Model != claudeModel || m.Role != "assistant" || m.StopReason != sdk.StopReasonEndTurn || !strings.HasPrefix(m.ID, "msg_bench") {
			t.Errorf("%s: model %q, role %q, stop_reason %q, id %q", how, m.Model, m.Role, m.StopReason, m.ID)
		}
		if m.Usage.InputTokens < 250 || m.Usage.OutputTokens != int64((len(want)+3)/4) {
			t.Errorf("%s: usage %+v", how, m.Usage)
		}
	}

	m, err := c.Messages.New(context.Background(), messageParams(t, claudeModel))
	if err != nil {
		t.Fatal(err)
	}
	check("Message", m)

	stream := c.Messages.NewStreaming(context.Background(), messageParams(t, claudeModel))
	var acc sdk.Message
	var types []string
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if err := acc.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	check("stream", &acc)
	wantTypes := []string{"message_start", "content_block_start"} // the SDK skips ping
	for range streamContentChunks {
		wantTypes = append(wantTypes, "content_block_delta")
	}
	wantTypes = append(wantTypes, "content_block_stop", "message_delta", "message_stop")
	if !reflect.DeepEqual(types, wantTypes) {
		t.Errorf("events %v,\nwant %v", types, wantTypes)
	}

	// The raw stream, ping included, as the load generator counts it.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+messagesPath, strings.NewReader(string(messagesBody(claudeModel, true))))
	req.Header.Set("x-api-key", "k")
	req.Header.Set("anthropic-version", anthropicVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	if _, err := readMessagesSSE(bufio.NewReader(resp.Body), time.Now(), messagesStreamEvents); err != nil {
		t.Error(err)
	}
}

// TestMessagesMockRefuses: like Anthropic, the mock wants x-api-key and
// anthropic-version (401) and a model, max_tokens and messages (400), and
// says so in Anthropic's error shape.
func TestMessagesMockRefuses(t *testing.T) {
	srv := httptest.NewServer(newUpstream().handler())
	defer srv.Close()
	good := string(messagesBody(claudeModel, false))
	for _, c := range []struct {
		name, key, version, body string
		status                   int
		typ                      string
	}{
		{"ok", "k", anthropicVersion, good, 200, ""},
		{"no key", "", anthropicVersion, good, 401, "authentication_error"},
		{"no version", "k", "", good, 401, "authentication_error"},
		{"no max_tokens", "k", anthropicVersion, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error"},
		{"no messages", "k", anthropicVersion, `{"model":"m","max_tokens":1}`, 400, "invalid_request_error"},
		{"not JSON", "k", anthropicVersion, `{`, 400, "invalid_request_error"},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+messagesPath, strings.NewReader(c.body))
		if c.key != "" {
			req.Header.Set("x-api-key", c.key)
		}
		if c.version != "" {
			req.Header.Set("anthropic-version", c.version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, resp.StatusCode, c.status, b)
			continue
		}
		if c.status == 200 {
			if err := checkMessage(b); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var e struct {
			Type  string `json:"type"`
			Error struct {
				Type, Message string
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &e); err != nil || e.Type != "error" || e.Error.Type != c.typ || e.Error.Message == "" {
			t.Errorf("%s: body %s, want an Anthropic %s", c.name, b, c.typ)
		}
	}
}

// frames writes Messages events: each pair is an event name and its data.
func frames(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString("event: " + pairs[i] + "\ndata: " + pairs[i+1] + "\n\n")
	}
	return b.String()
}

func TestReadMessagesSSE(t *testing.T) {
	start := []string{"message_start", `{"type":"message_start","message":{"type":"message","usage":{}}}`}
	stop := []string{"message_stop", `{"type":"message_stop"}`}
	ev := func(pairs ...string) string {
		all := append(append([]string{}, start...), pairs...)
		return frames(append(all, stop...)...)
	}
	delta := []string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`}
	for _, c := range []struct {
		name, body string
		want       int
		err        string
	}{
		{"ok", ev(delta...), 3, ""},
		{"ok any count", ev(delta...), 0, ""},
		{"ping with Anthropic's spaces", ev("ping", `{"type": "ping"}`), 3, ""},
		{"CRLF and comments", strings.ReplaceAll(": hi\n"+ev(delta...), "\n", "\r\n"), 3, ""},
		{"wrong count", ev(delta...), 4, "want 4"},
		{"no message_stop", frames(append(start, delta...)...), 0, "without message_stop"},
		{"[DONE] is not Anthropic's", ev() + "data: [DONE]\n\n", 0, "after message_stop"},
		{"event after stop", ev() + frames(delta...), 0, "after message_stop"},
		{"error event", frames(append(start, "error", `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`)...), 0, "overloaded_error"},
		{"name and type differ", ev("content_block_stop", `{"type":"content_block_start","index":0}`), 0, "is named content_block_stop"},
		{"nested type is not the event's", ev("message_delta", `{"delta":{"type":"message_delta"}}`), 0, ""},
		{"first is not message_start", frames(append(delta, stop...)...), 0, "want message_start"},
		{"no event line", "data: {\"type\":\"message_start\"}\n\n", 0, "no event: line"},
		{"malformed", ev("ping", `{"type":"ping"`), 0, "malformed"},
	} {
		ttfb, err := readMessagesSSE(bufio.NewReader(strings.NewReader(c.body)), time.Now(), c.want)
		if c.err == "" && (err != nil || ttfb <= 0) {
			t.Errorf("%s: ttfb %v, err %v", c.name, ttfb, err)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: err %v, want one containing %q", c.name, err, c.err)
		}
	}
}

func TestHasType(t *testing.T) {
	for _, c := range []struct {
		data, name string
		want       bool
	}{
		{`{"type":"ping"}`, "ping", true},
		{`{"type" : "ping"}`, "ping", true},
		{`{"type":"pingx"}`, "ping", false},
		{`{"type":"pin"}`, "ping", false},
		{`{"message":{"type":"message"},"type":"message_start"}`, "message_start", true},
		{`{"x":"type","y":1}`, "ping", false},
		{`{"type":`, "ping", false},
	} {
		if got := hasType([]byte(c.data), []byte(c.name)); got != c.want {
			t.Errorf("hasType(%s, %s) = %v, want %v", c.data, c.name, got, c.want)
		}
	}
}

func TestCheckMessage(t *testing.T) {
	for _, c := range []struct {
		body string
		ok   bool
	}{
		{`{"id":"m","type":"message","content":[]}` + "\n", true},
		{`{"id": "m", "type": "message", "content": []}`, true},
		{`{"type":"error","error":{"type":"api_error","message":"x"}}`, false},
		{`{"id":"chatcmpl","choices":[]}`, false},
		{`{"type":"message","content":[]`, false},
	} {
		if err := checkMessage([]byte(c.body)); (err == nil) != c.ok {
			t.Errorf("checkMessage(%s) = %v, want ok %v", c.body, err, c.ok)
		}
	}
}

func TestSelectPasses(t *testing.T) {
	names := func(ps []pass) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.name)
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		only, want string
		many       bool
		err        string
	}{
		{"", "non-stream,stream", false, ""},
		{"stream", "stream", false, ""},
		{"all", "non-stream,stream,messages,messages-stream,translated,translated-stream", false, ""},
		{"translated-stream, messages,messages", "messages,translated-stream", false, ""},
		{"many-streams", "", true, ""},
		{"stream, many-streams", "stream", true, ""},
		{"messages,bogus", "", false, `unknown pass "bogus"`},
	} {
		ps, many, err := selectPasses(c.only)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("-only %q: err %v, want %q", c.only, err, c.err)
			}
			continue
		}
		if err != nil || names(ps) != c.want || many != c.many {
			t.Errorf("-only %q: %s, many-streams %v, %v; want %s, %v", c.only, names(ps), many, err, c.want, c.many)
		}
	}
	// The translated passes send the proxy the chat pass's request; the
	// others send both targets the same.
	for _, p := range allPasses() {
		px, mg := p.requestFor(target{name: "proxy"}), p.requestFor(target{name: "modelgate"})
		translated := strings.HasPrefix(p.name, "translated")
		if translated != (px.path == chatPath && mg.path == messagesPath) || (!translated && !reflect.DeepEqual(px, mg)) {
			t.Errorf("%s: proxy sent %s, modelgate %s", p.name, px.path, mg.path)
		}
		if px.stream != p.stream || mg.stream != p.stream {
			t.Errorf("%s: stream %v, requests %v and %v", p.name, p.stream, px.stream, mg.stream)
		}
	}
}

// TestMessagesThroughProxy drives the Messages passes' load through the
// bare proxy to the mock: the proxy must forward x-api-key and
// anthropic-version (the mock answers 401 without), and the load
// generator must accept what comes back.
func TestMessagesThroughProxy(t *testing.T) {
	up := newUpstream().handler()
	var mu sync.Mutex
	seen := map[string]int{}
	upSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("X-Api-Key")+" "+r.Header.Get("Anthropic-Version")+" "+r.Header.Get("Authorization")]++
		mu.Unlock()
		up.ServeHTTP(w, r)
	}))
	defer upSrv.Close()
	h, err := newBareProxy(upSrv.URL)
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(h)
	defer px.Close()
	ps, _, _ := selectPasses("messages,messages-stream")
	for _, p := range ps {
		s := p.requestFor(target{name: "proxy"}).spec(px.URL, []string{"a", "b"})
		s.Clients, s.Warmup, s.Duration = 2, 10*time.Millisecond, 150*time.Millisecond
		if r := runLoad(context.Background(), newClient(2), s); r.Errors != 0 || r.Requests == 0 {
			t.Errorf("%s: %+v", p.name, r)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen["a "+anthropicVersion+" "] == 0 || seen["b "+anthropicVersion+" "] == 0 {
		t.Errorf("the upstream saw (x-api-key anthropic-version authorization): %v", seen)
	}
}

// BenchmarkUpstream compares the mock's cost per answer on its two
// endpoints, which the Messages passes assume to be alike.
func BenchmarkUpstream(b *testing.B) {
	u := newUpstream()
	h := u.handler()
	for _, c := range []struct {
		name, path string
		body       []byte
	}{
		{"chat", chatPath, requestBody(false)},
		{"chat-stream", chatPath, requestBody(true)},
		{"messages", messagesPath, messagesBody(claudeModel, false)},
		{"messages-stream", messagesPath, messagesBody(claudeModel, true)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, c.path, strings.NewReader(string(c.body)))
				req.Header.Set("X-Api-Key", "k")
				req.Header.Set("Anthropic-Version", anthropicVersion)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
