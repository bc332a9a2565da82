package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an in-process OTLP/HTTP collector: it decodes every
// ExportTraceServiceRequest POSTed to path and keeps the spans.
type receiver struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	spans    []*tracepb.Span
	resource map[string]string
	paths    []string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a POST of application/x-protobuf", http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg collectorpb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &msg); err != nil {
		r.t.Errorf("receiver: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.paths = append(r.paths, req.URL.Path)
	for _, rs := range msg.ResourceSpans {
		r.resource = attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&collectorpb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = anyString(kv.Value)
	}
	return m
}

// anyString writes an attribute value the way the test tables spell it.
func anyString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return "int:" + itoa(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "bool:true"
		}
		return "bool:false"
	}
	return v.String()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func newTestTracer(t *testing.T, endpoint string) *Tracer {
	t.Helper()
	tr, err := NewTracer(context.Background(), TraceOptions{Endpoint: endpoint,
		ServiceName: "modelgate-test", ServiceVersion: "v1.2.3", Timeout: 2 * time.Second,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

const (
	clientTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan   = "00f067aa0ba902b7"
	clientParent = "00-" + clientTrace + "-" + clientSpan + "-01"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

type wantSpan struct {
	name   string
	kind   tracepb.Span_SpanKind
	start  time.Time
	end    time.Time
	attrs  map[string]string // must be there with these values
	absent []string          // must not be there
	err    string            // the Error status's message; "" for an unset status
}

// Record + Shutdown: the request span (SERVER) and one CLIENT child per
// attempt reach the collector with the given times, the GenAI attributes
// and an Error status only for 5xx (request) or a failed try (attempt);
// a client's traceparent puts them in its trace.
func TestTracerSpans(t *testing.T) {
	cases := []struct {
		name       string
		span       Span
		parentSpan string // the request span's parent ("" : a root)
		traceID    string // "" : any new one
		req        wantSpan
		attempts   []wantSpan
	}{{
		name: "chat with failover under the client's trace",
		span: Span{TraceParent: clientParent, Endpoint: "chat.completions", Model: "gpt-4o-mini",
			Provider: "openai-b", Upstream: "gpt-4o-mini-2024-07-18", Stream: true,
			Start: t0, End: t0.Add(900 * time.Millisecond), Status: 200, InputTokens: 12, OutputTokens: 30,
			Attempts: []AttemptSpan{
				{Provider: "openai-a", Upstream: "gpt-4o-mini", Start: t0.Add(5 * time.Millisecond), Duration: 100 * time.Millisecond, Status: 503, Error: "upstream_error"},
				{Provider: "openai-b", Start: t0.Add(200 * time.Millisecond), Duration: 690 * time.Millisecond, Status: 200},
			}},
		parentSpan: clientSpan, traceID: clientTrace,
		req: wantSpan{name: "chat gpt-4o-mini", kind: tracepb.Span_SPAN_KIND_SERVER, start: t0, end: t0.Add(900 * time.Millisecond),
			attrs: map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
				"gen_ai.response.model": "gpt-4o-mini-2024-07-18", "gen_ai.provider.name": "openai-b",
				"gen_ai.usage.input_tokens": "int:12", "gen_ai.usage.output_tokens": "int:30",
				"http.response.status_code": "int:200", "modelgate.endpoint": "chat.completions", "modelgate.stream": "bool:true"},
			absent: []string{"error.type"}},
		attempts: []wantSpan{
			{name: "chat gpt-4o-mini", kind: tracepb.Span_SPAN_KIND_CLIENT, start: t0.Add(5 * time.Millisecond), end: t0.Add(105 * time.Millisecond),
				attrs: map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai-a", "gen_ai.request.model": "gpt-4o-mini",
					"http.response.status_code": "int:503", "error.type": "upstream_error", "modelgate.attempt": "int:1"},
				err: "upstream_error"},
			{name: "chat gpt-4o-mini-2024-07-18", kind: tracepb.Span_SPAN_KIND_CLIENT, start: t0.Add(200 * time.Millisecond), end: t0.Add(890 * time.Millisecond),
				attrs: map[string]string{"gen_ai.provider.name": "openai-b", "gen_ai.request.model": "gpt-4o-mini-2024-07-18",
					"http.response.status_code": "int:200", "modelgate.attempt": "int:2"},
				absent: []string{"error.type"}},
		},
	}, {
		name: "embeddings, a new trace",
		span: Span{Endpoint: "embeddings", Model: "text-embedding-3-small", Provider: "openai-a", Upstream: "text-embedding-3-small",
			Start: t0, End: t0.Add(40 * time.Millisecond), Status: 200, InputTokens: 8,
			Attempts: []AttemptSpan{{Provider: "openai-a", Start: t0.Add(time.Millisecond), Duration: 38 * time.Millisecond, Status: 200}}},
		req: wantSpan{name: "embeddings text-embedding-3-small", kind: tracepb.Span_SPAN_KIND_SERVER, start: t0, end: t0.Add(40 * time.Millisecond),
			attrs: map[string]string{"gen_ai.operation.name": "embeddings", "gen_ai.usage.input_tokens": "int:8",
				"gen_ai.usage.output_tokens": "int:0", "modelgate.stream": "bool:false"}},
		attempts: []wantSpan{{name: "embeddings text-embedding-3-small", kind: tracepb.Span_SPAN_KIND_CLIENT,
			start: t0.Add(time.Millisecond), end: t0.Add(39 * time.Millisecond), attrs: map[string]string{"modelgate.attempt": "int:1"}}},
	}, {
		name: "no answer from the upstream: 502, errors on both",
		span: Span{Endpoint: "completions", Model: "gpt-3.5-turbo-instruct", Provider: "openai-a", Upstream: "gpt-3.5-turbo-instruct",
			Start: t0, End: t0.Add(30 * time.Second), Status: 502, ErrCode: "upstream_timeout",
			Attempts: []AttemptSpan{{Provider: "openai-a", Start: t0, Duration: 30 * time.Second}}},
		req: wantSpan{name: "text_completion gpt-3.5-turbo-instruct", kind: tracepb.Span_SPAN_KIND_SERVER, start: t0, end: t0.Add(30 * time.Second),
			attrs:  map[string]string{"gen_ai.operation.name": "text_completion", "http.response.status_code": "int:502", "error.type": "upstream_timeout"},
			absent: []string{"gen_ai.usage.input_tokens"}, err: "upstream_timeout"},
		attempts: []wantSpan{{name: "text_completion gpt-3.5-turbo-instruct", kind: tracepb.Span_SPAN_KIND_CLIENT, start: t0, end: t0.Add(30 * time.Second),
			attrs: map[string]string{"error.type": "_OTHER"}, absent: []string{"http.response.status_code"}, err: "_OTHER"}},
	}, {
		name: "refused by the gateway: a 4xx is no server error",
		span: Span{Endpoint: "chat.completions", Model: "gpt-4o", Start: t0, End: t0.Add(time.Millisecond),
			Status: 429, ErrCode: "rate_limit_exceeded", TraceParent: "00-" + clientTrace + "-" + clientSpan + "-01"},
		parentSpan: clientSpan, traceID: clientTrace,
		req: wantSpan{name: "chat gpt-4o", kind: tracepb.Span_SPAN_KIND_SERVER, start: t0, end: t0.Add(time.Millisecond),
			attrs:  map[string]string{"error.type": "rate_limit_exceeded", "http.response.status_code": "int:429"},
			absent: []string{"gen_ai.provider.name", "gen_ai.response.model"}},
	}, {
		name: "a vendor 500 without a code: error.type is the status",
		span: Span{Endpoint: "images.generations", Model: "dall-e-3", Provider: "openai-a", Start: t0, End: t0.Add(time.Second), Status: 500,
			Attempts: []AttemptSpan{{Provider: "openai-a", Upstream: "dall-e-3", Start: t0, Duration: time.Second, Status: 500}}},
		req: wantSpan{name: "generate_content dall-e-3", kind: tracepb.Span_SPAN_KIND_SERVER, start: t0, end: t0.Add(time.Second),
			attrs: map[string]string{"gen_ai.operation.name": "generate_content", "error.type": "500"}, err: "500"},
		attempts: []wantSpan{{name: "generate_content dall-e-3", kind: tracepb.Span_SPAN_KIND_CLIENT, start: t0, end: t0.Add(time.Second),
			attrs: map[string]string{"error.type": "500", "http.response.status_code": "int:500"}, err: "500"}},
	}, {
		name: "no model call: the endpoint names the span; a bad traceparent starts a new trace",
		span: Span{Endpoint: "models.list", Start: t0, End: t0.Add(time.Millisecond), Status: 200, TraceParent: "00-zz-yy-01"},
		req: wantSpan{name: "models.list", kind: tracepb.Span_SPAN_KIND_SERVER, start: t0, end: t0.Add(time.Millisecond),
			absent: []string{"gen_ai.operation.name", "gen_ai.request.model", "error.type"}},
	}, {
		name: "the client left: 499 is no server error",
		span: Span{Endpoint: "responses", Model: "o3", Provider: "openai-a", Upstream: "o3", Start: t0, End: t0.Add(2 * time.Second), Status: 499, ErrCode: "client_closed",
			Attempts: []AttemptSpan{{Provider: "openai-a", Start: t0, Duration: 2 * time.Second, Status: 200}}},
		req: wantSpan{name: "chat o3", kind: tracepb.Span_SPAN_KIND_SERVER, start: t0, end: t0.Add(2 * time.Second),
			attrs: map[string]string{"error.type": "client_closed"}},
		attempts: []wantSpan{{name: "chat o3", kind: tracepb.Span_SPAN_KIND_CLIENT, start: t0, end: t0.Add(2 * time.Second)}},
	}, {
		name: "tries with durations only are laid end to end from the request's start",
		span: Span{Endpoint: "chat.completions", Model: "m", Provider: "b", Upstream: "m", Start: t0, End: t0.Add(3 * time.Second), Status: 200,
			Attempts: []AttemptSpan{
				{Provider: "a", Duration: time.Second, Error: "timeout"},
				{Provider: "b", Duration: 2 * time.Second, Status: 200},
			}},
		req: wantSpan{name: "chat m", kind: tracepb.Span_SPAN_KIND_SERVER, start: t0, end: t0.Add(3 * time.Second)},
		attempts: []wantSpan{
			{name: "chat m", kind: tracepb.Span_SPAN_KIND_CLIENT, start: t0, end: t0.Add(time.Second),
				attrs: map[string]string{"error.type": "timeout", "gen_ai.provider.name": "a"}, err: "timeout"},
			{name: "chat m", kind: tracepb.Span_SPAN_KIND_CLIENT, start: t0.Add(time.Second), end: t0.Add(3 * time.Second),
				attrs: map[string]string{"gen_ai.provider.name": "b"}},
		},
	}}

	rcv := newReceiver(t)
	tr := newTestTracer(t, rcv.srv.URL)
	for i := range cases {
		cases[i].span.RequestID = "req-" + itoa(int64(i))
		tr.Record(&cases[i].span)
	}
	// Not sampled by the client: no span at all.
	tr.Record(&Span{RequestID: "unsampled", TraceParent: "00-" + clientTrace + "-" + clientSpan + "-00",
		Endpoint: "chat.completions", Model: "gpt-4o", Start: t0, End: t0.Add(time.Second), Status: 200})
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	tr.Record(&cases[0].span) // after Shutdown: dropped, no panic

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.resource["service.name"] != "modelgate-test" || rcv.resource["service.version"] != "v1.2.3" {
		t.Errorf("resource = %v", rcv.resource)
	}
	for _, p := range rcv.paths {
		if p != "/v1/traces" {
			t.Errorf("POST to %q, want /v1/traces", p)
		}
	}
	byID := map[string]*tracepb.Span{}
	children := map[string][]*tracepb.Span{} // by parent span id
	for _, s := range rcv.spans {
		byID[hex.EncodeToString(s.SpanId)] = s
		children[hex.EncodeToString(s.ParentSpanId)] = append(children[hex.EncodeToString(s.ParentSpanId)], s)
	}
	wantTotal := 0
	for _, tc := range cases {
		wantTotal += 1 + len(tc.attempts)
	}
	if len(rcv.spans) != wantTotal {
		t.Errorf("%d spans exported, want %d (the unsampled request has none)", len(rcv.spans), wantTotal)
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var req *tracepb.Span
			for _, s := range rcv.spans {
				if attrMap(s.Attributes)["modelgate.request_id"] == "req-"+itoa(int64(i)) {
					req = s
				}
			}
			if req == nil {
				t.Fatal("no request span")
			}
			checkSpan(t, req, tc.req)
			if got := hex.EncodeToString(req.ParentSpanId); got != tc.parentSpan {
				t.Errorf("request span's parent = %q, want %q", got, tc.parentSpan)
			}
			if tc.traceID != "" && hex.EncodeToString(req.TraceId) != tc.traceID {
				t.Errorf("trace id = %x, want the client's %s", req.TraceId, tc.traceID)
			}
			if tc.traceID == "" && hex.EncodeToString(req.TraceId) == clientTrace {
				t.Error("a request without a (valid) traceparent joined the client's trace")
			}
			kids := children[hex.EncodeToString(req.SpanId)]
			if len(kids) != len(tc.attempts) {
				t.Fatalf("%d attempt spans, want %d", len(kids), len(tc.attempts))
			}
			for j, want := range tc.attempts {
				var a *tracepb.Span
				for _, k := range kids {
					if attrMap(k.Attributes)["modelgate.attempt"] == "int:"+itoa(int64(j+1)) {
						a = k
					}
				}
				if a == nil {
					t.Fatalf("no span for attempt %d", j+1)
				}
				if !bytes.Equal(a.TraceId, req.TraceId) {
					t.Errorf("attempt %d in trace %x, want the request's %x", j+1, a.TraceId, req.TraceId)
				}
				checkSpan(t, a, want)
			}
		})
	}
}

