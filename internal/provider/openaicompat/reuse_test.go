package openaicompat

import (
	"context"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// A stream that ended cleanly gives its connection back to the pool even
// when the body's end arrives after the last event (over a network it
// mostly does): the next request must not dial again. A stream the
// consumer abandons (a client that left) is closed, and the next request
// dials; that case shows the count can tell the two apart.
func TestFinishedStreamKeepsConnection(t *testing.T) {
	chat := func(includeUsage bool) func(c *Client, whole bool) error {
		return func(c *Client, whole bool) error {
			body := `{"model":"mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`
			s, err := c.ChatStream(context.Background(), &provider.ChatRequest{PublicModel: "mini",
				UpstreamModel: "gpt-4o-mini-2024-07-18", Body: []byte(body), Stream: true, IncludeUsage: includeUsage})
			if err != nil {
				return err
			}
			defer s.Close()
			for s.Next() && whole {
			}
			return s.Err()
		}
	}
	respond := func(c *Client, whole bool) error {
		s, err := c.RespondStream(context.Background(), &provider.ResponsesRequest{PublicModel: "mini",
			UpstreamModel: "gpt-4o-mini-2024-07-18", Body: []byte(`{"model":"mini","input":"hi","stream":true}`), Stream: true})
		if err != nil {
			return err
		}
		defer s.Close()
		for s.Next() && whole {
		}
		return s.Err()
	}
	cases := []struct {
		name  string
		run   func(c *Client, whole bool) error
		whole bool // read to the end, or stop after the first event
		conns int  // connections for two requests
	}{
		{"chat stream", chat(false), true, 1},
		{"chat stream with usage", chat(true), true, 1},
		{"responses stream", respond, true, 1},
		{"chat stream abandoned", chat(false), false, 2},
		{"responses stream abandoned", respond, false, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := providertest.NewLateEnd(t, providertest.NewOpenAI(t), 20*time.Millisecond)
			c, err := New(Options{Name: "fake", BaseURL: up.URL + "/v1/", APIKey: "sk-up",
				Timeout: 5 * time.Second, IdleTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				if err := tc.run(c, tc.whole); err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
			}
			if got := up.Conns(); got != tc.conns {
				t.Errorf("%d connections for two requests, want %d", got, tc.conns)
			}
		})
	}
}
