package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/modelgate/modelgate/internal/provider"
)

// chatChunk is a chat.completion.chunk as OpenAI writes it, with delta
// and finish_reason (JSON or null) for choice 0.
func chatChunk(delta, finish string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up","system_fingerprint":null,` +
		`"choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}],"usage":null}`
}

func usageChunk(prompt, completion, cached, reasoning int64) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up","choices":[],`+
		`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d},`+
		`"completion_tokens_details":{"reasoning_tokens":%d}}}`, prompt, completion, prompt+completion, cached, reasoning)
}

func toolPiece(index int, id, name, args string) string {
	head := fmt.Sprintf(`{"index":%d`, index)
	if id != "" {
		head += fmt.Sprintf(`,"id":%q,"type":"function"`, id)
	}
	fn := fmt.Sprintf(`"arguments":%s`, mustJSON(args))
	if name != "" {
		fn = fmt.Sprintf(`"name":%q,`, name) + fn
	}
	return chatChunk(`{"tool_calls":[`+head+`,"function":{`+fn+`}}]}`, "null")
}

func mustJSON(s string) string { b, _ := json.Marshal(s); return string(b) }

const roleChunk = `{"role":"assistant","content":"","refusal":null}`

// translateStream runs chunks through a translator, then usage (when
// given) and end, and returns every event's bytes.
func translateStream(t *testing.T, chunks []string, final *provider.Usage) []byte {
	t.Helper()
	tr := newToEvents("claude-public", 42)
	var out []byte
	for _, c := range chunks {
		ev, err := tr.chunk([]byte(c))
		if err != nil {
			t.Fatalf("chunk %s: %v", c, err)
		}
		out = append(out, ev...)
	}
	if final != nil {
		tr.usage(*final)
	}
	out = append(out, tr.end()...)
	if again := tr.end(); len(again) != 0 {
		t.Errorf("end sent more after the end: %s", again)
	}
	return out
}

// sdkAccumulate checks the SSE framing and feeds each event to
// anthropic-sdk-go's Message.Accumulate; it returns the Message and the
// event names in order.
func sdkAccumulate(t *testing.T, stream []byte) (sdk.Message, []string) {
	t.Helper()
	var m sdk.Message
	var names []string
	if !bytes.HasSuffix(stream, []byte("\n\n")) {
		t.Fatalf("stream does not end an event: %q", stream)
	}
	for _, ev := range bytes.Split(bytes.TrimSuffix(stream, []byte("\n\n")), []byte("\n\n")) {
		name, data, ok := bytes.Cut(ev, []byte("\ndata: "))
		if !ok || !bytes.HasPrefix(name, []byte("event: ")) || bytes.IndexByte(data, '\n') >= 0 {
			t.Fatalf("malformed event %q", ev)
		}
		var e sdk.MessageStreamEventUnion
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		if n := string(name[len("event: "):]); n != e.Type {
			t.Fatalf("event %q carries type %q", n, e.Type)
		}
		names = append(names, e.Type)
		if err := m.Accumulate(e); err != nil {
			t.Fatalf("accumulate %s: %v", data, err)
		}
	}
	return m, names
}

type wantBlock struct{ typ, text, id, name, input string }

