package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/provider"
)

// benchChatStream translates one SSE body into chat chunks per iteration,
// from memory: the translation's own cost per stream (events/op reports
// how many upstream events that is, to read allocs/op per event).
func benchChatStream(b *testing.B, sse []byte) {
	c := testClient(b)
	req := &provider.ChatRequest{PublicModel: "claude-public", UpstreamModel: "claude-sonnet-4-5", IncludeUsage: true}
	events := bytes.Count(sse, []byte("\n\n"))
	b.SetBytes(int64(len(sse)))
	b.ReportAllocs()
	for b.Loop() {
		s := c.newStream(c.start(context.Background()), io.NopCloser(bytes.NewReader(sse)), req, "")
		n := 0
		for s.Next() {
			n += len(s.Chunk())
		}
		if s.Err() != nil || n == 0 {
			b.Fatal(s.Err(), n)
		}
		_ = s.Close()
	}
	b.ReportMetric(float64(events), "events/op")
}

// BenchmarkChatStreamText is a text answer of 40 deltas.
func BenchmarkChatStreamText(b *testing.B) { benchChatStream(b, benchMessagesSSE()) }

// BenchmarkChatStreamTools is the tool_args fixture: text, then a tool
// call streamed as input_json_delta pieces.
func BenchmarkChatStreamTools(b *testing.B) {
	sse, err := os.ReadFile("testdata/streams/tool_args.sse")
	if err != nil {
		b.Fatal(err)
	}
	benchChatStream(b, sse)
}

// BenchmarkChatStreamThinking is the thinking fixture: thinking deltas,
// a signature, then text.
func BenchmarkChatStreamThinking(b *testing.B) {
	sse, err := os.ReadFile("testdata/streams/thinking.sse")
	if err != nil {
		b.Fatal(err)
	}
	benchChatStream(b, sse)
}

// benchSearchSSE is a web search answer: the server tool call, its result
// block (a few KB of encrypted content), then cited text.
func benchSearchSSE() []byte {
	var b bytes.Buffer
	ev := func(data string) {
		var head struct{ Type string }
		_ = json.Unmarshal([]byte(data), &head)
		b.WriteString("event: " + head.Type + "\ndata: " + data + "\n\n")
	}
	ev(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":100,"output_tokens":1}}}`)
	ev(`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`)
	ev(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"go release\"}"}}`)
	ev(`{"type":"content_block_stop","index":0}`)
	ev(`{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[` +
		`{"type":"web_search_result","url":"https://go.dev/doc/devel/release","title":"Release History","encrypted_content":"` +
		strings.Repeat("EqgfCioIARgB", 400) + `","page_age":"April 1, 2026"}]}}`)
	ev(`{"type":"content_block_stop","index":1}`)
	ev(`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`)
	for range 10 {
		ev(`{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://go.dev/doc/devel/release","title":"Release History","encrypted_index":"Eo8BCi","cited_text":"go1.26"}}}`)
		ev(`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Go 1.26 is out. "}}`)
	}
	ev(`{"type":"content_block_stop","index":2}`)
	ev(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":50,"server_tool_use":{"web_search_requests":1}}}`)
	ev(`{"type":"message_stop"}`)
	return b.Bytes()
}

// BenchmarkChatStreamSearch is a web search answer with citations.
func BenchmarkChatStreamSearch(b *testing.B) { benchChatStream(b, benchSearchSSE()) }
