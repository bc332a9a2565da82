package openaicompat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

func newClient(t *testing.T, f *providertest.OpenAI) *Client {
	t.Helper()
	c, err := New(Options{Name: "fake", BaseURL: f.URL + "/v1/", APIKey: "sk-up", Headers: map[string]string{"X-Title": "mg"},
		Timeout: 2 * time.Second, IdleTimeout: 500 * time.Millisecond, UserAgent: "modelgate/test"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestUpstreamBody(t *testing.T) {
	cases := []struct {
		name string
		req  provider.ChatRequest
		want string
	}{
		{"same id untouched", provider.ChatRequest{PublicModel: "m", UpstreamModel: "m", Body: []byte(`{"model":"m", "x":1}`)},
			`{"model":"m", "x":1}`},
		{"model patched", provider.ChatRequest{PublicModel: "m", UpstreamModel: "up/m:1", Body: []byte(`{"x":1,"model":"m"}`)},
			`{"x":1,"model":"up/m:1"}`},
		{"usage asked for", provider.ChatRequest{PublicModel: "m", UpstreamModel: "m", Stream: true, Body: []byte(`{"model":"m","stream":true}`)},
			`{"model":"m","stream":true,"stream_options":{"include_usage":true}}`},
		{"usage option set in place", provider.ChatRequest{PublicModel: "m", UpstreamModel: "m", Stream: true,
			Body: []byte(`{"model":"m","stream":true,"stream_options":{"include_usage":false,"include_obfuscation":false}}`)},
			`{"model":"m","stream":true,"stream_options":{"include_usage":true,"include_obfuscation":false}}`},
		{"null options replaced", provider.ChatRequest{PublicModel: "m", UpstreamModel: "m", Stream: true,
			Body: []byte(`{"model":"m","stream":true,"stream_options":null}`)},
			`{"model":"m","stream":true,"stream_options":{"include_usage":true}}`},
		{"model patched and usage asked for", provider.ChatRequest{PublicModel: "m", UpstreamModel: "up", Stream: true,
			Body: []byte(`{"stream_options":{"include_usage":false},"model":"m","stream":true}`)},
			`{"stream_options":{"include_usage":true},"model":"up","stream":true}`},
		{"both added to an object without them", provider.ChatRequest{PublicModel: "m", UpstreamModel: "up", Stream: true,
			Body: []byte(`{ }`)}, `{ "model":"up","stream_options":{"include_usage":true}}`},
		{"the first of a repeated model", provider.ChatRequest{PublicModel: "m", UpstreamModel: "up", Body: []byte(`{"model":"m","model":"m"}`)},
			`{"model":"up","model":"m"}`},
		{"escaped key", provider.ChatRequest{PublicModel: "m", UpstreamModel: "up", Body: []byte(`{"\u006dodel":"m"}`)},
			`{"\u006dodel":"up"}`},
		{"client asked already", provider.ChatRequest{PublicModel: "m", UpstreamModel: "m", Stream: true, IncludeUsage: true,
			Body: []byte(`{"model":"m","stream":true,"stream_options":{"include_usage":true}}`)},
			`{"model":"m","stream":true,"stream_options":{"include_usage":true}}`},
		{"space after the object", provider.ChatRequest{PublicModel: "m", UpstreamModel: "up", Stream: true, Body: []byte("{\"model\":\"m\"} \n")},
			"{\"model\":\"up\",\"stream_options\":{\"include_usage\":true}} \n"},
	}
	for _, tc := range cases {
		// Once as an adapter called without the members located, once
		// with them located as the chat handler does while validating.
		located := tc.req
		var sp [2]jsonx.Span
		if _, err := jsonx.Members(located.Body, []string{"model", "stream_options"}, sp[:]); err != nil {
			t.Fatal(err)
		}
		located.ModelAt, located.StreamOptionsAt = sp[0], sp[1]
		for _, req := range []provider.ChatRequest{tc.req, located} {
			t.Run(fmt.Sprintf("%s located=%v", tc.name, req.ModelAt.Found()), func(t *testing.T) {
				got, err := upstreamBody(&req)
				if err != nil || string(got) != tc.want {
					t.Fatalf("got %s, %v; want %s", got, err, tc.want)
				}
			})
		}
	}
	for _, bad := range []string{`[1]`, `{"model":"m","stream_options":"x"}`} {
		req := provider.ChatRequest{PublicModel: "m", UpstreamModel: "up", Stream: true, Body: []byte(bad)}
		if got, err := upstreamBody(&req); err == nil {
			t.Errorf("upstreamBody(%s) = %s, no error", bad, got)
		}
	}
}

func TestChat(t *testing.T) {
	f := providertest.NewOpenAI(t)
	c := newClient(t, f)
	res, err := c.Chat(context.Background(), &provider.ChatRequest{PublicModel: "mini", UpstreamModel: "gpt-4o-mini-2024-07-18",
		Body: []byte(`{"model":"mini","messages":[{"role":"user","content":"hi"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	// The answer is the fixture, byte for byte, with only model replaced.
	want := bytes.Replace(providertest.Fixture(t, "openai/chat_completion.json"),
		[]byte(`"model": "gpt-4o-mini-2024-07-18"`), []byte(`"model": "mini"`), 1)
	if !bytes.Equal(res.Body, want) {
		t.Errorf("body:\n%s\nwant:\n%s", res.Body, want)
	}
	if !res.HasUsage || res.Usage != (provider.Usage{PromptTokens: 19, CompletionTokens: 10, TotalTokens: 29, ServiceTier: "default"}) {
		t.Errorf("usage %+v", res.Usage)
	}
	h := f.Last().Header
	if h.Get("Authorization") != "Bearer sk-up" || h.Get("X-Title") != "mg" || h.Get("User-Agent") != "modelgate/test" ||
		h.Get("Content-Type") != "application/json" {
		t.Errorf("upstream headers %v", h)
	}
}

func readStream(t *testing.T, s provider.ChatStream) ([]string, error) {
	t.Helper()
	defer s.Close()
	var out []string
	for s.Next() {
		out = append(out, string(s.Chunk()))
	}
	return out, s.Err()
}

func TestChatStream(t *testing.T) {
	f := providertest.NewOpenAI(t)
	c := newClient(t, f)
	for _, includeUsage := range []bool{false, true} {
		body := []byte(`{"model":"mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
		if includeUsage {
			body = []byte(`{"model":"mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
		}
		s, err := c.ChatStream(context.Background(), &provider.ChatRequest{PublicModel: "mini",
			UpstreamModel: "gpt-4o-mini-2024-07-18", Body: body, Stream: true, IncludeUsage: includeUsage})
		if err != nil {
			t.Fatal(err)
		}
		chunks, err := readStream(t, s)
		if err != nil {
			t.Fatal(err)
		}
		u, ok := s.Usage()
		if !ok || u.PromptTokens != 19 || u.CompletionTokens != 10 {
			t.Errorf("usage %+v, %v", u, ok)
		}
		// Compare with the fixture the upstream would send for this client.
		name := map[bool]string{false: "openai/chat_stream.sse", true: "openai/chat_stream_usage.sse"}[includeUsage]
		var want []string
		for _, ev := range strings.Split(strings.TrimSpace(string(providertest.Fixture(t, name))), "\n\n") {
			data := strings.TrimPrefix(ev, "data: ")
			if data == "[DONE]" {
				continue
			}
			want = append(want, strings.Replace(data, `"model":"gpt-4o-mini-2024-07-18"`, `"model":"mini"`, 1))
		}
		if strings.Join(chunks, "\n") != strings.Join(want, "\n") {
			t.Errorf("include_usage=%v chunks:\n%s\nwant:\n%s", includeUsage, strings.Join(chunks, "\n"), strings.Join(want, "\n"))
		}
	}
}

func TestChatStreamToolCall(t *testing.T) {
	f := providertest.NewOpenAI(t)
	c := newClient(t, f)
	s, err := c.ChatStream(context.Background(), &provider.ChatRequest{PublicModel: "t", UpstreamModel: "tool-call", Stream: true,
		Body: []byte(`{"model":"t","stream":true,"messages":[{"role":"user","content":"weather?"}],"tools":[{"type":"function","function":{"name":"get_current_weather"}}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := readStream(t, s)
	if err != nil {
		t.Fatal(err)
	}
	var args strings.Builder
	for _, ch := range chunks {
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Index    int `json:"index"`
						Function struct {
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(ch), &c); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				args.WriteString(tc.Function.Arguments)
			}
		}
	}
	if args.String() != `{"location":"Boston, MA"}` {
		t.Errorf("streamed arguments %q", args.String())
	}
}

func TestChatErrors(t *testing.T) {
	f := providertest.NewOpenAI(t)
	c := newClient(t, f)
	cases := []struct {
		model  string
		stream bool
		status int
		code   string
	}{
		{"err-400", false, 400, "string_above_max_length"},
		{"err-401", false, 502, apierr.CodeUpstreamAuth},
		{"err-429", true, 429, apierr.CodeRateLimitExceeded},
		{"err-503", true, 503, apierr.CodeUpstreamUnavailable},
		{"malformed", false, 502, apierr.CodeBadUpstreamResponse},
		{"slow", false, 504, apierr.CodeUpstreamTimeout},
		{"slow", true, 504, apierr.CodeUpstreamTimeout},
		{"stream-json", true, 502, apierr.CodeUpstreamError},
	}
	for _, tc := range cases {
		req := &provider.ChatRequest{PublicModel: "p", UpstreamModel: tc.model, Stream: tc.stream,
			Body: []byte(`{"model":"p","messages":[{"role":"user","content":"hi"}]}`)}
		var err error
		if tc.stream {
			_, err = c.ChatStream(context.Background(), req)
		} else {
			_, err = c.Chat(context.Background(), req)
		}
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != tc.status || e.Code != tc.code {
			t.Errorf("%s stream=%v: %v, want %d %s", tc.model, tc.stream, err, tc.status, tc.code)
		}
	}
	// A request the client abandons reports 499, not a vendor failure.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := c.Chat(ctx, &provider.ChatRequest{PublicModel: "p", UpstreamModel: "slow", Body: []byte(`{"model":"p"}`)})
	if e := apierr.From(err); e.Status != apierr.StatusClientClosed {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := New(Options{Name: "x", BaseURL: "ftp://example.com"}); err == nil {
		t.Error("non-http base URL accepted")
	}
}

func TestParseVendorError(t *testing.T) {
	cases := []struct {
		body string
		want provider.VendorError
	}{
		{`{"error":{"message":"m","type":"t","code":"c","param":"p"}}`, provider.VendorError{Message: "m", Type: "t", Code: "c", Param: "p"}},
		{`{"error":{"message":"m","code":429}}`, provider.VendorError{Message: "m", Code: "429"}},
		{`{"error":"plain"}`, provider.VendorError{Message: "plain"}},
		{`{"message":"top"}`, provider.VendorError{Message: "top"}},
		{`{"detail":"fastapi"}`, provider.VendorError{Message: "fastapi"}},
		{`upstream connect error`, provider.VendorError{Message: "upstream connect error"}},
	}
	for _, tc := range cases {
		if got := parseVendorError([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.body, got, tc.want)
		}
	}
}

// The stream translator must give the same chunks however the upstream's
// bytes are split into reads.
func FuzzStreamSplits(f *testing.F) {
	f.Add(uint16(1), uint16(7))
	f.Add(uint16(100), uint16(3))
	fixture := providertest.Fixture(f, "openai/chat_stream_usage.sse")
	want := transform(f, [][]byte{fixture})
	f.Fuzz(func(t *testing.T, a, b uint16) {
		i, j := int(a)%len(fixture), int(b)%len(fixture)
		if i > j {
			i, j = j, i
		}
		got := transform(t, [][]byte{fixture[:i], fixture[i:j], fixture[j:]})
		if got != want {
			t.Fatalf("split at %d,%d changed the output", i, j)
		}
	})
}

// transform runs raw upstream bytes, delivered in the given pieces, through
// the stream translator.
func transform(t testing.TB, pieces [][]byte) string {
	pr := &piecesReader{pieces: pieces}
	k := provider.StartCall(context.Background(), time.Hour, time.Hour)
	s := newStream("fuzz", nil, k, pr, []byte(`"pub"`), false)
	var out strings.Builder
	for s.Next() {
		out.Write(s.Chunk())
		out.WriteByte('\n')
	}
	if s.Err() != nil {
		out.WriteString("ERR " + s.Err().Error())
	}
	return out.String()
}

type piecesReader struct{ pieces [][]byte }

func (p *piecesReader) Read(b []byte) (int, error) {
	for len(p.pieces) > 0 && len(p.pieces[0]) == 0 {
		p.pieces = p.pieces[1:]
	}
	if len(p.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(b, p.pieces[0])
	p.pieces[0] = p.pieces[0][n:]
	return n, nil
}

func (p *piecesReader) Close() error { return nil }

func TestStreamTransform(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"no model member", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
			`{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}],"model":"pub"}` + "\n"},
		{"empty object", "data: {}\n\ndata: {\"choices\":[{\"finish_reason\":\"stop\"}]}\n\n",
			`{"model":"pub"}` + "\n" + `{"choices":[{"finish_reason":"stop"}],"model":"pub"}` + "\n"},
		{"usage before model", "data: {\"usage\":null,\"model\":\"up\",\"choices\":[{\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
			`{"model":"pub","choices":[{"finish_reason":"stop"}]}` + "\n"},
		{"usage on the last content chunk (vLLM style)", "data: {\"model\":\"up\",\"choices\":[{\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}\n\ndata: [DONE]\n\n",
			`{"model":"pub","choices":[{"finish_reason":"stop"}]}` + "\n"},
		{"usage-only chunk dropped", "data: {\"model\":\"up\",\"choices\":[{\"finish_reason\":\"stop\"}]}\n\ndata: {\"model\":\"up\",\"choices\":[],\"usage\":{\"prompt_tokens\":3}}\n\ndata: [DONE]\n\n",
			`{"model":"pub","choices":[{"finish_reason":"stop"}]}` + "\n"},
		{"keep-alive comments and blank data", ": ping\n\ndata: \n\ndata: {\"model\":\"up\",\"choices\":[{\"finish_reason\":\"stop\"}]}\n\n",
			`{"model":"pub","choices":[{"finish_reason":"stop"}]}` + "\n"},
		{"ends without [DONE] after finish", "data: {\"model\":\"up\",\"choices\":[{\"finish_reason\":\"length\"}]}\n\n",
			`{"model":"pub","choices":[{"finish_reason":"length"}]}` + "\n"},
		{"ends before finishing", "data: {\"model\":\"up\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n",
			`{"model":"pub","choices":[{"delta":{"content":"a"}}]}` + "\nERR 502 bad_upstream_response: The upstream provider sent a malformed response.: provider fuzz: stream ended before it finished"},
		{"not JSON", "data: {\"model\":\"up\",\n\n", "ERR 502 bad_upstream_response: The upstream provider sent a malformed response.: provider fuzz: stream chunk: expected a string object key at byte offset 14"},
		{"array chunk", "data: [1]\n\n", "ERR 502 bad_upstream_response: The upstream provider sent a malformed response.: provider fuzz: stream chunk: expected a JSON object at byte offset 0"},
		{"content chunks, one checked by its content alone", "data: {\"model\":\"up\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n" +
			"data: {\"model\":\"up\",\"choices\":[{\"delta\":{\"content\":\"b\\\"c\"}}]}\n\ndata: {\"model\":\"up\",\"choices\":[{\"finish_reason\":\"stop\"}]}\n\n",
			`{"model":"pub","choices":[{"delta":{"content":"a"}}]}` + "\n" + `{"model":"pub","choices":[{"delta":{"content":"b\"c"}}]}` + "\n" +
				`{"model":"pub","choices":[{"finish_reason":"stop"}]}` + "\n"},
		{"bad content after good chunks", "data: {\"model\":\"up\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n" +
			"data: {\"model\":\"up\",\"choices\":[{\"delta\":{\"content\":\"\xff\"}}]}\n\n",
			`{"model":"pub","choices":[{"delta":{"content":"a"}}]}` + "\nERR 502 bad_upstream_response: The upstream provider sent a malformed response.: provider fuzz: stream chunk: invalid UTF-8 in string at byte offset 46"},
		{"error event", "data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n",
			"ERR 502 upstream_error: The upstream provider failed to answer; retry later.: provider fuzz: HTTP 502:  boom"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := transform(t, [][]byte{[]byte(tc.in)}); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// BenchmarkStreamTransform measures reading and rewriting one recorded
// 12-event stream (the client did not ask for usage, the worst case).
func BenchmarkStreamTransform(b *testing.B) {
	fixture := providertest.Fixture(b, "openai/chat_stream_usage.sse")
	b.SetBytes(int64(len(fixture)))
	b.ReportAllocs()
	for b.Loop() {
		k := provider.StartCall(context.Background(), time.Hour, time.Hour)
		s := newStream("b", nil, k, io.NopCloser(bytes.NewReader(fixture)), []byte(`"pub"`), false)
		for s.Next() {
		}
		if s.Err() != nil {
			b.Fatal(s.Err())
		}
	}
}

// A non-streamed answer is checked and patched in one pass: model is
// replaced where it is (or added), usage read from the same pass, and a
// body that is not one valid JSON object, repeats a top-level member or
// carries an error is not passed on. Nested members go to the client as
// the vendor wrote them, as in stream chunks.
func TestChatResponseBody(t *testing.T) {
	cases := []struct {
		name, body string
		want       string // the body the client gets; "" when refused
		code       string // the error code when refused
		usage      provider.Usage
	}{
		{"model replaced, usage read", `{"id":"x","model":"up","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`,
			`{"id":"x","model":"p","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`, "", provider.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}},
		{"model added", `{"id":"x","choices":[]}`, `{"id":"x","choices":[],"model":"p"}`, "", provider.Usage{}},
		{"model added to an empty object", "{ \n}", "{ \n\"model\":\"p\"}", "", provider.Usage{}},
		{"null usage", `{"model":"up","usage":null}`, `{"model":"p","usage":null}`, "", provider.Usage{}},
		{"nested duplicates pass", `{"model":"up","choices":[{"message":{"content":"a","content":"b"}}]}`,
			`{"model":"p","choices":[{"message":{"content":"a","content":"b"}}]}`, "", provider.Usage{}},
		{"array", `[1]`, "", apierr.CodeBadUpstreamResponse, provider.Usage{}},
		{"truncated", `{"id":"x","model":`, "", apierr.CodeBadUpstreamResponse, provider.Usage{}},
		{"trailing data", `{"model":"up"} {}`, "", apierr.CodeBadUpstreamResponse, provider.Usage{}},
		{"duplicate model", `{"model":"a","model":"b"}`, "", apierr.CodeBadUpstreamResponse, provider.Usage{}},
		{"error member", `{"error":{"message":"boom","type":"server_error"}}`, "", apierr.CodeUpstreamError, provider.Usage{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c, err := New(Options{Name: "fake", BaseURL: srv.URL + "/v1/", Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Chat(context.Background(), &provider.ChatRequest{PublicModel: "p", UpstreamModel: "up",
				Body: []byte(`{"model":"p","messages":[{"role":"user","content":"hi"}]}`)})
			if tc.want == "" {
				if e := apierr.From(err); err == nil || e.Code != tc.code {
					t.Fatalf("got %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Body) != tc.want || res.Usage != tc.usage || res.HasUsage != (tc.usage != provider.Usage{}) {
				t.Errorf("got %s (usage %+v, %v), want %s (%+v)", res.Body, res.Usage, res.HasUsage, tc.want, tc.usage)
			}
		})
	}
}

// BenchmarkUpstreamBody: a stream request of ~16 KB whose model is renamed
// and whose client did not ask for usage, the common case behind an alias.
func BenchmarkUpstreamBody(b *testing.B) {
	body := []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 1365) + `"}]}`)
	req := provider.ChatRequest{PublicModel: "m", UpstreamModel: "gpt-4o-2024-08-06", Stream: true, Body: body}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := upstreamBody(&req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestChatExchange checks what a chat request carries upstream and that a
// redirect is answered, not followed: the headers of a plain and a
// streamed request (each request its own Accept, whatever the one before),
// credentials written in base_url, and a 307.
func TestChatExchange(t *testing.T) {
	type seen struct{ path, accept, auth, apiKey string }
	cases := []struct {
		name     string
		opts     Options // BaseURL is relative to the fake's URL
		userinfo bool    // base_url carries the credentials u:p
		redirect bool
		want     []seen // per request: plain, stream, plain
		code     string // the error of every request, when the fake redirects
	}{
		{"bearer key", Options{BaseURL: "/v1", APIKey: "sk-up"}, false, false, []seen{
			{"/v1/chat/completions", "application/json", "Bearer sk-up", ""},
			{"/v1/chat/completions", "text/event-stream", "Bearer sk-up", ""},
			{"/v1/chat/completions", "application/json", "Bearer sk-up", ""}}, ""},
		{"credentials in base_url", Options{BaseURL: "/v1"}, true, false, []seen{
			{"/v1/chat/completions", "application/json", "Basic dTpw", ""},
			{"/v1/chat/completions", "text/event-stream", "Basic dTpw", ""},
			{"/v1/chat/completions", "application/json", "Basic dTpw", ""}}, ""},
		{"azure key and credentials", Options{BaseURL: "", APIKey: "k", Azure: true}, true, false, []seen{
			{"/openai/deployments/up/chat/completions", "application/json", "Basic dTpw", "k"},
			{"/openai/deployments/up/chat/completions", "text/event-stream", "Basic dTpw", "k"},
			{"/openai/deployments/up/chat/completions", "application/json", "Basic dTpw", "k"}}, ""},
		{"redirect not followed", Options{BaseURL: "/v1", APIKey: "sk-up"}, false, true, []seen{
			{"/v1/chat/completions", "application/json", "Bearer sk-up", ""},
			{"/v1/chat/completions", "text/event-stream", "Bearer sk-up", ""},
			{"/v1/chat/completions", "application/json", "Bearer sk-up", ""}}, apierr.CodeUpstreamError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []seen
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = append(got, seen{r.URL.Path, r.Header.Get("Accept"), r.Header.Get("Authorization"), r.Header.Get("Api-Key")})
				switch {
				case tc.redirect:
					http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
				case r.Header.Get("Accept") == "text/event-stream":
					w.Header().Set("Content-Type", "text/event-stream")
					_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\ndata: [DONE]\n\n")
				default:
					w.Header().Set("Content-Type", "application/json")
					_, _ = io.WriteString(w, `{"model":"up","choices":[]}`)
				}
			}))
			defer srv.Close()
			o := tc.opts
			o.Name, o.Timeout = "fake", 2*time.Second
			o.BaseURL = srv.URL + o.BaseURL
			if tc.userinfo {
				o.BaseURL = strings.Replace(o.BaseURL, "http://", "http://u:p@", 1)
			}
			c, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			body := []byte(`{"model":"p","messages":[{"role":"user","content":"hi"}]}`)
			for i, stream := range []bool{false, true, false} {
				req := &provider.ChatRequest{PublicModel: "p", UpstreamModel: "up", Body: body, Stream: stream}
				if stream {
					st, err := c.ChatStream(context.Background(), req)
					if err == nil {
						for st.Next() {
						}
						err = st.Err()
						_ = st.Close()
					}
					checkCode(t, i, err, tc.code)
					continue
				}
				_, err := c.Chat(context.Background(), req)
				checkCode(t, i, err, tc.code)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("the upstream saw %d requests, want %d: %+v", len(got), len(tc.want), got)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("request %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func checkCode(t *testing.T, i int, err error, code string) {
	t.Helper()
	switch {
	case code == "" && err != nil:
		t.Errorf("request %d: %v", i, err)
	case code != "" && apierr.From(err).Code != code:
		t.Errorf("request %d: %v, want %s", i, err, code)
	}
}
