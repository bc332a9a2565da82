package jsonx

import (
	"bytes"
	"strings"
	"testing"
)

var benchChunk = []byte(`{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"content":" assist \"you\" today"},"logprobs":null,"finish_reason":null}],"usage":null}`)

var benchBody = []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"` + strings.Repeat("You are a helpful assistant. ", 12) +
	`"},{"role":"user","content":"` + strings.Repeat("Tell me about the weather in Paris. ", 20) + `"}],"temperature":0.7,"max_tokens":256}`)

func BenchmarkCheckChunk(b *testing.B) {
	b.SetBytes(int64(len(benchChunk)))
	for b.Loop() {
		if err := Check(benchChunk, 64); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckBody(b *testing.B) {
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		if err := Check(benchBody, 64); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFieldUsage(b *testing.B) {
	for b.Loop() {
		if _, ok := Field(benchChunk, "usage"); !ok {
			b.Fatal("no usage")
		}
	}
}

// benchStream is 21 chunks of one stream: a role chunk, content chunks
// that differ in their delta content, and the finish chunk.
func benchStream() [][]byte {
	words := strings.Fields(`Hello! I can help with that. Your order 4471-2290-18 left our warehouse yesterday and should arrive by Friday, "tracked" as usual.`)
	chunks := [][]byte{bytes.Replace(contentChunk(""), []byte(`"delta":{"content":""}`), []byte(`"delta":{"role":"assistant","content":""}`), 1)}
	for _, w := range words[:19] {
		chunks = append(chunks, contentChunk(strings.ReplaceAll(" "+w, `"`, `\"`)))
	}
	return append(chunks, bytes.Replace(contentChunk(""), []byte(`"finish_reason":null`), []byte(`"finish_reason":"stop"`), 1))
}

// BenchmarkStreamChunks checks a stream's chunks as openaicompat does, one
// ChunkChecker per stream, against CheckObjectProbe on each chunk alone.
func BenchmarkStreamChunks(b *testing.B) {
	chunks := benchStream()
	keys := []string{"model", "usage", "error", "choices"}
	spans := make([]Span, len(keys))
	b.Run("CheckObjectProbe", func(b *testing.B) {
		for b.Loop() {
			for _, c := range chunks {
				if _, _, err := CheckObjectProbe(c, 256, keys, spans, 3, "finish_reason"); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(chunks)), "ns/chunk")
	})
	b.Run("ChunkChecker", func(b *testing.B) {
		for b.Loop() {
			var cc ChunkChecker
			for _, c := range chunks {
				if _, _, err := cc.Check(c, 256, keys, spans, 3, "finish_reason"); err != nil {
					b.Fatal(err)
				}
			}
			cc.Release()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(chunks)), "ns/chunk")
	})
}
