// Package telemetry owns the gateway's Prometheus metrics and its
// OpenTelemetry traces. Metrics: the collectors, a private registry (never
// the process-wide default one) and the handler that serves them. Traces
// (trace.go): a Tracer that turns one finished request into a span and a
// child span per upstream attempt, exported over OTLP/HTTP in batches.
//
// The request path calls Metrics.Request once per request and
// StreamStarted / StreamEnded around a stream; it never sees a Prometheus
// type, and the per-request work allocates nothing once a label
// combination has been seen (the handles are cached, see series). It calls
// Tracer.Record once per request too, with what it noted on the way.
//
// Labels are bounded: model is a configured public model id or "other",
// provider a configured provider name or "none", endpoint one of the
// handler's fixed names, status the HTTP status code. A client cannot grow
// the number of series by sending made-up model names.
//
// Rate-limit rejections are refusals (reason rate_limit_exceeded). The
// routing metrics (retries, failed tries, circuit state: routing.go) are on
// the same registry.
package telemetry

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Label values that stand for "not one of the configured ones".
const (
	OtherModel  = "other" // a model that is not configured (or none was named)
	NoProvider  = "none"  // no provider was picked (refused before routing)
	OtherReason = "other" // a refusal reason past maxReasons
	maxReasons  = 64      // distinct key-refusal reasons kept
	namespace   = "modelgate"
)

// Request is what one request's metrics need; the handler fills it in from
// what it already knows when it records the request (no allocation: it is
// passed by value).
type Request struct {
	Endpoint string // the handler's name for the endpoint ("chat.completions")
	Model    string // the public model id the client asked for
	Provider string // the provider that served it ("" before routing)
	Status   int    // the HTTP status the client got
	Duration time.Duration
	TTFT     time.Duration // time to the first streamed chunk (0: not a stream, or none came)

	PromptTokens, CompletionTokens int64
	CostMicros                     int64 // what was charged, in micro-units of the billing currency

	// Attempts are the request's upstream tries (see Metrics.attempts).
	Attempts []Attempt
	// Refusal is the error code of a key's request the gateway refused
	// before any upstream call ("" otherwise): counted by reason.
	Refusal string
}

// Options configure New.
type Options struct {
	// Models are the configured public model ids (the only values the
	// model label takes besides OtherModel).
	Models []string
	// Providers are the configured provider names (the only values the
	// provider label takes besides NoProvider).
	Providers []string
	// Refused reads the counts of the requests refused without an
	// authenticated key, by reason (refused.Counter.Counts); it is read at
	// scrape time. nil: none are exported.
	Refused func() map[string]uint64
	// Circuits reads each provider's circuit breaker at scrape time
	// (nil: the circuit metrics are not exported).
	Circuits func() []Circuit
}

// Metrics holds the collectors and the registry they are registered with.
// Its methods are safe for concurrent use; a nil *Metrics does nothing, so
// the request path needs no "metrics on?" test of its own.
type Metrics struct {
	reg       *prometheus.Registry
	models    map[string]struct{}
	providers map[string]struct{}

	requests   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	ttft       *prometheus.HistogramVec
	tokens     *prometheus.CounterVec
	cost       *prometheus.CounterVec
	upstream   *prometheus.CounterVec
	inFlight   prometheus.Gauge
	refusals   *refusals
	routing    *routing
	statusText [600]string // strconv.Itoa of every HTTP status, made once

	mu     sync.RWMutex
	series map[seriesKey]*series
}

// seriesKey is one request's label values (model and provider already
// bounded).
type seriesKey struct {
	endpoint, model, provider string
	status                    int
}

// series are the metric handles of one label combination, looked up once.
type series struct {
	requests   prometheus.Counter
	duration   prometheus.Observer
	ttft       prometheus.Observer
	prompt     prometheus.Counter
	completion prometheus.Counter
	cost       prometheus.Counter
}

// DurationBuckets are the request-duration histogram's upper bounds in
// seconds: from a cached or refused request to a long reasoning answer.
var DurationBuckets = []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// TTFTBuckets are the time-to-first-token histogram's upper bounds.
var TTFTBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}

