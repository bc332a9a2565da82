package app_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/config"
)

// TestFailoverFirstByteTimeout: routing.first_byte_timeout (200ms) ends a
// try that has sent nothing, and the next provider answers; the charge is
// b's answer and the prompt a had, in the record, X-Modelgate-Cost and
// the stream's trailer alike. A model's own first_byte_timeout (2s, a
// reasoning model slow to start) overrides it: its slow vendor answers.
func TestFailoverFirstByteTimeout(t *testing.T) {
	slow := fault{kind: fSlow, delay: 3 * time.Second}
	a, b := newFaultVendor(t, "a", always(slow)), newFaultVendor(t, "b", always(answers))
	c, d := newFaultVendor(t, "c", always(fault{kind: fSlow, delay: 400 * time.Millisecond})), newFaultVendor(t, "d", always(answers))
	cfg := faultConfig(t)
	deploy(cfg, faultModel, a, b)
	deploy(cfg, "thinker", c, d)
	cfg.Routing.FirstByteTimeout = config.Duration(200 * time.Millisecond)
	thinks := config.Duration(2 * time.Second)
	cfg.Models[1].FirstByteTimeout = &thinks
	for i := range cfg.Providers {
		cfg.Providers[i].IdleTimeout = config.Duration(5 * time.Second) // the first-byte timeouts alone cut the waits short
	}
	g := serveFaults(t, cfg)
	want := answerCost + promptEstimate(t, faultModel)

	content, raw, _, err := ask(g, faultModel, false)
	if err != nil || content != b.answer() {
		t.Fatalf("got %q, %v; want b's answer", content, err)
	}
	rec := g.record(raw.Header.Get("X-Request-Id"))
	if got := tried(rec); !slices.Equal(got, []string{"a 0 upstream_timeout", "b 200"}) {
		t.Errorf("attempts %q", got)
	}
	if rec.Cost != want || raw.Header.Get("X-Modelgate-Cost") != want.String() {
		t.Errorf("charged %s, X-Modelgate-Cost %q; want %s", rec.Cost, raw.Header.Get("X-Modelgate-Cost"), want)
	}

	resp, body := g.post("/v1/chat/completions", "application/json", g.keys["default"],
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"Hello"}]}`))
	if resp.StatusCode != 200 || !strings.Contains(string(body), b.answer()) || !strings.HasSuffix(string(body), "data: [DONE]\n\n") {
		t.Fatalf("stream: %d %s", resp.StatusCode, body)
	}
	rec = g.record(resp.Header.Get("X-Request-Id"))
	if tr := resp.Trailer.Get("X-Modelgate-Cost"); rec.Cost != want || tr != want.String() {
		t.Errorf("stream: charged %s, trailer X-Modelgate-Cost %q; want %s", rec.Cost, tr, want)
	}

	if got := askOK(t, g, "thinker", c); !slices.Equal(got, []string{"c 200"}) {
		t.Errorf("thinker: attempts %q, want c's answer", got)
	}
	if a.hits() != 2 || b.hits() != 2 || c.hits() != 1 || d.hits() != 0 {
		t.Errorf("hits: a %d, b %d, c %d, d %d; want 2, 2, 1, 0", a.hits(), b.hits(), c.hits(), d.hits())
	}
}
