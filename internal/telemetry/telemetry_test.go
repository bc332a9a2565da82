package telemetry

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func newTest(refused map[string]uint64) *Metrics {
	return New(Options{Models: []string{"gpt-4o-mini"}, Providers: []string{"openai-a"},
		Refused: func() map[string]uint64 { return refused }})
}

// Requests are counted with bounded labels: an unconfigured model is
// "other", no provider "none".
func TestRequestCounts(t *testing.T) {
	m := newTest(nil)
	chat := Request{Endpoint: "chat.completions", Model: "gpt-4o-mini", Provider: "openai-a", Status: 200,
		Duration: 300 * time.Millisecond, TTFT: 80 * time.Millisecond, PromptTokens: 12, CompletionTokens: 30, CostMicros: 72}
	m.Request(chat)
	m.Request(chat)
	m.Request(Request{Endpoint: "chat.completions", Model: "made-up-1", Status: 404, Refusal: "model_not_found"})
	m.Request(Request{Endpoint: "chat.completions", Model: "made-up-2", Status: 404, Refusal: "model_not_found"})
	m.Request(Request{Endpoint: "chat.completions", Model: "gpt-4o-mini", Provider: "openai-a", Status: 502,
		Attempts: []Attempt{{Provider: "openai-a", Status: 502, Failed: true}}})
	m.Request(Request{Endpoint: "chat.completions", Model: "gpt-4o-mini", Provider: "not-configured", Status: 200})

	cases := []struct {
		name string
		got  float64
		want float64
	}{
		{"ok requests", testutil.ToFloat64(m.requests.WithLabelValues("chat.completions", "gpt-4o-mini", "openai-a", "200")), 2},
		{"unknown models share other", testutil.ToFloat64(m.requests.WithLabelValues("chat.completions", "other", "none", "404")), 2},
		{"unknown provider is none", testutil.ToFloat64(m.requests.WithLabelValues("chat.completions", "gpt-4o-mini", "none", "200")), 1},
		{"prompt tokens", testutil.ToFloat64(m.tokens.WithLabelValues("gpt-4o-mini", "openai-a", "prompt")), 24},
		{"completion tokens", testutil.ToFloat64(m.tokens.WithLabelValues("gpt-4o-mini", "openai-a", "completion")), 60},
		{"cost", testutil.ToFloat64(m.cost.WithLabelValues("gpt-4o-mini", "openai-a")), 144},
		{"upstream errors", testutil.ToFloat64(m.upstream.WithLabelValues("openai-a", "502")), 1},
		{"no upstream error for a 200", testutil.ToFloat64(m.upstream.WithLabelValues("openai-a", "200")), 0},
		{"request series", float64(testutil.CollectAndCount(m.requests)), 4},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// Two streamed observations of TTFT, three of duration for the 200s of openai-a + the 502.
	if n := histCount(t, m, "modelgate_time_to_first_token_seconds", `model="gpt-4o-mini",provider="openai-a"`); n != "2" {
		t.Errorf("ttft count = %s, want 2", n)
	}
	if n := histCount(t, m, "modelgate_request_duration_seconds", `endpoint="chat.completions",model="gpt-4o-mini",provider="openai-a"`); n != "3" {
		t.Errorf("duration count = %s, want 3", n)
	}
}

// histCount scrapes m's handler and returns the _count sample of the
// histogram name with labels.
func histCount(t *testing.T, m *Metrics, name, labels string) string {
	t.Helper()
	text := scrape(t, m)
	prefix := name + "_count{" + labels + "} "
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			return v
		}
	}
	t.Fatalf("no %s in\n%s", prefix, text)
	return ""
}

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %v", res.StatusCode, err)
	}
	return string(b)
}

