package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Traces are written after the fact: the request path fills in a Span
// once the request has ended (with the times it noted on the way) and
// hands it to Tracer.Record, which makes the request's span and one child
// span per upstream attempt with those explicit timestamps. So no context
// is threaded through the handlers and adapters, and with tracing off the
// request path pays one nil test.

// The attribute names of the OpenTelemetry GenAI semantic conventions
// (gen-ai spans, development status). The Go semconv packages dropped the
// gen_ai group after v1.41.0 (it moved to a registry of its own), so the
// names are spelled here.
const (
	attrOperation    = attribute.Key("gen_ai.operation.name")
	attrProvider     = attribute.Key("gen_ai.provider.name")
	attrRequestModel = attribute.Key("gen_ai.request.model")
	attrRespModel    = attribute.Key("gen_ai.response.model")
	attrInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	attrOutputTokens = attribute.Key("gen_ai.usage.output_tokens")

	// The gateway's own, where no convention has a name.
	attrRequestID = attribute.Key("modelgate.request_id")
	attrEndpoint  = attribute.Key("modelgate.endpoint")
	attrStream    = attribute.Key("modelgate.stream")
	attrAttempt   = attribute.Key("modelgate.attempt") // 1 for the first upstream try
)

// Defaults of TraceOptions.
const (
	DefaultServiceName  = "modelgate"
	DefaultTraceTimeout = 10 * time.Second
	tracesPath          = "/v1/traces"
	tracerName          = "github.com/modelgate/modelgate/internal/telemetry"
	// maxAttrLen caps a string attribute (an error text from a vendor can
	// be long; the rest are ids and names).
	maxAttrLen = 512
)

// TraceOptions configure NewTracer.
type TraceOptions struct {
	// Endpoint is the OTLP/HTTP collector: a base URL
	// ("http://127.0.0.1:4318", "https://otel.example.com/otlp"), to which
	// /v1/traces is added, or the full URL of the traces resource (one
	// whose path ends in /v1/traces), used as it is.
	Endpoint string
	// ServiceName and ServiceVersion are the resource's service.name
	// (default "modelgate") and service.version ("" leaves it out).
	ServiceName, ServiceVersion string
	// Timeout bounds one export (one POST, retries included); default 10s.
	Timeout time.Duration
	// SampleRatio is the share of requests traced (above 0, at most 1)
	// among those whose client sent no traceparent (a sampled one is
	// always followed, an unsampled one never); 0 (the zero value) traces
	// all. Tracing costs each traced request some 10 µs of CPU
	// (docs/benchmark.md).
	SampleRatio float64
	// Logger gets a WARN line when exports start failing and an INFO line
	// when they work again (nil: slog.Default()). Spans that cannot be
	// exported are dropped, never held up for.
	Logger *slog.Logger
}

// Tracer exports one span per request and one child span per upstream
// attempt over OTLP/HTTP, in batches, from a goroutine of its own. A nil
// *Tracer is off and costs nothing.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	attrs    sync.Pool // *[]attribute.KeyValue: a Record's attribute buffer
}

// Span is what one request's trace needs, filled in by the request path
// from what it already noted once the request has ended.
type Span struct {
	// TraceParent is the client's W3C traceparent header ("" if none):
	// the request span becomes its child, in its trace. A malformed one
	// is ignored; one whose sampled flag is off means no spans.
	TraceParent string
	Endpoint    string // the handler's name for the endpoint ("chat.completions", "embeddings", ...)
	Model       string // the public model id the client asked for
	Provider    string // the provider that answered ("" before routing)
	Upstream    string // the vendor's model id it was asked for
	Stream      bool
	Start, End  time.Time
	Status      int    // the HTTP status the client got (499 when it left)
	ErrCode     string // the OpenAI error code, "" on success
	RequestID   string

	InputTokens, OutputTokens int64
	// Attempts are the upstream tries in order (none when the gateway
	// answered by itself).
	Attempts []AttemptSpan
}

// AttemptSpan is one upstream try of a request.
type AttemptSpan struct {
	Provider string // provider name from the config
	Upstream string // the vendor's model id ("" : the request's Upstream)
	// Start is when the try was sent; zero: right after the previous
	// try's end (the request's start for the first), for callers that
	// kept only durations (store.Attempt).
	Start    time.Time
	Duration time.Duration // from sending to the answer's end or failure
	Status   int           // the upstream's HTTP status; 0 when no answer came
	Error    string        // a short reason it failed ("timeout", an error code), "" when it answered 2xx
}

