package app_test

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/app"
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

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// openai-go closes a stream's body at [DONE] without reading further; the
// gateway's answer must end with that event, or the SDK's connection is
// dropped and its next request dials the gateway again (it did for about
// one stream in three here).
func TestStreamsReuseClientConnection(t *testing.T) {
	up := providertest.NewOpenAI(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	g := serveAppOn(t, testConfig(t, up.URL), app.Options{Logger: testLogger(t), Version: "test"}, cl)
	c := g.client(g.createKey("default", false))
	for i := 0; i < 20; i++ {
		p := oai.ChatCompletionNewParams{Model: "gpt-4o-mini",
			Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}}
		if i%2 == 1 {
			p.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
		}
		if got := complete(t, c, p, true); got.Choices[0].Message.Content == "" {
			t.Fatalf("stream %d: no content", i+1)
		}
	}
	if n := cl.n.Load(); n != 1 {
		t.Errorf("the gateway accepted %d connections for twenty streams, want 1", n)
	}
}
