package completechat

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/demo"
)

func TestTranslate(t *testing.T) {
	tests := []struct {
		name, body string
		stream     bool
		usage      bool
		want       string // the chat body, when ok
		param      string // the refused param, when not
	}{
		{"string prompt, legacy default max_tokens", `{"model":"m","prompt":"Once upon"}`, false, false,
			`{"model":"pub","messages":[{"role":"user","content":"Once upon"}],"max_tokens":16}`, ""},
		{"one-string array and every carried param",
			`{"model":"m","prompt":["Once upon"],"max_tokens":50,"temperature":0.5,"top_p":0.9,"stop":["\n","END"],"n":2,"user":"u-1",
			"seed":42,"presence_penalty":-1,"frequency_penalty":1.5,"logit_bias":{"50256":-100},"best_of":1,"echo":false,"suffix":"",
			"logprobs":null,"unknown":true}`, false, false,
			`{"model":"pub","messages":[{"role":"user","content":"Once upon"}],"max_tokens":50,"temperature":0.5,"top_p":0.9,"stop":["\n","END"],"n":2,"user":"u-1","seed":42,"presence_penalty":-1,"frequency_penalty":1.5}`, ""},
		{"nulls are dropped", `{"model":"m","prompt":"p","temperature":null,"stop":null,"max_tokens":null}`, false, false,
			`{"model":"pub","messages":[{"role":"user","content":"p"}],"max_tokens":16}`, ""},
		{"stream without usage", `{"model":"m","prompt":"p","stream":true}`, true, false,
			`{"model":"pub","messages":[{"role":"user","content":"p"}],"max_tokens":16,"stream":true}`, ""},
		{"stream with usage", `{"model":"m","prompt":"p","stream":true,"stream_options":{"include_usage":true}}`, true, true,
			`{"model":"pub","messages":[{"role":"user","content":"p"}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true}}`, ""},

		{"two prompts", `{"model":"m","prompt":["a","b"]}`, false, false, "", "prompt"},
		{"token ids", `{"model":"m","prompt":[1212,318]}`, false, false, "", "prompt"},
		{"token arrays", `{"model":"m","prompt":[[1212,318]]}`, false, false, "", "prompt"},
		{"empty prompt", `{"model":"m","prompt":""}`, false, false, "", "prompt"},
		{"suffix", `{"model":"m","prompt":"p","suffix":"end"}`, false, false, "", "suffix"},
		{"echo", `{"model":"m","prompt":"p","echo":true}`, false, false, "", "echo"},
		{"logprobs 0", `{"model":"m","prompt":"p","logprobs":0}`, false, false, "", "logprobs"},
		{"best_of 2", `{"model":"m","prompt":"p","best_of":2}`, false, false, "", "best_of"},
		{"max_tokens 0", `{"model":"m","prompt":"p","max_tokens":0}`, false, false, "", "max_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &provider.CompletionRequest{PublicModel: "pub", UpstreamModel: "up", Body: []byte(tt.body), Stream: tt.stream, IncludeUsage: tt.usage}
			got, err := Translate(req)
			if tt.param != "" {
				if e := apierr.From(err); err == nil || e.Status != 400 || e.Param != tt.param {
					t.Fatalf("err %v, want a 400 on %s", err, tt.param)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Body) != tt.want {
				t.Errorf("chat body\n got %s\nwant %s", got.Body, tt.want)
			}
			if got.PublicModel != "pub" || got.UpstreamModel != "up" || got.Stream != tt.stream || got.IncludeUsage != tt.usage {
				t.Errorf("request %+v", got)
			}
			if string(req.Body) != tt.body {
				t.Error("Translate changed the caller's request")
			}
		})
	}
}