func TestToEvents(t *testing.T) {
	cases := []struct {
		name   string
		chunks []string
		final  *provider.Usage
		stop   sdk.StopReason
		blocks []wantBlock
		usage  [4]int64 // input, cache read, output, thinking
	}{
		{"text", []string{chatChunk(roleChunk, "null"), chatChunk(`{"content":"Hel"}`, "null"),
			chatChunk(`{"content":"lo \"wörld\" <b>\n"}`, "null"), chatChunk(`{}`, `"stop"`), usageChunk(100, 7, 60, 0)},
			nil, sdk.StopReasonEndTurn, []wantBlock{{typ: "text", text: "Hello \"wörld\" <b>\n"}}, [4]int64{40, 60, 7, 0}},
		{"thinking", []string{chatChunk(`{"role":"assistant","reasoning_content":"Let me"}`, "null"),
			chatChunk(`{"reasoning_content":" think."}`, "null"), chatChunk(`{"content":"42"}`, "null"),
			chatChunk(`{}`, `"stop"`), usageChunk(10, 30, 0, 20)},
			nil, sdk.StopReasonEndTurn, []wantBlock{{typ: "thinking", text: "Let me think."}, {typ: "text", text: "42"}}, [4]int64{10, 0, 30, 20}},
		{"one tool call", []string{chatChunk(roleChunk, "null"), chatChunk(`{"content":"Checking."}`, "null"),
			toolPiece(0, "call_abc", "get_weather", ""), toolPiece(0, "", "", `{"city":`), toolPiece(0, "", "", `"Paris"}`),
			chatChunk(`{}`, `"tool_calls"`), usageChunk(50, 20, 0, 0)},
			nil, sdk.StopReasonToolUse, []wantBlock{{typ: "text", text: "Checking."},
				{typ: "tool_use", id: "call_abc", name: "get_weather", input: `{"city":"Paris"}`}}, [4]int64{50, 0, 20, 0}},
		{"parallel tool calls", []string{chatChunk(roleChunk, "null"),
			toolPiece(0, "call_1", "read", `{"path":"a"}`), toolPiece(1, "call_2", "read", ""), toolPiece(1, "", "", `{"path":"b"}`),
			toolPiece(2, "call_3", "noargs", ""),
			chatChunk(`{}`, `"tool_calls"`), usageChunk(5, 9, 0, 0)},
			nil, sdk.StopReasonToolUse, []wantBlock{{typ: "tool_use", id: "call_1", name: "read", input: `{"path":"a"}`},
				{typ: "tool_use", id: "call_2", name: "read", input: `{"path":"b"}`}, {typ: "tool_use", id: "call_3", name: "noargs", input: `{}`}},
			[4]int64{5, 0, 9, 0}},
		{"length stop, usage from the stream", []string{chatChunk(roleChunk, "null"), chatChunk(`{"content":"cut"}`, "null"),
			chatChunk(`{}`, `"length"`)},
			&provider.Usage{PromptTokens: 12, CompletionTokens: 3, CachedTokens: 2}, sdk.StopReasonMaxTokens,
			[]wantBlock{{typ: "text", text: "cut"}}, [4]int64{10, 2, 3, 0}},
		{"content filter, finish and usage in one chunk", []string{
			`{"choices":[{"index":0,"delta":{"content":"no"},"finish_reason":"content_filter"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`},
			nil, sdk.StopReasonRefusal, []wantBlock{{typ: "text", text: "no"}}, [4]int64{3, 0, 1, 0}},
		{"no usage reported", []string{chatChunk(`{"content":"x"}`, "null"), chatChunk(`{}`, `"stop"`)}, &provider.Usage{},
			sdk.StopReasonEndTurn, []wantBlock{{typ: "text", text: "x"}}, [4]int64{42, 0, 0, 0}},
		{"no finish reason", []string{chatChunk(`{"content":"x"}`, "null")}, nil, sdk.StopReasonEndTurn,
			[]wantBlock{{typ: "text", text: "x"}}, [4]int64{42, 0, 0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stream := translateStream(t, tc.chunks, tc.final)
			m, names := sdkAccumulate(t, stream)
			if names[0] != "message_start" || names[len(names)-1] != "message_stop" || names[len(names)-2] != "message_delta" {
				t.Errorf("event order %v", names)
			}
			if strings.Count(strings.Join(names, " "), "message_delta") != 1 {
				t.Errorf("message_delta not sent once: %v", names)
			}
			if m.Model != "claude-public" || !strings.HasPrefix(m.ID, "msg_") || m.Role != "assistant" || m.StopReason != tc.stop {
				t.Errorf("message %s %s %s stop %q", m.ID, m.Model, m.Role, m.StopReason)
			}
			if len(m.Content) != len(tc.blocks) {
				t.Fatalf("%d blocks, want %d: %s", len(m.Content), len(tc.blocks), stream)
			}
			for i, w := range tc.blocks {
				c := m.Content[i]
				got := wantBlock{typ: c.Type, id: c.ID, name: c.Name}
				switch c.Type {
				case "text":
					got.text = c.Text
				case "thinking":
					got.text = c.Thinking
				case "tool_use":
					got.input = string(c.Input)
				}
				if got != w {
					t.Errorf("block %d: %+v, want %+v", i, got, w)
				}
			}
			u := m.Usage
			if got := [4]int64{u.InputTokens, u.CacheReadInputTokens, u.OutputTokens, u.OutputTokensDetails.ThinkingTokens}; got != tc.usage {
				t.Errorf("usage %v, want %v", got, tc.usage)
			}
			if starts, stops := strings.Count(string(stream), "event: content_block_start"), strings.Count(string(stream), "event: content_block_stop"); starts != stops {
				t.Errorf("%d blocks started, %d stopped", starts, stops)
			}
		})
	}
}

