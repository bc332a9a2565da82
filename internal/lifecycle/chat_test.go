package lifecycle

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/sse"
)

// fakeChatter answers with body, or streams chunks then ends with err.
type fakeChatter struct {
	body   []byte
	chunks []string
	err    error
}

func (c fakeChatter) Chat(context.Context, *provider.ChatRequest) (*provider.ChatResponse, error) {
	return &provider.ChatResponse{Body: c.body}, nil
}

func (c fakeChatter) ChatStream(context.Context, *provider.ChatRequest) (provider.ChatStream, error) {
	return &fakeStream{chunks: c.chunks, err: c.err}, nil
}

type fakeStream struct {
	chunks []string
	i      int
	err    error
}

func (s *fakeStream) Next() bool                    { s.i++; return s.i <= len(s.chunks) }
func (s *fakeStream) Chunk() []byte                 { return []byte(s.chunks[s.i-1]) }
func (s *fakeStream) Usage() (provider.Usage, bool) { return provider.Usage{}, false }
func (s *fakeStream) Close() error                  { return nil }
func (s *fakeStream) Err() error {
	if s.i > len(s.chunks) {
		return s.err
	}
	return nil
}

// namedEncoder is a door whose format is not OpenAI's: named events, an
// answer wrapped in an envelope, errors as "error" events.
type namedEncoder struct{ failed *int }

func (e namedEncoder) Fail(w http.ResponseWriter, info *reqinfo.Info, err error) {
	*e.failed = Note(info, err).Status
	w.WriteHeader(*e.failed)
}

func (namedEncoder) Answer(body []byte, _ *Outcome) ([]byte, error) {
	return []byte(`{"wrapped":` + string(body) + `}`), nil
}

func (namedEncoder) Chunk(sw *sse.Writer, chunk []byte) error { return sw.Event("delta", chunk) }

func (namedEncoder) End(sw *sse.Writer, _ provider.Usage) error {
	return sw.Raw([]byte("event: stop\ndata: {}\n\n"))
}

func (namedEncoder) Broken(sw *sse.Writer, e *apierr.Error) error {
	return sw.Event("error", []byte(`{"code":"`+e.Code+`"}`))
}

// Core.Chat speaks through the door's encoder: answers, chunks, the
// stream's end and its breaking, and refusals before anything is written.
func TestChatUsesEncoder(t *testing.T) {
	broken := provider.FromStatus("p", http.StatusInternalServerError, nil, provider.VendorError{})
	tests := []struct {
		name   string
		model  string
		stream bool
		ch     fakeChatter
		status int    // the response's
		failed int    // what Fail was given (0: not called)
		body   string // the response body
		code   string // info.ErrCode
	}{
		{"answer", "m", false, fakeChatter{body: []byte(`{"id":"1"}`)}, 200, 0, `{"wrapped":{"id":"1"}}`, ""},
		{"stream", "m", true, fakeChatter{chunks: []string{`{"a":1}`, `{"a":2}`}}, 200, 0,
			"event: delta\ndata: {\"a\":1}\n\nevent: delta\ndata: {\"a\":2}\n\nevent: stop\ndata: {}\n\n", ""},
		{"broken stream", "m", true, fakeChatter{chunks: []string{`{"a":1}`}, err: broken}, 200, 0,
			"event: delta\ndata: {\"a\":1}\n\nevent: error\ndata: {\"code\":\"" + apierr.From(broken).Code + "\"}\n\n", apierr.From(broken).Code},
		{"unknown model", "nope", false, fakeChatter{}, 404, 404, "", apierr.CodeModelNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Core{Policy: gate.NewPolicy(map[string][]string{"default": {"*"}}, []string{"m"}),
				Router: route.New([]route.Deployment{{Provider: "p", Chatter: tt.ch, Model: "m", Upstream: "m-up"}})}
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			info := &reqinfo.Info{Model: tt.model, Stream: tt.stream}
			w := httptest.NewRecorder()
			req := &provider.ChatRequest{PublicModel: tt.model, Body: []byte(`{}`), Stream: tt.stream}
			failed := 0
			var out Outcome
			h.Chat(w, r, info, gate.Principal{Group: "default"}, req, ChatParams{Model: tt.model, Stream: tt.stream}, namedEncoder{&failed}, &out)
			if w.Code != tt.status || failed != tt.failed || w.Body.String() != tt.body || info.ErrCode != tt.code {
				t.Errorf("got %d (Fail %d) %q code %q; want %d (Fail %d) %q code %q",
					w.Code, failed, w.Body.String(), info.ErrCode, tt.status, tt.failed, tt.body, tt.code)
			}
			if tt.failed == 0 && req.UpstreamModel != "m-up" {
				t.Errorf("upstream model %q", req.UpstreamModel)
			}
			if tt.stream && !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
				t.Errorf("content type %q", w.Header().Get("Content-Type"))
			}
		})
	}
}
