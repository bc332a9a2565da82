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
	chat := func(c *Client, includeUsage bool) func() (providertest.Stream, error) {
		return func() (providertest.Stream, error) {
			return c.ChatStream(context.Background(), &provider.ChatRequest{PublicModel: "mini", UpstreamModel: "gpt-4o-mini-2024-07-18",
				Body: []byte(`{"model":"mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`), Stream: true, IncludeUsage: includeUsage})
		}
	}
	respond := func(c *Client, _ bool) func() (providertest.Stream, error) {
		return func() (providertest.Stream, error) {
			return c.RespondStream(context.Background(), &provider.ResponsesRequest{PublicModel: "mini",
				UpstreamModel: "gpt-4o-mini-2024-07-18", Body: []byte(`{"model":"mini","input":"hi","stream":true}`), Stream: true})
		}
	}
	cases := []struct {
		name         string
		open         func(c *Client, includeUsage bool) func() (providertest.Stream, error)
		includeUsage bool
		whole        bool // read to the end, or stop after the first event
		conns        int  // connections for two requests
	}{
		{"chat stream", chat, false, true, 1},
		{"chat stream with usage", chat, true, true, 1},
		{"responses stream", respond, false, true, 1},
		{"chat stream abandoned", chat, false, false, 2},
		{"responses stream abandoned", respond, false, false, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := providertest.NewLateEnd(t, providertest.NewOpenAI(t), 20*time.Millisecond)
			c, err := New(Options{Name: "fake", BaseURL: up.URL + "/v1/", APIKey: "sk-up",
				Timeout: 5 * time.Second, IdleTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if n := up.TwoStreams(t, tc.whole, tc.open(c, tc.includeUsage)); n != tc.conns {
				t.Errorf("%d connections for two requests, want %d", n, tc.conns)
			}
		})
	}
}