// NewTracer starts a tracer that batches spans to the OTLP/HTTP endpoint
// o.Endpoint. Nothing is sent (or dialled) until there are spans; an
// unreachable collector costs dropped spans and a log line, never a
// blocked request.
func NewTracer(ctx context.Context, o TraceOptions) (*Tracer, error) {
	endpoint, err := TracesURL(o.Endpoint)
	if err != nil {
		return nil, err
	}
	if o.ServiceName == "" {
		o.ServiceName = DefaultServiceName
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTraceTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	exp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL(endpoint),
		otlptracehttp.WithTimeout(o.Timeout),
		// Retries of a failed export stay within one export's time, so
		// a dead collector holds up only its own batch.
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true,
			InitialInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second, MaxElapsedTime: o.Timeout}))
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter for %s: %w", endpoint, err)
	}
	return newTracer(&loggingExporter{SpanExporter: exp, log: o.Logger, endpoint: endpoint}, o), nil
}

// sampler decides for a request without a parent: that share of trace
// ids, or all of them for a ratio of 0 (unset) or from 1 up.
func sampler(ratio float64) sdktrace.Sampler {
	if ratio <= 0 || ratio >= 1 {
		return sdktrace.AlwaysSample()
	}
	return sdktrace.TraceIDRatioBased(ratio)
}

// newTracer is a Tracer exporting through exp with o's service and timeout.
func newTracer(exp sdktrace.SpanExporter, o TraceOptions) *Tracer {
	res := []attribute.KeyValue{semconv.ServiceName(o.ServiceName)}
	if o.ServiceVersion != "" {
		res = append(res, semconv.ServiceVersion(o.ServiceVersion))
	}
	limits := sdktrace.NewSpanLimits()
	limits.AttributeValueLengthLimit = maxAttrLen
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL, res...)),
		sdktrace.WithSampler(sdktrace.ParentBased(sampler(o.SampleRatio))),
		sdktrace.WithRawSpanLimits(limits),
		sdktrace.WithBatcher(exp, sdktrace.WithExportTimeout(o.Timeout)),
	)
	t := &Tracer{provider: tp, tracer: tp.Tracer(tracerName)}
	t.attrs.New = func() any {
		b := make([]attribute.KeyValue, 0, 16)
		return &b
	}
	return t
}

// TracesURL is the URL the spans are POSTed to for a configured endpoint
// (see TraceOptions.Endpoint); an error if it is not an http(s) URL with
// a host, or carries what the exporter would not send (user info, a
// query, a fragment).
func TracesURL(endpoint string) (string, error) {
	const like = "is not an http(s) URL like http://127.0.0.1:4318"
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		return "", fmt.Errorf("telemetry: OTLP endpoint %q %s: %w", endpoint, like, errors.Unwrap(err))
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "", u.Opaque != "":
		return "", fmt.Errorf("telemetry: OTLP endpoint %q %s", endpoint, like)
	case u.User != nil:
		return "", fmt.Errorf("telemetry: OTLP endpoint %q has user info, which the exporter does not send", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("telemetry: OTLP endpoint %q has a query or fragment", endpoint)
	}
	if !strings.HasSuffix(u.Path, tracesPath) {
		u.Path = strings.TrimSuffix(u.Path, "/") + tracesPath
		u.RawPath = ""
	}
	return u.String(), nil
}

// Shutdown exports the spans still queued and stops the tracer; past
// ctx's deadline it gives up on them. Record after Shutdown does nothing.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("telemetry: tracer shutdown: %w", err)
	}
	return nil
}

// Record makes s's spans and queues them for export. It never blocks:
// when the queue is full (the collector is slow or gone) the spans are
// dropped. Safe for concurrent use; s is not kept.
func (t *Tracer) Record(s *Span) {
	if t == nil || s == nil {
		return
	}
	ctx := context.Background()
	if s.TraceParent != "" {
		ctx = propagation.TraceContext{}.Extract(ctx, traceParent(s.TraceParent))
	}
	op := operation(s.Endpoint)
	// The attributes are set after Start rather than passed to it: the
	// sampler needs none, Start would copy them once more, and a request
	// not sampled needs none made.
	ctx, req := t.tracer.Start(ctx, spanName(op, s.Endpoint, s.Model),
		trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(s.Start))
	if !req.IsRecording() {
		return // not sampled (sample_ratio, or the client's traceparent said so)
	}
	bufp := t.attrs.Get().(*[]attribute.KeyValue)
	defer t.attrs.Put(bufp)
	attrs := append((*bufp)[:0],
		attrRequestID.String(s.RequestID),
		attrEndpoint.String(s.Endpoint),
		attrStream.Bool(s.Stream),
		semconv.HTTPResponseStatusCode(s.Status))
	attrs = appendNonEmpty(attrs, attrOperation, op)
	attrs = appendNonEmpty(attrs, attrRequestModel, s.Model)
	attrs = appendNonEmpty(attrs, attrRespModel, s.Upstream)
	attrs = appendNonEmpty(attrs, attrProvider, s.Provider)
	if s.InputTokens > 0 || s.OutputTokens > 0 {
		attrs = append(attrs, attrInputTokens.Int64(s.InputTokens), attrOutputTokens.Int64(s.OutputTokens))
	}
	errType := errorType(s.ErrCode, s.Status)
	attrs = appendNonEmpty(attrs, semconv.ErrorTypeKey, errType)
	req.SetAttributes(attrs...) // copied: the buffer is free again
	if s.Status >= 500 {
		req.SetStatus(codes.Error, errType)
	}
	next := s.Start // where an attempt without a start begins
	for i := range s.Attempts {
		attrs, next = t.attempt(ctx, s, op, i, next, attrs[:0])
	}
	clear(attrs) // let the strings go
	*bufp = attrs[:0]
	req.End(trace.WithTimestamp(s.End))
}