func checkSpan(t *testing.T, s *tracepb.Span, w wantSpan) {
	t.Helper()
	if s.Name != w.name {
		t.Errorf("name = %q, want %q", s.Name, w.name)
	}
	if s.Kind != w.kind {
		t.Errorf("%s: kind = %v, want %v", s.Name, s.Kind, w.kind)
	}
	if got := time.Unix(0, int64(s.StartTimeUnixNano)); !got.Equal(w.start) {
		t.Errorf("%s: start = %v, want %v", s.Name, got.UTC(), w.start)
	}
	if got := time.Unix(0, int64(s.EndTimeUnixNano)); !got.Equal(w.end) {
		t.Errorf("%s: end = %v, want %v", s.Name, got.UTC(), w.end)
	}
	attrs := attrMap(s.Attributes)
	for k, v := range w.attrs {
		if attrs[k] != v {
			t.Errorf("%s: %s = %q, want %q", s.Name, k, attrs[k], v)
		}
	}
	for _, k := range w.absent {
		if v, ok := attrs[k]; ok {
			t.Errorf("%s: %s = %q, want none", s.Name, k, v)
		}
	}
	wantCode := tracepb.Status_STATUS_CODE_UNSET
	if w.err != "" {
		wantCode = tracepb.Status_STATUS_CODE_ERROR
	}
	if s.Status.GetCode() != wantCode || s.Status.GetMessage() != w.err {
		t.Errorf("%s: status = %v %q, want %v %q", s.Name, s.Status.GetCode(), s.Status.GetMessage(), wantCode, w.err)
	}
}

