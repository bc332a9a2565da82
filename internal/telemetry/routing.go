package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Attempt is one upstream try of a request, for the routing metrics.
type Attempt struct {
	Provider string
	Status   int  // the upstream's HTTP status; 0 when no answer came
	Failed   bool // it failed (and was retried, or ended the request)
}

// Circuit is a provider's breaker, read at scrape time.
type Circuit struct {
	Provider  string
	State     int   // 0 closed, 1 open, 2 half-open
	Trips     int64 // times it opened since start
	KeysOut   int   // API keys out of rotation after a 401/403
	KeyFaults int64 // times a key left rotation since start
}

// routing holds the routing collectors.
type routing struct {
	retries  *prometheus.CounterVec
	circuits func() []Circuit
}

var (
	circuitStateDesc = prometheus.NewDesc(namespace+"_circuit_state",
		"Each provider's circuit breaker: 0 closed, 1 open (skipped), 2 half-open (the next request probes it).",
		[]string{"provider"}, nil)
	circuitTripsDesc = prometheus.NewDesc(namespace+"_circuit_opened_total",
		"Times each provider's circuit opened since the gateway started.", []string{"provider"}, nil)
	keysOutDesc = prometheus.NewDesc(namespace+"_provider_keys_out_of_rotation",
		"API keys of each provider the vendor refused (401/403), out of rotation until the config is reloaded.",
		[]string{"provider"}, nil)
	keyFaultsDesc = prometheus.NewDesc(namespace+"_provider_key_failures_total",
		"Times a key of each provider was taken out of rotation since the gateway started.", []string{"provider"}, nil)
)

func newRouting(circuits func() []Circuit) *routing {
	return &routing{
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "retries_total",
			Help: "Upstream tries after a request's first, by the provider tried and the public model."},
			[]string{"provider", "model"}),
		circuits: circuits,
	}
}

// Describe implements prometheus.Collector.
func (r *routing) Describe(ch chan<- *prometheus.Desc) {
	r.retries.Describe(ch)
	if r.circuits != nil {
		ch <- circuitStateDesc
		ch <- circuitTripsDesc
		ch <- keysOutDesc
		ch <- keyFaultsDesc
	}
}

// Collect implements prometheus.Collector.
func (r *routing) Collect(ch chan<- prometheus.Metric) {
	r.retries.Collect(ch)
	if r.circuits == nil {
		return
	}
	for _, c := range r.circuits() {
		ch <- prometheus.MustNewConstMetric(circuitStateDesc, prometheus.GaugeValue, float64(c.State), c.Provider)
		ch <- prometheus.MustNewConstMetric(circuitTripsDesc, prometheus.CounterValue, float64(c.Trips), c.Provider)
		ch <- prometheus.MustNewConstMetric(keysOutDesc, prometheus.GaugeValue, float64(c.KeysOut), c.Provider)
		ch <- prometheus.MustNewConstMetric(keyFaultsDesc, prometheus.CounterValue, float64(c.KeyFaults), c.Provider)
	}
}

// attempts counts a request's tries: each failed one as an upstream error
// of its provider (by the upstream's status, 0 when no answer came), and
// each after the first as a retry. A request of one successful try, the
// hot path, returns at once.
func (m *Metrics) attempts(model string, as []Attempt) {
	if len(as) == 0 || len(as) == 1 && !as[0].Failed {
		return
	}
	if _, ok := m.models[model]; !ok {
		model = OtherModel
	}
	for i, a := range as {
		p := a.Provider
		if _, ok := m.providers[p]; !ok {
			p = NoProvider
		}
		if a.Failed {
			m.upstream.WithLabelValues(p, m.status(a.Status)).Inc()
		}
		if i > 0 {
			m.routing.retries.WithLabelValues(p, model).Inc()
		}
	}
}