// attempt makes the CLIENT span of s's i-th upstream try, a child of the
// request span in ctx, with attrs as its attributes' buffer (returned for
// reuse). A try without a start begins at next; it returns where it ended.
func (t *Tracer) attempt(ctx context.Context, s *Span, op string, i int, next time.Time,
	attrs []attribute.KeyValue) ([]attribute.KeyValue, time.Time) {
	a := &s.Attempts[i]
	model := a.Upstream
	if model == "" {
		model = s.Upstream
	}
	start := a.Start
	if start.IsZero() {
		start = next
	}
	end := start.Add(a.Duration)
	attrs = append(attrs, attrAttempt.Int(i+1))
	attrs = appendNonEmpty(attrs, attrOperation, op)
	attrs = appendNonEmpty(attrs, attrProvider, a.Provider)
	attrs = appendNonEmpty(attrs, attrRequestModel, model)
	if a.Status != 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(a.Status))
	}
	failed := a.Status == 0 || a.Status >= 400 || a.Error != ""
	errType := ""
	if failed {
		errType = errorType(a.Error, a.Status)
		if errType == "" {
			errType = semconv.ErrorTypeOther.Value.AsString() // no answer and no reason given
		}
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	_, span := t.tracer.Start(ctx, spanName(op, s.Endpoint, model),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start))
	span.SetAttributes(attrs...)
	if failed {
		span.SetStatus(codes.Error, errType)
	}
	span.End(trace.WithTimestamp(end))
	return attrs, end
}

func appendNonEmpty(attrs []attribute.KeyValue, k attribute.Key, v string) []attribute.KeyValue {
	if v == "" {
		return attrs
	}
	return append(attrs, k.String(v))
}

// operation is the GenAI operation name of an endpoint, "" for one that
// is no model call (listing models, fetching a stored answer or file).
func operation(endpoint string) string {
	switch endpoint {
	case "chat.completions", "responses", "messages":
		return "chat"
	case "completions":
		return "text_completion"
	case "embeddings":
		return "embeddings"
	case "images.generations", "images.edits", "audio.transcriptions", "audio.speech", "videos.generations":
		return "generate_content"
	}
	return ""
}

// spanName is "{gen_ai.operation.name} {gen_ai.request.model}" for a model
// call, and the endpoint's name for anything else (no model id in it, so
// span names stay few).
func spanName(op, endpoint, model string) string {
	switch {
	case op == "":
		if endpoint == "" {
			return "unknown"
		}
		return endpoint
	case model == "":
		return op
	}
	return op + " " + model
}

// errorType is the error.type of a failure: its code, or the HTTP status
// when it has none (as HTTP spans do); "" for a success.
func errorType(code string, status int) string {
	switch {
	case code != "":
		return code
	case status >= 400:
		return strconv.Itoa(status)
	}
	return ""
}

// traceParent carries one traceparent header to the W3C propagator.
type traceParent string

func (h traceParent) Get(key string) string {
	if key == "traceparent" {
		return string(h)
	}
	return ""
}
func (traceParent) Set(string, string) {}
func (traceParent) Keys() []string     { return []string{"traceparent"} }

// loggingExporter says when exports start failing and when they work
// again, on the app's logger, instead of the OpenTelemetry global error
// handler (which writes every failure to the standard logger), and
// counts the batches lost in between.
type loggingExporter struct {
	sdktrace.SpanExporter
	log      *slog.Logger
	endpoint string
	// The batch processor exports one batch at a time (under its batch
	// mutex), so these need no lock of their own.
	failing bool
	lost    int
}

func (e *loggingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	switch {
	case err != nil && !e.failing:
		e.failing, e.lost = true, 1
		e.log.Warn("traces: export failed; spans are dropped until it works again",
			"endpoint", e.endpoint, "spans", len(spans), "err", err)
	case err != nil:
		e.lost++
	case e.failing:
		e.failing = false
		e.log.Info("traces: export works again", "endpoint", e.endpoint, "batches_lost", e.lost)
	}
	return nil // said here; the batch processor would hand it to otel.Handle
}
