package openai

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/ratelimit"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/telemetry"
)

var benchBody = []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"` + strings.Repeat("You are a helpful assistant. ", 12) +
	`"},{"role":"user","content":"` + strings.Repeat("Tell me about the weather in Paris. ", 20) + `"}],"temperature":0.7,"max_tokens":256,"stream":true}`)

func BenchmarkParseChat(b *testing.B) {
	b.SetBytes(int64(len(benchBody)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseChat(benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

type benchAuth struct{ limits gate.Limits }

func (a benchAuth) Authenticate(context.Context, string) (gate.Principal, error) {
	return gate.Principal{KeyID: "key_1", AccountID: "acct_1", Group: "default", Limits: a.limits}, nil
}

type benchRecorder struct{ n int }

func (r *benchRecorder) Record(store.UsageRecord) { r.n++ }

// benchChatter streams 22 recorded chunks without any network.
type benchChatter struct{ chunks [][]byte }

func (c benchChatter) Chat(context.Context, *provider.ChatRequest) (*provider.ChatResponse, error) {
	return &provider.ChatResponse{Body: c.chunks[0]}, nil
}

func (c benchChatter) ChatStream(context.Context, *provider.ChatRequest) (provider.ChatStream, error) {
	return &sliceStream{chunks: c.chunks}, nil
}

type sliceStream struct {
	chunks [][]byte
	i      int
}

func (s *sliceStream) Next() bool                    { s.i++; return s.i <= len(s.chunks) }
func (s *sliceStream) Chunk() []byte                 { return s.chunks[s.i-1] }
func (s *sliceStream) Usage() (provider.Usage, bool) { return provider.Usage{PromptTokens: 1}, true }
func (s *sliceStream) Err() error                    { return nil }
func (s *sliceStream) Close() error                  { return nil }

type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) FlushError() error           { return nil }

// BenchmarkHandlerStream measures the gateway's own work for one streamed
// request (validation, routing, relaying 22 chunks, the usage record, the
// metrics), without sockets or a vendor.
func BenchmarkHandlerStream(b *testing.B) {
	benchHandlerStream(b, benchAuth{}, nil)
}

// BenchmarkHandlerStreamLimited is BenchmarkHandlerStream for a key with
// a request and a concurrency limit (never reached).
func BenchmarkHandlerStreamLimited(b *testing.B) {
	benchHandlerStream(b, benchAuth{limits: gate.Limits{RPM: 1 << 40, Concurrency: 100}},
		&lifecycle.RateLimits{Requests: ratelimit.NewMemory(), Tokens: ratelimit.NewMemory(), Running: ratelimit.NewSlots()})
}

func benchHandlerStream(b *testing.B, auth benchAuth, limits *lifecycle.RateLimits) {
	chunk := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}`)
	chunks := make([][]byte, 22)
	for i := range chunks {
		chunks[i] = chunk
	}
	h := &Handler{Core: &lifecycle.Core{Auth: auth, Usage: &benchRecorder{}, MaxBody: 1 << 20, RateLimits: limits,
		Policy:  gate.NewPolicy(map[string][]string{"default": {"*"}}, []string{"gpt-4o-mini"}),
		Router:  route.New([]route.Deployment{{Provider: "p", Chatter: benchChatter{chunks}, Model: "gpt-4o-mini", Upstream: "gpt-4o-mini"}}),
		Metrics: telemetry.New(telemetry.Options{Models: []string{"gpt-4o-mini"}, Providers: []string{"p"}})}}
	mux := http.NewServeMux()
	h.Routes(mux)
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(benchBody))
		r.Header.Set("Authorization", "Bearer sk-x")
		mux.ServeHTTP(&discardWriter{h: http.Header{}}, r)
	}
}
