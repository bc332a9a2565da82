package anthropic

import (
	"context"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// A stream that ended at message_stop gives its connection back to the
// pool though the body's end comes later (see provider.SSEBody.Finish);
// one abandoned after its first chunk is closed, so the next request dials.
func TestFinishedStreamKeepsConnection(t *testing.T) {
	cases := []struct {
		name         string
		includeUsage bool
		whole        bool
		conns        int
	}{
		{"stream", false, true, 1},
		{"stream with usage", true, true, 1},
		{"stream abandoned", false, false, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := providertest.NewLateEnd(t, providertest.NewAnthropic(t), 20*time.Millisecond)
			c, err := New(Options{Name: "a", BaseURL: up.URL + "/", APIKey: "secret", Tokenizer: claudeTokenizer,
				Timeout: 5 * time.Second, IdleTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			n := up.TwoStreams(t, tc.whole, func() (providertest.Stream, error) {
				return c.ChatStream(context.Background(), &provider.ChatRequest{PublicModel: "p", UpstreamModel: "claude-sonnet-4-5",
					Stream: true, IncludeUsage: tc.includeUsage, Body: []byte(`{"model":"p","messages":[{"role":"user","content":"hi"}]}`)})
			})
			if n != tc.conns {
				t.Errorf("%d connections for two requests, want %d", n, tc.conns)
			}
		})
	}
}