// Refusals: those without a key are read from the refused counter at
// scrape time, the keys' are counted here; reasons are bounded.
func TestRefusals(t *testing.T) {
	anon := map[string]uint64{"invalid_api_key": 3}
	m := newTest(anon)
	m.Request(Request{Endpoint: "chat.completions", Status: 402, Refusal: "insufficient_quota"})
	m.Request(Request{Endpoint: "chat.completions", Status: 402, Refusal: "insufficient_quota"})
	want := `
# HELP modelgate_refusals_total Requests the gateway refused itself, by reason (the OpenAI error code) and whether the key was authenticated.
# TYPE modelgate_refusals_total counter
modelgate_refusals_total{authenticated="false",reason="invalid_api_key"} 3
modelgate_refusals_total{authenticated="true",reason="insufficient_quota"} 2
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "modelgate_refusals_total"); err != nil {
		t.Error(err)
	}
	anon["invalid_api_key"] = 5 // read at scrape time
	if !strings.Contains(scrape(t, m), `modelgate_refusals_total{authenticated="false",reason="invalid_api_key"} 5`) {
		t.Error("refused counts not read at scrape time")
	}
	for i := range 2 * maxReasons {
		m.refusals.add("reason-" + string(rune('a'+i%26)) + string(rune('a'+i/26)))
	}
	if n := len(m.refusals.byKeys); n > maxReasons+1 {
		t.Errorf("%d key-refusal reasons kept, want at most %d", n, maxReasons+1)
	}
	if m.refusals.byKeys[OtherReason] == 0 {
		t.Error("reasons past the bound were not counted as other")
	}
}

// Streams in flight go up and down; the runtime's and process's collectors
// are there; a nil *Metrics is a no-op.
func TestStreamsAndCollectors(t *testing.T) {
	m := newTest(nil)
	m.StreamStarted()
	m.StreamStarted()
	m.StreamEnded()
	if v := testutil.ToFloat64(m.inFlight); v != 1 {
		t.Errorf("streams in flight = %v, want 1", v)
	}
	text := scrape(t, m)
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "modelgate_streams_in_flight 1"} {
		if !strings.Contains(text, name) {
			t.Errorf("scrape lacks %q", name)
		}
	}
	var none *Metrics
	none.Request(Request{Status: 200})
	none.StreamStarted()
	none.StreamEnded()
}

// Two registries do not share state (no global default registry).
func TestPrivateRegistry(t *testing.T) {
	a, b := newTest(nil), newTest(nil)
	a.Request(Request{Endpoint: "embeddings", Status: 200})
	if n := testutil.CollectAndCount(b.requests); n != 0 {
		t.Errorf("a's request shows in b: %d series", n)
	}
}

// The hot path allocates nothing once a label combination was seen.
func TestRequestAllocs(t *testing.T) {
	m := newTest(nil)
	r := Request{Endpoint: "chat.completions", Model: "gpt-4o-mini", Provider: "openai-a", Status: 200,
		Duration: time.Second, TTFT: time.Millisecond, PromptTokens: 1, CompletionTokens: 2, CostMicros: 3}
	m.Request(r)
	if n := testing.AllocsPerRun(100, func() { m.Request(r) }); n != 0 {
		t.Errorf("Request allocates %v times per call, want 0", n)
	}
}

func BenchmarkRequest(b *testing.B) {
	m := newTest(nil)
	r := Request{Endpoint: "chat.completions", Model: "gpt-4o-mini", Provider: "openai-a", Status: 200,
		Duration: time.Second, TTFT: time.Millisecond, PromptTokens: 1, CompletionTokens: 2, CostMicros: 3}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Request(r)
		}
	})
}

// BenchmarkRequestSerial is the cost one request pays, without contention.
func BenchmarkRequestSerial(b *testing.B) {
	m := newTest(nil)
	r := Request{Endpoint: "chat.completions", Model: "gpt-4o-mini", Provider: "openai-a", Status: 200,
		Duration: time.Second, TTFT: time.Millisecond, PromptTokens: 1, CompletionTokens: 2, CostMicros: 3}
	b.ReportAllocs()
	for b.Loop() {
		m.Request(r)
	}
}

// TestRoutingMetrics: failed tries are upstream errors by the upstream's
// status, tries after the first are retries, and the circuits are read at
// scrape time.
func TestRoutingMetrics(t *testing.T) {
	m := New(Options{Models: []string{"m"}, Providers: []string{"a", "b"}, Circuits: func() []Circuit {
		return []Circuit{{Provider: "a", State: 1, Trips: 2, KeysOut: 1, KeyFaults: 3}, {Provider: "b"}}
	}})
	m.Request(Request{Endpoint: "chat.completions", Model: "m", Provider: "b", Status: 200, Attempts: []Attempt{
		{Provider: "a", Status: 503, Failed: true}, {Provider: "a", Status: 0, Failed: true}, {Provider: "b", Status: 200}}})
	m.Request(Request{Endpoint: "chat.completions", Model: "m", Provider: "b", Status: 200, Attempts: []Attempt{{Provider: "b", Status: 200}}})
	cases := []struct {
		name      string
		got, want float64
	}{
		{"503 counted", testutil.ToFloat64(m.upstream.WithLabelValues("a", "503")), 1},
		{"no answer counted as 0", testutil.ToFloat64(m.upstream.WithLabelValues("a", "0")), 1},
		{"answered try is no error", testutil.ToFloat64(m.upstream.WithLabelValues("b", "200")), 0},
		{"retries to a", testutil.ToFloat64(m.routing.retries.WithLabelValues("a", "m")), 1},
		{"retries to b", testutil.ToFloat64(m.routing.retries.WithLabelValues("b", "m")), 1},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	for _, want := range []string{`modelgate_circuit_state{provider="a"} 1`, `modelgate_circuit_state{provider="b"} 0`,
		`modelgate_circuit_opened_total{provider="a"} 2`, `modelgate_provider_keys_out_of_rotation{provider="a"} 1`,
		`modelgate_provider_key_failures_total{provider="a"} 3`} {
		if !strings.Contains(scrape(t, m), want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
}
