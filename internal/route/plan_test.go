package route

import (
	"context"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
)

// fakeChatter is an adapter the router only compares and type-asserts.
type fakeChatter struct{ name string }

func (f *fakeChatter) Chat(context.Context, *provider.ChatRequest) (*provider.ChatResponse, error) {
	return nil, nil
}

func (f *fakeChatter) ChatStream(context.Context, *provider.ChatRequest) (provider.ChatStream, error) {
	return nil, nil
}

// clock is a settable time for the health's cooldowns.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{t: time.Unix(1_800_000_000, 0)} }
func dep(p string, prio int) Deployment {
	return Deployment{Provider: p, Model: "m", Upstream: "m", Priority: prio}
}
func next(p *Plan) bool {
	_, _, ok := p.Next()
	return ok
}
func name(p *Plan) string {
	d, _, _ := p.Next()
	return d.Provider
}

// walk runs a plan to its end, failing every try with f, and returns the
// providers tried in order.
func walk(r *Router, f provider.Failure, retryAfter time.Duration) []string {
	p := r.Plan("m", nil)
	var tried []string
	for {
		d, _, ok := p.Next()
		if !ok {
			return tried
		}
		tried = append(tried, d.Provider)
		p.Report(f, retryAfter, 0)
	}
}

func TestPlanOrder(t *testing.T) {
	c := newClock()
	r := New([]Deployment{dep("backup", 1), dep("a", 0), dep("b", 0), dep("last", 2)}, Options{Now: c.now})
	for range 50 {
		got := walk(r, provider.Limited, 0)
		if len(got) != 4 || got[2] != "backup" || got[3] != "last" || (got[0] != "a" && got[0] != "b") || got[0] == got[1] {
			t.Fatalf("order %v: want the tier-0 pair in either order, then backup, then last", got)
		}
	}
}

func TestCircuit(t *testing.T) {
	c := newClock()
	r := New([]Deployment{dep("a", 0), dep("b", 1)}, Options{Now: c.now, Health: Health{Failures: 3, Cooldown: 10 * time.Second}})
	fail := func() []string {
		p := r.Plan("m", nil)
		d, _, _ := p.Next()
		if d.Provider == "a" {
			p.Report(provider.ServerFailed, 0, 0)
		} else {
			p.Report(provider.Answered, 0, time.Millisecond)
		}
		return []string{d.Provider}
	}
	for i := range 3 {
		if got := fail(); got[0] != "a" {
			t.Fatalf("try %d went to %v before the circuit opened", i, got)
		}
	}
	if h := r.Health()[0]; h.Circuit != Open || h.Trips != 1 || h.Until != c.t.Add(10*time.Second) {
		t.Fatalf("after 3 failures: %+v", h)
	}
	if got := fail(); got[0] != "b" {
		t.Fatalf("open circuit still tried: %v", got)
	}
	c.add(10 * time.Second)
	if h := r.Health()[0]; h.Circuit != HalfOpen {
		t.Fatalf("after the cooldown: %v, want half-open", h.Circuit)
	}
	// One probe at a time: a second request meanwhile goes to b.
	probe := r.Plan("m", nil)
	if d, _, _ := probe.Next(); d.Provider != "a" {
		t.Fatalf("probe went to %s", d.Provider)
	}
	other := r.Plan("m", nil)
	if d, _, _ := other.Next(); d.Provider != "b" {
		t.Fatalf("second request during the probe went to %s", d.Provider)
	}
	if e := probe.Report(provider.ServerFailed, 0, 0); !e.Opened {
		t.Fatalf("failed probe event %+v, want Opened", e)
	}
	if h := r.Health()[0]; h.Circuit != Open || h.Trips != 2 {
		t.Fatalf("failed probe: %+v, want open again", h)
	}
	c.add(10 * time.Second)
	probe = r.Plan("m", nil)
	probe.Next()
	if e := probe.Report(provider.Answered, 0, time.Millisecond); !e.Closed {
		t.Fatalf("good probe event %+v, want Closed", e)
	}
	if h := r.Health()[0]; h.Circuit != Closed || h.Failures != 0 {
		t.Fatalf("good probe: %+v, want closed", h)
	}
}