// The configured endpoint: a base URL gets /v1/traces, a full one is kept;
// anything but an http(s) URL is refused.
func TestTracesURL(t *testing.T) {
	cases := []struct {
		in, want, err string
	}{
		{in: "http://127.0.0.1:4318", want: "http://127.0.0.1:4318/v1/traces"},
		{in: "http://127.0.0.1:4318/", want: "http://127.0.0.1:4318/v1/traces"},
		{in: "https://otel.example.com/otlp", want: "https://otel.example.com/otlp/v1/traces"},
		{in: "https://otel.example.com/v1/traces", want: "https://otel.example.com/v1/traces"},
		{in: "http://[::1]:4318/custom/v1/traces", want: "http://[::1]:4318/custom/v1/traces"},
		{in: "", err: "not an http(s) URL"},
		{in: "127.0.0.1:4318", err: "not an http(s) URL"},
		{in: "grpc://collector:4317", err: "not an http(s) URL"},
		{in: "http:///v1/traces", err: "not an http(s) URL"},
		{in: "https://user:secret@otel.example.com", err: "user info"},
		{in: "http://otel.example.com/?a=b", err: "query"},
		{in: "http://otel example.com", err: "invalid"},
	}
	for _, c := range cases {
		got, err := TracesURL(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("TracesURL(%q) = %q, %v; want an error with %q", c.in, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("TracesURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("error shows the password: %v", err)
		}
	}
	if _, err := NewTracer(context.Background(), TraceOptions{Endpoint: "ftp://x"}); err == nil {
		t.Error("NewTracer accepted ftp://x")
	}
}

// The full URL of the traces resource is used as it is.
func TestTracerFullURL(t *testing.T) {
	rcv := newReceiver(t)
	tr := newTestTracer(t, rcv.srv.URL+"/custom/v1/traces")
	tr.Record(&Span{Endpoint: "embeddings", Model: "m", Start: t0, End: t0.Add(time.Millisecond), Status: 200})
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.paths) != 1 || rcv.paths[0] != "/custom/v1/traces" || len(rcv.spans) != 1 {
		t.Errorf("paths %q, %d spans; want one POST to /custom/v1/traces with 1 span", rcv.paths, len(rcv.spans))
	}
}

// A collector that never answers, or is not there: Record does not
// block, and Shutdown returns by its context's deadline.
func TestTracerUnreachable(t *testing.T) {
	hang := make(chan struct{})
	blackHole := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer blackHole.Close()
	defer close(hang) // before Close, which waits for the handlers
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closed.Addr().String()
	closed.Close()

	for _, tc := range []struct{ name, endpoint string }{
		{"hangs", blackHole.URL},
		{"refuses", refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracer(t, tc.endpoint)
			s := &Span{Endpoint: "chat.completions", Model: "gpt-4o-mini", Provider: "a", Start: t0, End: t0.Add(time.Second), Status: 200,
				Attempts: []AttemptSpan{{Provider: "a", Start: t0, Duration: time.Second, Status: 200}}}
			begin := time.Now()
			for range 10000 { // far past the queue (2048 spans): the rest are dropped
				tr.Record(s)
			}
			if d := time.Since(begin); d > 5*time.Second {
				t.Errorf("10000 Records took %v with the collector down", d)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			begin = time.Now()
			_ = tr.Shutdown(ctx) // an error (its deadline) or nil if the batch failed fast
			if d := time.Since(begin); d > 2*time.Second {
				t.Errorf("Shutdown took %v past a 300ms deadline", d)
			}
		})
	}
}

// A failing collector is said once on the app's logger, and its recovery.
func TestTracerExportLog(t *testing.T) {
	var mu sync.Mutex
	down := true
	rcv := newReceiver(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		d := down
		mu.Unlock()
		if d {
			http.Error(w, "down", http.StatusBadRequest) // not retried
			return
		}
		rcv.serve(w, r)
	}))
	defer srv.Close()
	var logs bytes.Buffer
	var logMu sync.Mutex
	tr, err := NewTracer(context.Background(), TraceOptions{Endpoint: srv.URL, Timeout: time.Second,
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s := &Span{Endpoint: "embeddings", Model: "m", Start: t0, End: t0.Add(time.Millisecond), Status: 200}
	for range 3 {
		tr.Record(s)
		if err := tr.provider.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	down = false
	mu.Unlock()
	tr.Record(s)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	logMu.Lock()
	out := logs.String()
	logMu.Unlock()
	if n := strings.Count(out, "traces: export failed"); n != 1 {
		t.Errorf("%d export-failed lines, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "traces: export works again") || !strings.Contains(out, "batches_lost=3") {
		t.Errorf("no recovery line with 3 lost batches:\n%s", out)
	}
	if len(rcv.spans) != 1 {
		t.Errorf("%d spans after recovery, want 1", len(rcv.spans))
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A nil *Tracer is off: Record and Shutdown do nothing and allocate nothing.
func TestTracerNil(t *testing.T) {
	var tr *Tracer
	s := &Span{Endpoint: "chat.completions", Status: 200, Attempts: []AttemptSpan{{Status: 200}}}
	if n := testing.AllocsPerRun(100, func() { tr.Record(s) }); n != 0 {
		t.Errorf("nil Record allocates %v times, want 0", n)
	}
	// Nor does a Span made at the call: Record does not keep it.
	model := strings.Repeat("m", 3)
	if n := testing.AllocsPerRun(100, func() {
		tr.Record(&Span{Endpoint: "chat.completions", Model: model, Start: t0, End: t0, Status: 200})
	}); n != 0 {
		t.Errorf("nil Record of a Span literal allocates %v times, want 0", n)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

func benchSpan() *Span {
	return &Span{TraceParent: clientParent, Endpoint: "chat.completions", Model: "gpt-4o-mini", Provider: "openai-a",
		Upstream: "gpt-4o-mini", Stream: true, Start: t0, End: t0.Add(time.Second), Status: 200,
		InputTokens: 12, OutputTokens: 30, RequestID: "req-1",
		Attempts: []AttemptSpan{{Provider: "openai-a", Start: t0, Duration: time.Second, Status: 200}}}
}

// BenchmarkRecordOff is the cost with tracing off: a nil test.
func BenchmarkRecordOff(b *testing.B) {
	var tr *Tracer
	s := benchSpan()
	b.ReportAllocs()
	for b.Loop() {
		tr.Record(s)
	}
}

// BenchmarkRecordOn is the cost of one request span and one attempt span:
// "path" is what the request path pays (making the spans and queueing
// them), "otlp" adds the export (batching, protobuf, a POST to a local
// collector) that runs on the batch processor's goroutine. Allocations
// count every goroutine's.
func BenchmarkRecordOn(b *testing.B) {
	b.Run("path", func(b *testing.B) {
		benchRecord(b, newTracer(discard{}, TraceOptions{ServiceName: DefaultServiceName, Timeout: time.Second}))
	})
	b.Run("otlp", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-protobuf")
		}))
		defer srv.Close()
		tr, err := NewTracer(context.Background(), TraceOptions{Endpoint: srv.URL, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		benchRecord(b, tr)
	})
}

func benchRecord(b *testing.B, tr *Tracer) {
	defer func() { _ = tr.Shutdown(context.Background()) }()
	s := benchSpan()
	b.ReportAllocs()
	for b.Loop() {
		tr.Record(s)
	}
}

// discard is an exporter that drops the spans.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// TestTracerSampleRatio: a ratio traces about that share of the requests
// without a traceparent; a client's sampled traceparent is followed anyway.
func TestTracerSampleRatio(t *testing.T) {
	cases := []struct {
		ratio  float64
		parent string
		lo, hi int // request spans of 1000
	}{
		{0, "", 1000, 1000},
		{1, "", 1000, 1000},
		{0.1, "", 50, 160},
		{0.1, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", 1000, 1000},
	}
	for _, c := range cases {
		exp := tracetest.NewInMemoryExporter()
		tr := newTracer(exp, TraceOptions{ServiceName: "t", Timeout: time.Second, SampleRatio: c.ratio})
		for range 1000 {
			tr.Record(&Span{TraceParent: c.parent, Endpoint: "chat.completions", Model: "m", Start: time.Now(), End: time.Now(), Status: 200})
		}
		if err := tr.provider.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
		n := len(exp.GetSpans())
		_ = tr.Shutdown(context.Background())
		if n < c.lo || n > c.hi {
			t.Errorf("ratio %g parent %q: %d spans of 1000, want %d to %d", c.ratio, c.parent, n, c.lo, c.hi)
		}
	}
}

func TestOperation(t *testing.T) {
	for endpoint, want := range map[string]string{
		"chat.completions": "chat", "responses": "chat", "messages": "chat", "completions": "text_completion",
		"embeddings": "embeddings", "images.generations": "generate_content", "models.list": "", "messages.count_tokens": "",
	} {
		if got := operation(endpoint); got != want {
			t.Errorf("operation(%q) = %q, want %q", endpoint, got, want)
		}
	}
}
