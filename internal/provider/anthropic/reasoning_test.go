package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// testBlock is one content block of a generated exchange: its type and,
// for thinking and text, the pieces a stream delivers it in.
type testBlock struct {
	typ    string // thinking, redacted_thinking, text
	pieces []string
}

// exchange renders the same answer as a Message body and as an SSE stream
// whose deltas are the blocks' pieces; out is the vendor's output_tokens.
func exchange(t testing.TB, blocks []testBlock, out int64) (msg, stream []byte) {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var content []map[string]any
	var sse strings.Builder
	ev := func(typ string, v map[string]any) {
		v["type"] = typ
		fmt.Fprintf(&sse, "event: %s\ndata: %s\n\n", typ, enc(v))
	}
	ev("message_start", map[string]any{"message": map[string]any{"id": "msg_gen", "type": "message", "role": "assistant",
		"content": []any{}, "model": "claude-sonnet-4-5", "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 20, "output_tokens": 1}}})
	for i, b := range blocks {
		whole := strings.Join(b.pieces, "")
		switch b.typ {
		case "thinking":
			content = append(content, map[string]any{"type": "thinking", "thinking": whole, "signature": "c2ln"})
			ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, p := range b.pieces {
				ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": p}})
			}
			ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "signature_delta", "signature": "c2ln"}})
		case "redacted_thinking":
			content = append(content, map[string]any{"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="})
			ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="}})
		case "text":
			content = append(content, map[string]any{"type": "text", "text": whole})
			ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, p := range b.pieces {
				ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": p}})
			}
		}
		ev("content_block_stop", map[string]any{"index": i})
	}
	ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": out}})
	ev("message_stop", map[string]any{})
	msg = []byte(enc(map[string]any{"id": "msg_gen", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": content, "stop_reason": "end_turn", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 20, "output_tokens": out}}))
	return msg, []byte(sse.String())
}

// wireUsage is the usage object of a chat.completion or its usage chunk.
type wireUsage struct {
	CompletionTokens        int64 `json:"completion_tokens"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (w *wireUsage) reasoning(t testing.TB) int64 {
	t.Helper()
	if w == nil || w.CompletionTokensDetails == nil {
		t.Fatalf("usage without completion_tokens_details: %+v", w)
	}
	return w.CompletionTokensDetails.ReasoningTokens
}

// plainUsage translates a Message body and returns its usage as reported
// to the gateway and as written on the wire.
func plainUsage(t testing.TB, c *Client, msg []byte) (provider.Usage, wireUsage) {
	t.Helper()
	res, err := c.response(msg, "claude-public", "", c.tokenizer(&provider.ChatRequest{PublicModel: "claude-public"}))
	if err != nil {
		t.Fatal(err)
	}
	var w struct{ Usage wireUsage }
	if err := json.Unmarshal(res.Body, &w); err != nil {
		t.Fatal(err)
	}
	return res.Usage, w.Usage
}

// streamedUsage runs an SSE body through a stream (with include_usage)
// and returns its final usage and the usage chunk's, with the thinking
// text the chunks delivered.
func streamedUsage(t testing.TB, c *Client, body io.Reader) (provider.Usage, wireUsage, string) {
	t.Helper()
	s := c.newStream(c.start(context.Background()), io.NopCloser(body),
		&provider.ChatRequest{PublicModel: "claude-public", UpstreamModel: "claude-sonnet-4-5", IncludeUsage: true}, "")
	defer s.Close()
	var last wireUsage
	var thinking strings.Builder
	chunks := 0
	for s.Next() {
		var ch struct {
			Choices []struct {
				Delta struct {
					ReasoningContent *string `json:"reasoning_content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *wireUsage `json:"usage"`
		}
		if err := json.Unmarshal(s.Chunk(), &ch); err != nil {
			t.Fatal(err)
		}
		for _, c := range ch.Choices {
			if c.Delta.ReasoningContent != nil {
				thinking.WriteString(*c.Delta.ReasoningContent)
			}
		}
		if ch.Usage != nil {
			last = *ch.Usage
			chunks++
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if chunks != 1 {
		t.Fatalf("%d usage chunks, want 1", chunks)
	}
	u, ok := s.Usage()
	if !ok {
		t.Fatal("stream has no usage")
	}
	return u, last, thinking.String()
}

// longThinking is about 40 KB of thinking (more than two of the streaming
// counter's buffers) in pieces of 1 to 97 bytes cut anywhere between
// characters: inside words, between a letter and its combining accent,
// inside emoji ZWJ sequences.
func longThinking() []string {
	words := []string{"Let", "me", "reconsider", "the", "premise;", "1234567", "Grüße", "cafe\u0301", "naïve", "—",
		"数学很有趣", "🤔", "👩\u200d💻", "don't", "x²+y²=z²", "\n\n", "e.g.", "(a,b)", "😀😀😀", "Ελληνικά"}
	rng := rand.New(rand.NewPCG(7, 11))
	var b strings.Builder
	for b.Len() < 40<<10 {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
	runes := []rune(b.String())
	var pieces []string
	for len(runes) > 0 {
		n := min(len(runes), 1+rng.IntN(40))
		pieces = append(pieces, string(runes[:n]))
		runes = runes[n:]
	}
	return pieces
}

// parityFixtures are the recorded answer (a Message and the same answer
// streamed) that the end-to-end test in internal/app replays too: two thinking blocks around a redacted one, the first cut
// inside words, between "e" and its combining accent, and inside an emoji
// ZWJ sequence, with escaped and raw UTF-8 deltas.
func parityFixtures(t testing.TB) (msg, stream []byte) {
	t.Helper()
	dir := filepath.Join("..", "providertest", "testdata", "anthropic")
	msg, err := os.ReadFile(filepath.Join(dir, "thinking.json"))
	if err != nil {
		t.Fatal(err)
	}
	stream, err = os.ReadFile(filepath.Join(dir, "thinking.sse"))
	if err != nil {
		t.Fatal(err)
	}
	return msg, stream
}

// thinkingOf is the concatenated thinking text of a Message body.
func thinkingOf(t testing.TB, msg []byte) string {
	t.Helper()
	var m anthropicwire.Response
	if err := json.Unmarshal(msg, &m); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, bl := range m.Content {
		if bl.Type == "thinking" {
			b.WriteString(bl.Thinking)
		}
	}
	return b.String()
}

// TestReasoningTokensStreamedAndNot checks that an answer reports the same
// reasoning_tokens as a Message and as a stream: the count of its
// thinking text, never more than the vendor's output_tokens, which stay
// completion_tokens.
func TestReasoningTokensStreamedAndNot(t *testing.T) {
	c := testClient(t)
	tok := testTokens.For("")
	pmsg, psse := parityFixtures(t)
	long := longThinking()
	type tc struct {
		name       string
		msg, sse   []byte
		completion int64 // the vendor's output_tokens
		want       int64
	}
	cases := []tc{{name: "recorded", msg: pmsg, sse: psse, completion: 180, want: 59}}
	gen := func(name string, blocks []testBlock, out, want int64) {
		m, s := exchange(t, blocks, out)
		cases = append(cases, tc{name, m, s, out, want})
	}
	longWant := int64(tok.Count([]byte(strings.Join(long, "") + "Then, finally: done.")))
	gen("long", []testBlock{{"thinking", long}, {"text", []string{"ok"}}, {"thinking", []string{"Then, fin", "ally: done."}}},
		100000, longWant)
	gen("clamped to output_tokens", []testBlock{{"thinking", []string{"A fairly long thought, ", "longer than the vendor's count."}},
		{"text", []string{"Hi"}}}, 5, 5)
	gen("redacted only", []testBlock{{"redacted_thinking", nil}, {"text", []string{"Hi there"}}}, 50, 0)
	gen("no thinking", []testBlock{{"text", []string{"Hel", "lo"}}}, 3, 0)
	gen("empty thinking", []testBlock{{"thinking", []string{""}}, {"text", []string{"Hi"}}}, 4, 0)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkMessageOracle(t, tc.msg)
			checkEventsOracle(t, tc.sse)
			if tc.want > 0 && tc.want < tc.completion {
				// The figure is the count of the thinking text, nothing else.
				if n := int64(tok.Count([]byte(thinkingOf(t, tc.msg)))); n != tc.want {
					t.Fatalf("the thinking text counts %d tokens, the case wants %d", n, tc.want)
				}
			}
			pu, pw := plainUsage(t, c, tc.msg)
			su, sw, delivered := streamedUsage(t, c, bytes.NewReader(tc.sse))
			if delivered != thinkingOf(t, tc.msg) {
				t.Fatalf("stream delivered thinking %q, the Message holds %q", delivered, thinkingOf(t, tc.msg))
			}
			for _, got := range []struct {
				how        string
				reasoning  int64
				completion int64
			}{
				{"Message usage", pu.ReasoningTokens, pu.CompletionTokens},
				{"Message body", pw.reasoning(t), pw.CompletionTokens},
				{"stream usage", su.ReasoningTokens, su.CompletionTokens},
				{"usage chunk", sw.reasoning(t), sw.CompletionTokens},
			} {
				if got.reasoning != tc.want || got.completion != tc.completion {
					t.Errorf("%s: reasoning_tokens %d completion_tokens %d, want %d and the vendor's %d",
						got.how, got.reasoning, got.completion, tc.want, tc.completion)
				}
			}
		})
	}
}

// TestReasoningTokensTransportSplits feeds the recorded stream cut in two
// at every byte (inside multi-byte characters too): the figure stays.
func TestReasoningTokensTransportSplits(t *testing.T) {
	c := testClient(t)
	_, in := parityFixtures(t)
	for cut := 1; cut < len(in); cut++ {
		u, _, _ := streamedUsage(t, c, io.MultiReader(bytes.NewReader(in[:cut]), bytes.NewReader(in[cut:])))
		if u.ReasoningTokens != 59 {
			t.Fatalf("cut at %d: reasoning_tokens %d, want 59", cut, u.ReasoningTokens)
		}
	}
}

// TestReasoningTokensWithoutTokenizer: a client built without a tokenizer
// reports no reasoning tokens rather than guessing.
func TestReasoningTokensWithoutTokenizer(t *testing.T) {
	c, err := New(Options{Name: "no-tokenizer"})
	if err != nil {
		t.Fatal(err)
	}
	msg, in := parityFixtures(t)
	pu, pw := plainUsage(t, c, msg)
	su, sw, _ := streamedUsage(t, c, bytes.NewReader(in))
	if pu.ReasoningTokens != 0 || pw.reasoning(t) != 0 || su.ReasoningTokens != 0 || sw.reasoning(t) != 0 ||
		pu.CompletionTokens != 180 || su.CompletionTokens != 180 {
		t.Errorf("usage %+v / %+v", pu, su)
	}
}

// TestReasoningCountUsesCatalogTokenizer checks the client asks for the
// tokenizer of the request's model, by public and upstream id.
func TestReasoningCountUsesCatalogTokenizer(t *testing.T) {
	var asked []string
	c, err := New(Options{Name: "a", Tokenizer: func(public, upstream string) *tokenize.Tokenizer {
		asked = append(asked, public+"|"+upstream)
		return testTokens.For("cl100k")
	}})
	if err != nil {
		t.Fatal(err)
	}
	msg, in := parityFixtures(t)
	_, _ = plainUsage(t, c, msg)
	su, _, _ := streamedUsage(t, c, bytes.NewReader(in))
	want := int64(testTokens.For("cl100k").Count([]byte(thinkingOf(t, msg))))
	if su.ReasoningTokens != want || want == 59 {
		t.Errorf("reasoning %d, want cl100k's %d (o200k's is 59)", su.ReasoningTokens, want)
	}
	if strings.Join(asked, ",") != "claude-public|,claude-public|claude-sonnet-4-5" {
		t.Errorf("tokenizer asked for %q", asked)
	}
}
