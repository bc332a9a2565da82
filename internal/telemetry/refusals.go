package telemetry

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// refusals exports modelgate_refusals_total{reason,authenticated}: the
// requests refused without an authenticated key (read from the refused
// counter at scrape time, authenticated="false") and the requests of
// authenticated keys the gateway refused before any upstream call (counted
// here, authenticated="true"). Neither kind leaves a usage record.
type refusals struct {
	desc   *prometheus.Desc
	anon   func() map[string]uint64
	mu     sync.Mutex
	byKeys map[string]uint64
}

func newRefusals(anon func() map[string]uint64) *refusals {
	return &refusals{anon: anon, byKeys: map[string]uint64{},
		desc: prometheus.NewDesc(namespace+"_refusals_total",
			"Requests the gateway refused itself, by reason (the OpenAI error code) and whether the key was authenticated.",
			[]string{"reason", "authenticated"}, nil)}
}

// add counts a key's refusal; reasons past maxReasons count as OtherReason.
func (r *refusals) add(reason string) {
	r.mu.Lock()
	if _, ok := r.byKeys[reason]; !ok && len(r.byKeys) >= maxReasons {
		reason = OtherReason
	}
	r.byKeys[reason]++
	r.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (r *refusals) Describe(ch chan<- *prometheus.Desc) { ch <- r.desc }

// Collect implements prometheus.Collector.
func (r *refusals) Collect(ch chan<- prometheus.Metric) {
	if r.anon != nil {
		for reason, n := range r.anon() {
			ch <- prometheus.MustNewConstMetric(r.desc, prometheus.CounterValue, float64(n), reason, "false")
		}
	}
	r.mu.Lock()
	counts := make(map[string]uint64, len(r.byKeys))
	for reason, n := range r.byKeys {
		counts[reason] = n
	}
	r.mu.Unlock()
	for reason, n := range counts {
		ch <- prometheus.MustNewConstMetric(r.desc, prometheus.CounterValue, float64(n), reason, "true")
	}
}