// TestToEventsWaitsForUsage: message_delta waits for the usage chunk that
// follows the finish reason, and is not sent twice.
func TestToEventsWaitsForUsage(t *testing.T) {
	tr := newToEvents("m", 7)
	first, _ := tr.chunk([]byte(chatChunk(`{"content":"a"}`, "null")))
	if !bytes.HasPrefix(first, []byte("event: message_start\n")) || !bytes.Contains(first, []byte(`"input_tokens":7`)) {
		t.Fatalf("first events: %s", first)
	}
	fin, _ := tr.chunk([]byte(chatChunk(`{}`, `"stop"`)))
	if string(fin) != "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" {
		t.Fatalf("finish chunk made %q", fin)
	}
	u, _ := tr.chunk([]byte(usageChunk(7, 1, 0, 0)))
	if !bytes.HasPrefix(u, []byte("event: message_delta\n")) || !bytes.HasSuffix(u, []byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")) {
		t.Fatalf("usage chunk made %q", u)
	}
	if more, _ := tr.chunk([]byte(chatChunk(`{"content":"late"}`, "null"))); len(more) != 0 {
		t.Errorf("a chunk after the end made %q", more)
	}
	if end := tr.end(); len(end) != 0 {
		t.Errorf("end after the end made %q", end)
	}
}

func TestToEventsBadChunk(t *testing.T) {
	tr := newToEvents("m", 0)
	if _, err := tr.chunk([]byte(`[1,2]`)); err == nil {
		t.Error("a chunk that is not an object was accepted")
	}
}

// benchChunks is one typical streamed answer: a role chunk, 40 text
// pieces, the finish and the usage chunk.
func benchChunks() [][]byte {
	chunks := [][]byte{[]byte(chatChunk(roleChunk, "null"))}
	for i := range 40 {
		chunks = append(chunks, []byte(chatChunk(fmt.Sprintf(`{"content":"piece %d of the answer, "}`, i), "null")))
	}
	return append(chunks, []byte(chatChunk(`{}`, `"stop"`)), []byte(usageChunk(1000, 300, 200, 0)))
}

// TestToEventsAllocs: a text chunk in the middle of a stream allocates
// nothing.
func TestToEventsAllocs(t *testing.T) {
	tr := newToEvents("m", 0)
	chunks := benchChunks()
	_, _ = tr.chunk(chunks[0])
	_, _ = tr.chunk(chunks[1])
	if n := testing.AllocsPerRun(100, func() { _, _ = tr.chunk(chunks[2]) }); n != 0 {
		t.Errorf("a text chunk allocates %v times", n)
	}
}

func BenchmarkToEvents(b *testing.B) {
	chunks := benchChunks()
	var n int
	for _, c := range chunks {
		n += len(c)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		tr := newToEvents("claude-public", 1000)
		for _, c := range chunks {
			if _, err := tr.chunk(c); err != nil {
				b.Fatal(err)
			}
		}
		_ = tr.end()
	}
}
