package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
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

// TestThinkingBlocksReplayed: an assistant turn's thinking_blocks go back
// first in the turn, so thinking stays on in a tool loop; without
// thinking they are dropped, and a tool turn without them turns it off.
func TestThinkingBlocksReplayed(t *testing.T) {
	c := testClient(t)
	turn := func(blocks string) string {
		return `{"model":"p","reasoning_effort":"low","messages":[{"role":"user","content":"ls?"},` +
			`{"role":"assistant","content":null` + blocks + `,"tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"sh","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"toolu_1","content":"a b"}],"tools":[{"type":"function","function":{"name":"sh"}}]}`
	}
	signed := `,"thinking_blocks":[{"type":"thinking","thinking":"Run ls.","signature":"c2ln"},{"type":"redacted_thinking","data":"cmVk"}]`
	cases := []struct {
		name, body string
		thinking   bool
		want       string // the assistant turn's content, "" to skip
	}{
		{"replayed", turn(signed), true,
			`[{"type":"thinking","thinking":"Run ls.","signature":"c2ln"},{"type":"redacted_thinking","data":"cmVk"},{"type":"tool_use","id":"toolu_1","name":"sh","input":{}}]`},
		{"not kept by the client", turn(""), false, `[{"type":"tool_use","id":"toolu_1","name":"sh","input":{}}]`},
		{"thinking not asked for", strings.Replace(turn(signed), `"reasoning_effort":"low",`, "", 1), false,
			`[{"type":"tool_use","id":"toolu_1","name":"sh","input":{}}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := c.translate(chatRequest([]byte(tc.body)), false)
			if err != nil {
				t.Fatal(err)
			}
			checkRequestOracle(t, tr.body)
			var got struct {
				Thinking *anthropicwire.Thinking `json:"thinking"`
				Messages []struct {
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(tr.body, &got); err != nil {
				t.Fatal(err)
			}
			if (got.Thinking != nil) != tc.thinking || string(got.Messages[1].Content) != tc.want {
				t.Errorf("thinking %+v, assistant turn %s", got.Thinking, got.Messages[1].Content)
			}
		})
	}
	bad := strings.Replace(turn(signed), `"signature":"c2ln"`, `"signature":""`, 1)
	if _, err := c.translate(chatRequest([]byte(bad)), false); err == nil || !strings.Contains(err.Error(), "thinking_blocks[0]") {
		t.Errorf("unsigned thinking: %v", err)
	}
}

// TestThinkingBlocksAnswered: the answer's signed thinking comes back as
// thinking_blocks, whole in a Message, and in a stream as one block per
// thinking block closing the reasoning_content streamed for it.
func TestThinkingBlocksAnswered(t *testing.T) {
	c := testClient(t)
	msg, sse := exchange(t, []testBlock{{"thinking", []string{"One ", "two."}}, {"redacted_thinking", nil},
		{"thinking", []string{"Three."}}, {"text", []string{"Hi"}}}, 50)
	res, err := c.response(msg, "p", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `"thinking_blocks":[{"type":"thinking","thinking":"One two.","signature":"c2ln"},{"type":"redacted_thinking","data":"cmVkYWN0ZWQ="},{"type":"thinking","thinking":"Three.","signature":"c2ln"}]`
	if !strings.Contains(string(res.Body), want) {
		t.Errorf("answer %s", res.Body)
	}
	s := c.newStream(c.start(context.Background()), io.NopCloser(bytes.NewReader(sse)), &provider.ChatRequest{PublicModel: "p"}, "")
	defer s.Close()
	var seq []string
	for s.Next() {
		var ch oaiwire.Chunk
		if err := json.Unmarshal(s.Chunk(), &ch); err != nil {
			t.Fatal(err)
		}
		for _, c := range ch.Choices {
			if r := c.Delta.ReasoningContent; r != nil {
				seq = append(seq, *r)
			}
			for _, b := range c.Delta.ThinkingBlocks {
				seq = append(seq, "["+b.Type+" "+b.Signature+b.Data+"]")
				if b.Thinking != nil {
					t.Errorf("a streamed block repeats its text: %+v", b)
				}
			}
		}
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	if got := strings.Join(seq, "|"); got != "One |two.|[thinking c2ln]|[redacted_thinking cmVkYWN0ZWQ=]|Three.|[thinking c2ln]" {
		t.Errorf("stream %s", got)
	}
}