func TestCircuitIgnoresClientFaults(t *testing.T) {
	c := newClock()
	r := New([]Deployment{dep("a", 0)}, Options{Now: c.now, Health: Health{Failures: 2}})
	for _, f := range []provider.Failure{provider.ClientFault, provider.Gone, provider.Limited, provider.ClientFault} {
		p := r.Plan("m", nil)
		p.Next()
		p.Report(f, 0, 0)
	}
	if h := r.Health()[0]; h.Circuit != Closed || h.Failures != 0 {
		t.Fatalf("client faults counted: %+v", h)
	}
	// A probe given back unreported (the request failed before its call)
	// is not held forever.
	for range 2 {
		p := r.Plan("m", nil)
		p.Next()
		p.Report(provider.Unreachable, 0, 0)
	}
	c.add(time.Minute)
	p := r.Plan("m", nil)
	if _, _, ok := p.Next(); !ok {
		t.Fatal("no probe after the cooldown")
	}
	p.Release()
	if q := r.Plan("m", nil); !next(&q) {
		t.Fatal("released probe still held")
	}
}

func TestRetryAfterCoolsTheDeployment(t *testing.T) {
	c := newClock()
	r := New([]Deployment{dep("a", 0), {Provider: "a", Model: "other", Upstream: "other"}, dep("b", 1)},
		Options{Now: c.now, Health: Health{MaxCooldown: time.Minute}})
	p := r.Plan("m", nil)
	p.Next()
	p.Report(provider.Limited, 365*24*time.Hour, 0) // a year: capped at max_cooldown
	if d, _, _ := p.Next(); d.Provider != "b" {
		t.Fatalf("after a 429 the walk went to %s, want b", d.Provider)
	}
	if q := r.Plan("m", nil); name(&q) != "b" {
		t.Fatal("a cooling deployment was tried")
	}
	if q := r.Plan("other", nil); !next(&q) {
		t.Fatal("the same provider's other model cooled down too")
	}
	only := r.Plan("m", func(ch provider.Chatter) bool { return false })
	if only.Has() {
		t.Fatal("Has with no capable deployment")
	}
	all := New([]Deployment{dep("a", 0)}, Options{Now: c.now, Health: Health{MaxCooldown: time.Minute}})
	p = all.Plan("m", nil)
	p.Next()
	p.Report(provider.Limited, 90*time.Second, 0)
	q := all.Plan("m", nil)
	if _, _, ok := q.Next(); ok {
		t.Fatal("cooling deployment given")
	}
	if got := q.RetryIn(); got != time.Minute {
		t.Fatalf("RetryIn = %s, want the capped cooldown, 1m", got)
	}
	c.add(59*time.Second + time.Millisecond)
	if got := q.RetryIn(); got != time.Second {
		t.Fatalf("RetryIn = %s, want 1s (rounded up)", got)
	}
}

