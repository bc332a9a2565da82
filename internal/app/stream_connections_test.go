package app_test

import (
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// Streams relayed to the SDK leave the upstream connection reusable: the
// upstream here ends each body 20 ms after its [DONE], and consecutive
// streamed requests still share one connection (a new one per request is
// a TCP, and against an https vendor a TLS, handshake each).
func TestStreamsReuseUpstreamConnection(t *testing.T) {
	late := providertest.NewLateEnd(t, providertest.NewOpenAI(t), 20*time.Millisecond)
	g := startGateway(t, func(cfg *config.Config) { cfg.Providers[0].BaseURL = late.URL + "/v1" })
	c := g.client(g.keys["default"])
	for i := 0; i < 3; i++ {
		p := oai.ChatCompletionNewParams{Model: "gpt-4o-mini",
			Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}}
		if i == 1 {
			p.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
		}
		if got := complete(t, c, p, true); got.Choices[0].Message.Content == "" {
			t.Fatalf("stream %d: no content", i+1)
		}
	}
	if n := late.Conns(); n != 1 {
		t.Errorf("upstream saw %d connections for three streams, want 1", n)
	}
}
