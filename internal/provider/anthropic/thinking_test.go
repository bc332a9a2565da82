package anthropic

import (
	"bytes"
	"strings"
	"testing"
)

// TestReasoningTokensReported: an answer that reports its thinking tokens
// (usage.output_tokens_details.thinking_tokens, in the Message and in the
// stream's message_delta) is taken at its word, clamped to output_tokens;
// the tokenizer's count is only the fallback for answers that do not.
func TestReasoningTokensReported(t *testing.T) {
	c := testClient(t)
	blocks := []testBlock{{"thinking", []string{"Let me think ", "about it."}}, {"text", []string{"Hi"}}}
	counted := int64(testTokens.For("").Count([]byte("Let me think about it.")))
	cases := []struct {
		name    string
		details string // the output_tokens_details member, "" none
		want    int64
	}{
		{"reported", `,"output_tokens_details":{"thinking_tokens":42}`, 42},
		{"reported zero", `,"output_tokens_details":{"thinking_tokens":0}`, 0},
		{"clamped to output_tokens", `,"output_tokens_details":{"thinking_tokens":500}`, 100},
		{"details without the count", `,"output_tokens_details":{}`, counted},
		{"not reported", "", counted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg, sse := exchange(t, blocks, 100)
			msg = bytes.Replace(msg, []byte(`"output_tokens":100}`), []byte(`"output_tokens":100`+tc.details+`}`), 1)
			sse = bytes.Replace(sse, []byte(`"usage":{"output_tokens":100}`), []byte(`"usage":{"output_tokens":100`+tc.details+`}`), 1)
			if tc.details != "" && (!bytes.Contains(msg, []byte("output_tokens_details")) || !bytes.Contains(sse, []byte("output_tokens_details"))) {
				t.Fatal("fixture not patched")
			}
			checkMessageOracle(t, msg)
			checkEventsOracle(t, sse)
			pu, pw := plainUsage(t, c, msg)
			su, sw, delivered := streamedUsage(t, c, bytes.NewReader(sse))
			if !strings.Contains(delivered, "think") {
				t.Fatalf("thinking not delivered: %q", delivered)
			}
			for _, got := range []struct {
				how string
				n   int64
			}{{"Message usage", pu.ReasoningTokens}, {"Message body", pw.reasoning(t)}, {"stream usage", su.ReasoningTokens}, {"usage chunk", sw.reasoning(t)}} {
				if got.n != tc.want {
					t.Errorf("%s: reasoning_tokens %d, want %d", got.how, got.n, tc.want)
				}
			}
			if pu.CompletionTokens != 100 || su.CompletionTokens != 100 {
				t.Errorf("completion %d / %d", pu.CompletionTokens, su.CompletionTokens)
			}
		})
	}
}