func TestKeyRotation(t *testing.T) {
	c := newClock()
	k0, k1, k2 := &fakeChatter{"k0"}, &fakeChatter{"k1"}, &fakeChatter{"k2"}
	d := dep("a", 0)
	d.Chatter, d.Keys = k0, []provider.Chatter{k0, k1, k2}
	r := New([]Deployment{d, dep("b", 1)}, Options{Now: c.now})
	p := r.Plan("m", nil)
	_, first, _ := p.Next()
	if e := p.Report(provider.AuthFailed, 0, 0); !e.KeyOut || e.Opened {
		t.Fatalf("event %+v, want KeyOut", e)
	}
	if !p.Again() {
		t.Fatal("a refused key did not lead to the next key")
	}
	d2, second, _ := p.Next()
	if d2.Provider != "a" || second == first {
		t.Fatalf("retry went to %s with the same key", d2.Provider)
	}
	p.Report(provider.Answered, 0, time.Millisecond)
	// The refused key stays out of rotation.
	for range 20 {
		q := r.Plan("m", nil)
		if _, ch, _ := q.Next(); ch == first {
			t.Fatal("a refused key is back in rotation")
		}
		q.Report(provider.Answered, 0, 0)
	}
	if h := r.Health()[0]; h.DeadKeys != 1 || h.KeyFaults != 1 {
		t.Fatalf("health %+v, want one key out", h)
	}
	// Every key refused: a provider failure, and the keys come back for
	// the circuit to judge.
	q := r.Plan("m", nil)
	q.Next()
	q.Report(provider.AuthFailed, 0, 0)
	if !q.Again() {
		t.Fatal("the third key was not tried")
	}
	q.Next()
	if e := q.Report(provider.AuthFailed, 0, 0); !e.KeysBack || e.KeyOut {
		t.Fatalf("event %+v, want KeysBack", e)
	}
	if q.Again() {
		t.Fatal("the last key's refusal led to another key")
	}
	if d, _, _ := q.Next(); d.Provider != "b" {
		t.Fatalf("after every key was refused the walk went to %s, want b", d.Provider)
	}
	if h := r.Health()[0]; h.DeadKeys != 0 || h.Failures != 1 {
		t.Fatalf("health %+v, want keys back and one failure", h)
	}
}

func TestLatencyStrategy(t *testing.T) {
	c := newClock()
	r := New([]Deployment{dep("slow", 0), dep("fast", 0)}, Options{Now: c.now, Latency: true})
	for _, x := range []struct {
		name string
		ms   int
	}{{"slow", 900}, {"fast", 50}} {
		for range 8 {
			p := r.Plan("m", nil)
			for {
				d, _, _ := p.Next()
				if d.Provider == x.name {
					p.Report(provider.Answered, 0, time.Duration(x.ms)*time.Millisecond)
					break
				}
				p.Report(provider.ClientFault, 0, 0)
			}
		}
	}
	fast := 0
	for range 1000 {
		p := r.Plan("m", nil)
		if d, _, _ := p.Next(); d.Provider == "fast" {
			fast++
		}
	}
	// Two random picks of two: both are the slow one a quarter of the time.
	if fast < 650 || fast > 850 {
		t.Fatalf("fast chosen %d of 1000, want about 750", fast)
	}
}

func TestRetryDelay(t *testing.T) {
	r := Retry{Backoff: 100 * time.Millisecond, MaxBackoff: 300 * time.Millisecond}.WithDefaults()
	cases := []struct {
		n      int
		lo, hi time.Duration
	}{{1, 0, 0}, {2, 50 * time.Millisecond, 100 * time.Millisecond}, {3, 100 * time.Millisecond, 200 * time.Millisecond},
		{4, 150 * time.Millisecond, 300 * time.Millisecond}, {9, 150 * time.Millisecond, 300 * time.Millisecond}}
	for _, c := range cases {
		for range 100 {
			if d := r.Delay(c.n); d < c.lo || d > c.hi {
				t.Fatalf("Delay(%d) = %s, want in [%s, %s]", c.n, d, c.lo, c.hi)
			}
		}
	}
	if d := (Retry{}).WithDefaults(); d.MaxAttempts != 3 || d.Deadline != time.Minute {
		t.Fatalf("defaults %+v", d)
	}
}

func TestPlanAllocs(t *testing.T) {
	r := New([]Deployment{dep("a", 0), dep("b", 0)})
	if n := testing.AllocsPerRun(100, func() {
		p := r.Plan("m", nil)
		p.Next()
		p.Report(provider.Answered, 0, time.Millisecond)
		p.Release()
	}); n != 0 {
		t.Fatalf("a request's walk allocates %v times", n)
	}
}
