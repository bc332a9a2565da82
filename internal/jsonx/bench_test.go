package jsonx

import (
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
