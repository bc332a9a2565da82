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
			up := providertest.NewLateEnd(t, providertest.NewGemini(t), 20*time.Millisecond)
			c := testClient(t, up.URL)
			for i := 0; i < 2; i++ {
				s, err := c.ChatStream(context.Background(), &provider.ChatRequest{PublicModel: "pub", UpstreamModel: "gemini-2.5-flash",
					Stream: true, IncludeUsage: tc.includeUsage, Body: []byte(hello)})
				if err != nil {
					t.Fatal(err)
				}
				for s.Next() && tc.whole {
				}
				if err := s.Err(); err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
				_ = s.Close()
			}
			if got := up.Conns(); got != tc.conns {
				t.Errorf("%d connections for two requests, want %d", got, tc.conns)
			}
		})
	}
}
