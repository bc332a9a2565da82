package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/openaicompat"
	"github.com/modelgate/modelgate/internal/reqinfo"
)

// benchUpstreamStream is a stream like bench/upstream.go's: n content
// chunks, a finish chunk, a usage-only chunk (the gateway always asks for
// usage), then [DONE]; every chunk carries "usage":null.
func benchUpstreamStream(n int) []byte {
	words := []string{"Sure! ", "Here is ", "a short ", "summary ", "of the ", "request: "}
	head := `data: {"id":"chatcmpl-bench1","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_bench"`
	var b []byte
	for i := 0; i < n; i++ {
		b = append(b, head...)
		if i == 0 {
			b = append(b, `,"choices":[{"index":0,"delta":{"role":"assistant","content":`...)
		} else {
			b = append(b, `,"choices":[{"index":0,"delta":{"content":`...)
		}
		b = strconv.AppendQuote(b, words[i%len(words)])
		if i == 0 {
			b = append(b, `,"refusal":null`...)
		}
		b = append(b, `},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n"...)
	}
	b = append(b, head...)
	b = append(b, `,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`+"\n\n"...)
	b = append(b, head...)
	b = append(b, `,"choices":[],"usage":{"prompt_tokens":281,"completion_tokens":50,"total_tokens":331,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`+"\n\n"...)
	return append(b, "data: [DONE]\n\n"...)
}

// cannedTransport answers every request with one recorded event stream.
type cannedTransport struct{ body []byte }

func (t *cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(bytes.NewReader(t.body)),
		Request: r, ContentLength: -1}, nil
}

// countingWriter is a ResponseWriter that discards the body but counts
// writes and flushes, the way net/http's would reach the socket.
type countingWriter struct {
	h               http.Header
	n               int64
	writes, flushes int
}

func (d *countingWriter) Header() http.Header { return d.h }
func (d *countingWriter) Write(b []byte) (int, error) {
	d.writes++
	d.n += int64(len(b))
	return len(b), nil
}
func (d *countingWriter) WriteHeader(int)   {}
func (d *countingWriter) FlushError() error { d.flushes++; return nil }

// BenchmarkStreamRelay runs a whole upstream stream through openaicompat's
// stream and the chat relay (the writer) into a discarding ResponseWriter:
// the gateway's own per-chunk work, without sockets. allocs/chunk is the
// steady-state figure: compare events=21 with events=1001 to separate the
// per-request allocations (the HTTP request, the call's timers) from the
// per-chunk ones.
func BenchmarkStreamRelay(b *testing.B) {
	for _, n := range []int{20, 1000} {
		body := benchUpstreamStream(n)
		events := n + 1 // data events the client gets (no usage asked)
		b.Run("events="+strconv.Itoa(events), func(b *testing.B) {
			c, err := openaicompat.New(openaicompat.Options{Name: "bench", BaseURL: "http://upstream.invalid/v1",
				Timeout: time.Minute, IdleTimeout: time.Minute, HTTPClient: &http.Client{Transport: &cannedTransport{body: body}}})
			if err != nil {
				b.Fatal(err)
			}
			h := &Handler{Core: &lifecycle.Core{}}
			req := &provider.ChatRequest{PublicModel: "gpt-4o-mini", UpstreamModel: "gpt-4o-mini",
				Body: []byte(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`), Stream: true}
			w := &countingWriter{h: http.Header{}}
			ctx := context.Background()
			hr := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			for b.Loop() {
				st, err := c.ChatStream(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				clear(w.h)
				var out lifecycle.Outcome
				info := &reqinfo.Info{}
				h.Relay(w, hr, info, st, st.Next(), lifecycle.StreamBill{Out: &out}, chatEncoder{})
				if info.ErrCode != "" {
					b.Fatalf("stream failed: %s %s", info.ErrCode, info.ErrDetail)
				}
			}
			runtime.ReadMemStats(&ms1)
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(b.N*events), "allocs/chunk")
			b.ReportMetric(float64(w.writes)/float64(b.N), "writes/op")
			b.ReportMetric(float64(w.flushes)/float64(b.N), "flushes/op")
		})
	}
}
