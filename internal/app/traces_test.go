package app_test

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/internal/config"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an in-process OTLP/HTTP collector keeping every span.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var msg collectorpb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&collectorpb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// TestTraces: with telemetry.otlp_endpoint set, a chat request through the
// official client leaves a SERVER span under the client's traceparent and
// a CLIENT span for its upstream try, with the GenAI attributes; the spans
// are flushed when the gateway stops.
func TestTraces(t *testing.T) {
	rcv := &otlpReceiver{}
	collector := httptest.NewServer(rcv)
	defer collector.Close()
	g := startGateway(t, func(c *config.Config) {
		c.Telemetry = &config.Telemetry{OTLPEndpoint: collector.URL}
	})
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	c := g.client(g.keys["default"], option.WithHeader("traceparent", "00-"+traceID+"-"+parentID+"-01"))
	_, err := c.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{Model: "gpt-4o-mini",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	var server, client *tracepb.Span
	for _, s := range rcv.spans {
		switch s.Kind {
		case tracepb.Span_SPAN_KIND_SERVER:
			server = s
		case tracepb.Span_SPAN_KIND_CLIENT:
			client = s
		}
	}
	if server == nil || client == nil {
		t.Fatalf("spans %v: want a server and a client span", rcv.spans)
	}
	if server.Name != "chat gpt-4o-mini" || hex.EncodeToString(server.TraceId) != traceID ||
		hex.EncodeToString(server.ParentSpanId) != parentID {
		t.Errorf("server span %q trace %x parent %x", server.Name, server.TraceId, server.ParentSpanId)
	}
	if string(client.ParentSpanId) != string(server.SpanId) {
		t.Errorf("the attempt span is not the request span's child")
	}
	attrs := map[string]string{}
	for _, kv := range server.Attributes {
		attrs[kv.Key] = kv.Value.GetStringValue()
	}
	for k, want := range map[string]string{"gen_ai.request.model": "gpt-4o-mini", "gen_ai.provider.name": "fake-openai",
		"gen_ai.operation.name": "chat"} {
		if attrs[k] != want {
			t.Errorf("%s = %q, want %q", k, attrs[k], want)
		}
	}
	var tokens bool
	for _, kv := range server.Attributes {
		if kv.Key == "gen_ai.usage.input_tokens" && kv.Value.GetIntValue() > 0 {
			tokens = true
		}
	}
	if !tokens {
		t.Error("no gen_ai.usage.input_tokens on the request span")
	}
}
