package app_test

import (
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/config"
)

// The failover tests whose requests leave state behind for the next:
// bursts, refused keys, Retry-After cooldowns and the circuit breaker.

// TestFailoverBurst: a vendor answering 503 to its first two requests
// sends them to b, then answers the third itself; each failed try is an
// upstream error of a, each second try a retry at b.
func TestFailoverBurst(t *testing.T) {
	a, b := newFaultVendor(t, "a", firstThen(2, failing(503))), newFaultVendor(t, "b", always(answers))
	g := startFaults(t, []*faultVendor{a, b}, withMetrics)
	for i, want := range []*faultVendor{b, b, a} {
		got := askOK(t, g, faultModel, want)
		wantTried := []string{"a 503 upstream_unavailable", "b 200"}
		if want == a {
			wantTried = []string{"a 200"}
		}
		if !slices.Equal(got, wantTried) {
			t.Errorf("request %d: attempts %q, want %q", i+1, got, wantTried)
		}
	}
	if a.hits() != 3 || b.hits() != 2 {
		t.Errorf("hits: a %d, b %d; want 3, 2", a.hits(), b.hits())
	}
	waitMetrics(t, g, map[string]float64{
		`modelgate_upstream_errors_total{provider="a",status="503"}`: 2,
		`modelgate_retries_total{model="m",provider="b"}`:            2,
		`modelgate_circuit_state{provider="a"}`:                      0,
	})
}

// TestFailoverKeyRotation: a key the vendor refuses (401) leaves rotation
// after one refusal, the request retried at once with the provider's next
// key; when the vendor refuses every key, the provider failed, and the
// next provider answers.
func TestFailoverKeyRotation(t *testing.T) {
	a := newFaultVendor(t, "a", refusing("sk-bad"))
	b := newFaultVendor(t, "b", always(answers))
	c := newFaultVendor(t, "c", always(failing(http.StatusUnauthorized)))
	d := newFaultVendor(t, "d", always(answers))
	cfg := faultConfig(t)
	withMetrics(cfg)
	deploy(cfg, "two-keys", a, b)
	deploy(cfg, "all-refused", c, d)
	cfg.Providers[0].APIKey, cfg.Providers[0].APIKeys = "", []string{"sk-bad", "sk-good"}
	cfg.Providers[2].APIKey, cfg.Providers[2].APIKeys = "", []string{"sk-bad-1", "sk-bad-2"}
	g := serveFaults(t, cfg)

	refused := 0
	for i := range 4 {
		switch got := askOK(t, g, "two-keys", a); {
		case slices.Equal(got, []string{"a 401 upstream_auth_failed", "a 200"}):
			refused++
		case !slices.Equal(got, []string{"a 200"}):
			t.Errorf("request %d: attempts %q", i+1, got)
		}
	}
	if refused != 1 || a.sawKey("sk-bad") != 1 || a.sawKey("sk-good") != 4 || b.hits() != 0 {
		t.Errorf("%d requests refused; a saw the bad key %d times, the good one %d; b %d requests; want 1, 1, 4, 0",
			refused, a.sawKey("sk-bad"), a.sawKey("sk-good"), b.hits())
	}

	got := askOK(t, g, "all-refused", d)
	if want := []string{"c 401 upstream_auth_failed", "c 401 upstream_auth_failed", "d 200"}; !slices.Equal(got, want) {
		t.Errorf("every key refused: attempts %q, want %q", got, want)
	}
	if c.sawKey("sk-bad-1") != 1 || c.sawKey("sk-bad-2") != 1 {
		t.Errorf("c saw %q, want each key once", c.keys)
	}
	waitMetrics(t, g, map[string]float64{
		`modelgate_provider_keys_out_of_rotation{provider="a"}`: 1,
		`modelgate_provider_key_failures_total{provider="a"}`:   1,
		// Every key refused: they all come back, and the provider failed.
		`modelgate_provider_keys_out_of_rotation{provider="c"}`:      0,
		`modelgate_upstream_errors_total{provider="c",status="401"}`: 2,
	})
}

