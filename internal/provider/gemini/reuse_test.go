package gemini

import (
	"context"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// Gemini ends a stream with the body's end, so a finished stream's
// connection is reused however late that end comes; one abandoned after
// its first chunk is closed, so the next request dials.
func TestFinishedStreamKeepsConnection(t *testing.T) {
	for _, tc := range []struct {
		name         string
		includeUsage bool
		whole        bool
		conns        int
	}{
		{"stream", false, true, 1},
		{"stream with usage", true, true, 1},
		{"stream abandoned", false, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := providertest.NewLateEnd(t, providertest.NewGemini(t), 20*time.Millisecond)
			c := testClient(t, up.URL)
			n := up.TwoStreams(t, tc.whole, func() (providertest.Stream, error) {
				return c.ChatStream(context.Background(), &provider.ChatRequest{PublicModel: "pub", UpstreamModel: "gemini-2.5-flash",
					Stream: true, IncludeUsage: tc.includeUsage, Body: []byte(hello)})
			})
			if n != tc.conns {
				t.Errorf("%d connections for two requests, want %d", n, tc.conns)
			}
		})
	}
}