// New registers the gateway's collectors, and the Go runtime's and the
// process's, on a registry of its own.
func New(o Options) *Metrics {
	m := &Metrics{
		reg:       prometheus.NewRegistry(),
		models:    set(o.Models),
		providers: set(o.Providers),
		series:    map[seriesKey]*series{},
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "requests_total",
			Help: "Requests answered, by endpoint, public model, provider and HTTP status."},
			[]string{"endpoint", "model", "provider", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer (a stream's last event), by endpoint, model and provider.",
			Buckets: DurationBuckets}, []string{"endpoint", "model", "provider"}),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "time_to_first_token_seconds",
			Help:    "Time from a streamed request's arrival to its first chunk, by model and provider.",
			Buckets: TTFTBuckets}, []string{"model", "provider"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "tokens_total",
			Help: "Tokens charged, by model, provider and kind (prompt or completion)."},
			[]string{"model", "provider", "kind"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "cost_micros_total",
			Help: "Cost charged to accounts, in millionths of the billing currency, by model and provider."},
			[]string{"model", "provider"}),
		upstream: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "upstream_errors_total",
			Help: "Upstream tries that failed, by provider and the upstream's HTTP status (0: no answer came: a connection failure or timeout)."},
			[]string{"provider", "status"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "streams_in_flight",
			Help: "Streamed answers being relayed now."}),
		refusals: newRefusals(o.Refused),
		routing:  newRouting(o.Circuits),
	}
	for i := range m.statusText {
		m.statusText[i] = strconv.Itoa(i)
	}
	m.reg.MustRegister(m.requests, m.duration, m.ttft, m.tokens, m.cost, m.upstream, m.inFlight, m.refusals, m.routing,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func set(names []string) map[string]struct{} {
	s := make(map[string]struct{}, len(names))
	for _, n := range names {
		s[n] = struct{}{}
	}
	return s
}

// Registry is the registry the collectors are on (later metrics register
// there too; tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Request counts one finished request. It runs once per request, on the
// request's goroutine, and allocates nothing once its labels were seen.
func (m *Metrics) Request(r Request) {
	if m == nil {
		return
	}
	s := m.seriesFor(r)
	s.requests.Inc()
	s.duration.Observe(r.Duration.Seconds())
	if r.TTFT > 0 {
		s.ttft.Observe(r.TTFT.Seconds())
	}
	if r.PromptTokens > 0 {
		s.prompt.Add(float64(r.PromptTokens))
	}
	if r.CompletionTokens > 0 {
		s.completion.Add(float64(r.CompletionTokens))
	}
	if r.CostMicros > 0 {
		s.cost.Add(float64(r.CostMicros))
	}
	m.attempts(r.Model, r.Attempts)
	if r.Refusal != "" {
		m.refusals.add(r.Refusal)
	}
}

// StreamStarted counts a stream whose answer started (see StreamEnded).
func (m *Metrics) StreamStarted() {
	if m != nil {
		m.inFlight.Inc()
	}
}

// StreamEnded uncounts a stream counted by StreamStarted.
func (m *Metrics) StreamEnded() {
	if m != nil {
		m.inFlight.Dec()
	}
}

// seriesFor returns the cached handles of r's labels, looking them up (and
// allocating) only the first time.
func (m *Metrics) seriesFor(r Request) *series {
	k := seriesKey{endpoint: r.Endpoint, model: OtherModel, provider: NoProvider, status: r.Status}
	if _, ok := m.models[r.Model]; ok {
		k.model = r.Model
	}
	if _, ok := m.providers[r.Provider]; ok {
		k.provider = r.Provider
	}
	m.mu.RLock()
	s := m.series[k]
	m.mu.RUnlock()
	if s != nil {
		return s
	}
	status := m.status(k.status)
	s = &series{
		requests:   m.requests.WithLabelValues(k.endpoint, k.model, k.provider, status),
		duration:   m.duration.WithLabelValues(k.endpoint, k.model, k.provider),
		ttft:       m.ttft.WithLabelValues(k.model, k.provider),
		prompt:     m.tokens.WithLabelValues(k.model, k.provider, "prompt"),
		completion: m.tokens.WithLabelValues(k.model, k.provider, "completion"),
		cost:       m.cost.WithLabelValues(k.model, k.provider),
	}
	m.mu.Lock()
	if old := m.series[k]; old != nil {
		s = old
	} else {
		m.series[k] = s
	}
	m.mu.Unlock()
	return s
}

func (m *Metrics) status(code int) string {
	if code >= 0 && code < len(m.statusText) {
		return m.statusText[code]
	}
	return strconv.Itoa(code)
}