// TestFailoverRetryAfter: a 429 with a Retry-After of a year cools that
// deployment for routing.max_cooldown (5m by default): its requests go to
// b meanwhile; a model it alone serves passes the first 429 through, then
// answers 503 with a Retry-After of at most five minutes, no vendor asked.
func TestFailoverRetryAfter(t *testing.T) {
	const year = "31536000"
	a, b := newFaultVendor(t, "a", always(limited(year))), newFaultVendor(t, "b", always(answers))
	s := newFaultVendor(t, "s", always(limited(year)))
	cfg := faultConfig(t)
	deploy(cfg, faultModel, a, b)
	deploy(cfg, "solo", s)
	g := serveFaults(t, cfg)

	if got, want := askOK(t, g, faultModel, b), []string{"a 429 rate_limit_exceeded", "b 200"}; !slices.Equal(got, want) {
		t.Errorf("first request: attempts %q, want %q", got, want)
	}
	for range 2 {
		if got := askOK(t, g, faultModel, b); !slices.Equal(got, []string{"b 200"}) {
			t.Errorf("a cooling down: attempts %q, want b's alone", got)
		}
	}
	if a.hits() != 1 || b.hits() != 3 {
		t.Errorf("hits: a %d, b %d; want 1, 3", a.hits(), b.hits())
	}

	_, _, _, err := ask(g, "solo", false)
	e := apiError(t, err, http.StatusTooManyRequests, "rate_limit_exceeded")
	t.Logf("the 429 passed through says Retry-After: %s", e.Response.Header.Get("Retry-After"))
	_, raw, _, err := ask(g, "solo", false)
	e = apiError(t, err, http.StatusServiceUnavailable, "service_unavailable")
	ra, _ := strconv.Atoi(e.Response.Header.Get("Retry-After"))
	if ra <= 0 || ra > 300 {
		t.Errorf("Retry-After %q, want 1 to 300 seconds", e.Response.Header.Get("Retry-After"))
	}
	if s.hits() != 1 {
		t.Errorf("s: %d requests, want 1", s.hits())
	}
	if raw == nil {
		raw = e.Response
	}
	if got := tried(g.record(raw.Header.Get("X-Request-Id"))); len(got) != 0 {
		t.Errorf("a request nothing was tried for: attempts %q", got)
	}
}

// TestCircuitOpensAndProbes: with circuit {failures: 2, cooldown: 1s} a
// provider failing twice in a row is skipped; once the cooldown passed,
// one request probes it: an answer closes the circuit (a), a failure opens
// it again (c), and of requests arriving together only one is the probe.
func TestCircuitOpensAndProbes(t *testing.T) {
	a, b := newFaultVendor(t, "a", firstThen(2, failing(500))), newFaultVendor(t, "b", always(answers))
	c, d := newFaultVendor(t, "c", always(failing(502))), newFaultVendor(t, "d", always(answers))
	cfg := faultConfig(t)
	withMetrics(cfg)
	deploy(cfg, "heals", a, b)
	deploy(cfg, "broken", c, d)
	cfg.Circuit = config.Circuit{Failures: 2, Cooldown: config.Duration(time.Second)}
	g := serveFaults(t, cfg)

	for _, m := range []struct {
		model    string
		fail, ok *faultVendor
	}{{"heals", a, b}, {"broken", c, d}} {
		for range 3 {
			askOK(t, g, m.model, m.ok)
		}
		if m.fail.hits() != 2 || m.ok.hits() != 3 {
			t.Errorf("%s: hits %d, %d; want 2, 3 (skipped once its circuit opened)", m.model, m.fail.hits(), m.ok.hits())
		}
	}
	waitMetrics(t, g, map[string]float64{`modelgate_circuit_state{provider="a"}`: 1, `modelgate_circuit_state{provider="c"}`: 1})

	time.Sleep(1100 * time.Millisecond)
	waitMetrics(t, g, map[string]float64{`modelgate_circuit_state{provider="a"}`: 2, `modelgate_circuit_state{provider="c"}`: 2})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, _, _, err := ask(g, "broken", false); err != nil {
				t.Errorf("broken, after the cooldown: %v", err)
			}
		})
	}
	wg.Wait()
	if c.hits() != 3 {
		t.Errorf("c: %d requests, want 3 (one probe of four requests)", c.hits())
	}
	if got := askOK(t, g, "heals", a); !slices.Equal(got, []string{"a 200"}) {
		t.Errorf("the probe: attempts %q, want a's answer", got)
	}
	askOK(t, g, "heals", a)
	if a.hits() != 4 {
		t.Errorf("a: %d requests, want 4 (closed after the probe)", a.hits())
	}
	waitMetrics(t, g, map[string]float64{
		`modelgate_circuit_state{provider="a"}`:        0,
		`modelgate_circuit_state{provider="c"}`:        1,
		`modelgate_circuit_opened_total{provider="a"}`: 1,
		`modelgate_circuit_opened_total{provider="c"}`: 2,
	})
}

// TestCircuitCountsBrokenStreams: a stream the vendor breaks off after its
// first chunk is not retried (the client had bytes), but it is the
// provider's failure: a vendor whose streams always break trips its
// circuit, and the next stream goes to the other provider whole.
func TestCircuitCountsBrokenStreams(t *testing.T) {
	e, f := newFaultVendor(t, "e", always(fault{kind: fCut})), newFaultVendor(t, "f", always(answers))
	cfg := faultConfig(t)
	deploy(cfg, "cuts", e, f)
	cfg.Circuit = config.Circuit{Failures: 2, Cooldown: config.Duration(time.Minute)}
	g := serveFaults(t, cfg)
	for i := range 2 {
		if _, _, chunks, err := ask(g, "cuts", true); err == nil || chunks == 0 {
			t.Fatalf("stream %d: %d chunks, err %v; want chunks then an error event", i, chunks, err)
		}
	}
	content, _, _, err := ask(g, "cuts", true)
	if err != nil || content != f.answer() {
		t.Fatalf("after two broken streams: %q, %v; want f's whole answer", content, err)
	}
	if e.hits() != 2 || f.hits() != 1 {
		t.Errorf("hits e %d, f %d; want 2, 1 (e's circuit open)", e.hits(), f.hits())
	}
}
