package openaicompat

import (
	"testing"

	"github.com/modelgate/modelgate/internal/provider"
)

func TestParseUsage(t *testing.T) {
	tests := []struct {
		name, raw string
		want      provider.Usage
		ok        bool
	}{
		{"plain", `{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29}`, provider.Usage{PromptTokens: 19, CompletionTokens: 10, TotalTokens: 29}, true},
		{"details", `{"prompt_tokens":100,"completion_tokens":50,"total_tokens":150,"prompt_tokens_details":{"cached_tokens":64,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":30}}`,
			provider.Usage{PromptTokens: 100, CompletionTokens: 50, TotalTokens: 150, CachedTokens: 64, ReasoningTokens: 30}, true},
		{"null details", `{"prompt_tokens":1,"completion_tokens":2,"prompt_tokens_details":null}`, provider.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}, true},
		{"total missing", ` {"prompt_tokens":4,"completion_tokens":5} `, provider.Usage{PromptTokens: 4, CompletionTokens: 5, TotalTokens: 9}, true},
		{"empty object", `{}`, provider.Usage{}, true},
		{"float count", `{"prompt_tokens":12.0,"completion_tokens":1}`, provider.Usage{}, false},
		{"string count", `{"prompt_tokens":"12","completion_tokens":1}`, provider.Usage{}, false},
		{"details not an object", `{"prompt_tokens":1,"prompt_tokens_details":5}`, provider.Usage{}, false},
		{"not an object", `[1,2]`, provider.Usage{}, false},
		{"first of a repeated member counts", `{"prompt_tokens":7,"prompt_tokens":"x","completion_tokens_details":{"reasoning_tokens":2,"reasoning_tokens":9}}`,
			provider.Usage{PromptTokens: 7, TotalTokens: 7, ReasoningTokens: 2}, true},
		{"exponent", `{"prompt_tokens":1e3}`, provider.Usage{}, false},
		{"too long", `{"completion_tokens":1234567890123456789}`, provider.Usage{}, false},
		{"eighteen digits", `{"completion_tokens":123456789012345678}`, provider.Usage{CompletionTokens: 123456789012345678, TotalTokens: 123456789012345678}, true},
		{"negative", `{"prompt_tokens":-1,"completion_tokens":3}`, provider.Usage{PromptTokens: -1, CompletionTokens: 3, TotalTokens: 2}, true},
		{"null count", `{"prompt_tokens":null,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":null}}`,
			provider.Usage{CompletionTokens: 3, TotalTokens: 3}, true},
		{"bad count in details", `{"prompt_tokens_details":{"cached_tokens":true}}`, provider.Usage{}, false},
		{"empty", ``, provider.Usage{}, false},
		{"audio", `{"prompt_tokens":120,"completion_tokens":80,"prompt_tokens_details":{"audio_tokens":100,"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":64,"text_tokens":16}}`,
			provider.Usage{PromptTokens: 120, CompletionTokens: 80, TotalTokens: 200, AudioPromptTokens: 100, AudioCompletionTokens: 64}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseUsage([]byte(tt.raw))
			if got != tt.want || ok != tt.ok {
				t.Errorf("parseUsage(%s) = %+v, %v; want %+v, %v", tt.raw, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// BenchmarkParseUsage: the usage of every answer is read on the hot path
// (2.8 µs a call with five jsonx.Field scans, 0.5 µs in one pass).
func BenchmarkParseUsage(b *testing.B) {
	raw := []byte(`{"prompt_tokens":100,"completion_tokens":50,"total_tokens":150,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":30}}`)
	for b.Loop() {
		if _, ok := parseUsage(raw); !ok {
			b.Fatal("not ok")
		}
	}
}