func TestResponse(t *testing.T) {
	chat := `{"id":"chatcmpl-abc","object":"chat.completion","created":1700000000,"model":"whatever","system_fingerprint":"fp_1",
		"choices":[{"index":0,"message":{"role":"assistant","content":"Hi there"},"finish_reason":"length","logprobs":null},
		{"index":1,"message":{"role":"assistant","content":null,"refusal":"No."},"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`
	got, err := Response([]byte(chat), "pub")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"cmpl-abc","object":"text_completion","created":1700000000,"model":"pub","system_fingerprint":"fp_1",` +
		`"choices":[{"text":"Hi there","index":0,"logprobs":null,"finish_reason":"length"},{"text":"No.","index":1,"logprobs":null,"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`
	if string(got) != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if _, err := Response([]byte(`{"choices":"x"}`), "pub"); err == nil {
		t.Error("a malformed chat answer was accepted")
	}
}

// fakeStream replays chat chunks.
type fakeStream struct {
	chunks []string
	i      int
	err    error
	closed bool
}

func (f *fakeStream) Next() bool {
	if f.i >= len(f.chunks) {
		return false
	}
	f.i++
	return true
}
func (f *fakeStream) Chunk() []byte                 { return []byte(f.chunks[f.i-1]) }
func (f *fakeStream) Usage() (provider.Usage, bool) { return provider.Usage{PromptTokens: 2}, true }
func (f *fakeStream) Err() error                    { return f.err }
func (f *fakeStream) Close() error                  { f.closed = true; return nil }

func TestStream(t *testing.T) {
	in := &fakeStream{chunks: []string{
		`{"id":"chatcmpl-s","object":"chat.completion.chunk","created":5,"model":"x","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		`{"id":"chatcmpl-s","object":"chat.completion.chunk","created":5,"model":"x","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
		`{"id":"chatcmpl-s","object":"chat.completion.chunk","created":5,"model":"x","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}`,
		`{"id":"chatcmpl-s","object":"chat.completion.chunk","created":5,"model":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"chatcmpl-s","object":"chat.completion.chunk","created":5,"model":"x","choices":[],"usage":{"prompt_tokens":2,"completion_tokens":2,"total_tokens":4}}`,
	}}
	s := newStream(in, "pub")
	var got []string
	for s.Next() {
		got = append(got, string(s.Chunk()))
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	want := []string{
		`{"id":"cmpl-s","object":"text_completion","created":5,"model":"pub","choices":[{"text":"Hel","index":0,"logprobs":null,"finish_reason":null}]}`,
		`{"id":"cmpl-s","object":"text_completion","created":5,"model":"pub","choices":[{"text":"lo","index":0,"logprobs":null,"finish_reason":null}]}`,
		`{"id":"cmpl-s","object":"text_completion","created":5,"model":"pub","choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"stop"}]}`,
		`{"id":"cmpl-s","object":"text_completion","created":5,"model":"pub","choices":[],"usage":{"prompt_tokens":2,"completion_tokens":2,"total_tokens":4}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("chunks\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if u, ok := s.Usage(); !ok || u.PromptTokens != 2 {
		t.Errorf("usage %+v", u)
	}
	_ = s.Close()
	if !in.closed {
		t.Error("Close did not close the chat stream")
	}

	bad := newStream(&fakeStream{chunks: []string{`{"choices":7}`}}, "pub")
	if bad.Next() || apierr.From(bad.Err()).Code != apierr.CodeBadUpstreamResponse {
		t.Errorf("a malformed chunk gave %v", bad.Err())
	}
}

// The demo provider answers through the adapter, streamed and not, with the
// same text.
func TestDemo(t *testing.T) {
	a := New(demo.New(func() time.Time { return time.Unix(1700000000, 0) }))
	var _ provider.Completer = a
	req := &provider.CompletionRequest{PublicModel: "demo-instruct", UpstreamModel: "demo-instruct",
		Body: []byte(`{"model":"demo-instruct","prompt":"Say this is a test","max_tokens":5}`)}
	res, err := a.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		ID, Object, Model string
		Choices           []struct {
			Text         string
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.Unmarshal(res.Body, &c); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.ID, "cmpl-") || c.Object != "text_completion" || c.Model != "demo-instruct" || len(c.Choices) != 1 ||
		c.Choices[0].FinishReason != "length" || c.Choices[0].Text == "" || !res.HasUsage || res.Usage.CompletionTokens != 5 {
		t.Fatalf("answer %s usage %+v", res.Body, res.Usage)
	}
	req.Stream = true
	st, err := a.CompleteStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text strings.Builder
	for st.Next() {
		var ch struct {
			Object  string
			Choices []struct{ Text string }
		}
		if err := json.Unmarshal(st.Chunk(), &ch); err != nil || ch.Object != "text_completion" {
			t.Fatalf("chunk %s: %v", st.Chunk(), err)
		}
		for _, x := range ch.Choices {
			text.WriteString(x.Text)
		}
	}
	if st.Err() != nil || text.String() != c.Choices[0].Text {
		t.Errorf("streamed %q (%v), want %q", text.String(), st.Err(), c.Choices[0].Text)
	}

	req.Body = []byte(`{"model":"demo-instruct","prompt":"x","echo":true}`)
	if _, err := a.CompleteStream(context.Background(), req); apierr.From(err).Param != "echo" {
		t.Errorf("echo: %v", err)
	}
}

func FuzzTranslate(f *testing.F) {
	for _, s := range []string{`{"prompt":"hi","max_tokens":3,"stop":["a"]}`, `{"prompt":["hi"]}`, `{"prompt":[[1]]}`, `{"prompt":null}`,
		`{"prompt":"p","echo":true}`, `{"id":"chatcmpl-x","choices":[{"index":0,"message":{"content":"t"},"delta":{"content":"d"},"finish_reason":"stop"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if out, err := Translate(&provider.CompletionRequest{PublicModel: "m", Body: body}); err == nil {
			var c chatRequest
			if err := json.Unmarshal(out.Body, &c); err != nil || len(c.Messages) != 1 || c.Messages[0].Content == "" {
				t.Fatalf("chat body %s: %v", out.Body, err)
			}
		}
		if b, err := Response(body, "m"); err == nil && !json.Valid(b) {
			t.Fatalf("response %s", b)
		}
		s := newStream(&fakeStream{chunks: []string{string(body)}}, "m")
		if s.Next() && !json.Valid(s.Chunk()) {
			t.Fatalf("chunk %s", s.Chunk())
		}
	})
}
