package anthropic

import (
	"bytes"
	"context"
	"io"
	"os"
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
