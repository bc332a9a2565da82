package route

import (
	"math/rand/v2"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
)

// maxCandidates bounds the deployments of one model a request considers
// (the plan's record of those tried is a bitmask).
const maxCandidates = 64

// Plan is one request's walk over the deployments of its model: Next gives
// the next to try and Report says how the try went. It is a value the
// request owns (no allocation); the zero Plan has no candidates.
type Plan struct {
	r     *Router
	deps  []Deployment // the model's, by priority
	can   func(provider.Chatter) bool
	price string // when set: only deployments billed at this price

	tried uint64 // bit i: deps[i] was tried (or is not a candidate)
	cur   int    // the deployment last given, -1 before the first
	key   int    // its key
	probe bool   // the try is its provider's half-open probe
	again bool   // retry cur with another key (the vendor refused one)
}

// Plan starts a request's walk over the deployments of model that can
// serve it (can reports it of an adapter; nil: all can).
func (r *Router) Plan(model string, can func(provider.Chatter) bool) Plan {
	ds := r.all[model]
	if len(ds) > maxCandidates {
		ds = ds[:maxCandidates]
	}
	return Plan{r: r, deps: ds, can: can, cur: -1}
}

// SamePrice restricts the walk to deployments billed like d (see
// Deployment.PriceKey): for a request whose reservation was made for d and
// cannot be redone.
func (p *Plan) SamePrice(d Deployment) { p.price = d.PriceKey }

// Only restricts the walk further to deployments whose adapter can (for a
// request served one way by its first deployment, which the others must
// serve the same way).
func (p *Plan) Only(can func(provider.Chatter) bool) {
	if prev := p.can; prev != nil {
		p.can = func(c provider.Chatter) bool { return prev(c) && can(c) }
		return
	}
	p.can = can
}

// Has reports whether any deployment of the model can serve the request,
// whatever its health.
func (p *Plan) Has() bool {
	for i := range p.deps {
		if p.candidate(i) {
			return true
		}
	}
	return false
}

func (p *Plan) candidate(i int) bool {
	d := &p.deps[i]
	return (p.can == nil || p.can(d.Chatter)) && (p.price == "" || d.PriceKey == p.price)
}

// Next returns the deployment to try next and the adapter of the key to
// try it with; ok is false when none is left that is available now (every
// candidate tried, or the rest cooling down: see RetryIn).
func (p *Plan) Next() (d Deployment, ch provider.Chatter, ok bool) {
	if p.again {
		p.again = false
		d = p.deps[p.cur]
		p.key = d.state.key()
		return d, d.Keys[p.key], true
	}
	now := p.r.now().UnixNano()
	for {
		i := p.pick(now)
		if i < 0 {
			return Deployment{}, nil, false
		}
		d = p.deps[i]
		claimed, probe := d.state.claim()
		if !claimed {
			continue // another request took the probe between the look and the claim; look again
		}
		p.tried |= 1 << i
		p.cur, p.probe = i, probe
		p.key = d.state.key()
		return d, d.Keys[p.key], true
	}
}

// pick chooses among the untried, available candidates of the lowest tier
// that has any: weighted at random, or the lower latency of two such picks.
func (p *Plan) pick(now int64) int {
	for lo := 0; lo < len(p.deps); {
		hi := lo + 1
		for hi < len(p.deps) && p.deps[hi].Priority == p.deps[lo].Priority {
			hi++
		}
		if i := p.pickIn(lo, hi, now); i >= 0 {
			return i
		}
		lo = hi
	}
	return -1
}

func (p *Plan) usable(i int, now int64) bool {
	if p.tried&(1<<i) != 0 || !p.candidate(i) {
		return false
	}
	ok, _ := p.deps[i].available(now)
	return ok
}

// available is the provider's availability (state.available), and the
// deployment's own cooldown after a 429.
func (d *Deployment) available(now int64) (bool, int64) {
	if u := d.limit.Load(); now < u {
		return false, u
	}
	return d.state.available(now)
}

func (p *Plan) pickIn(lo, hi int, now int64) int {
	total, n, only := 0, 0, -1
	for i := lo; i < hi; i++ {
		if p.usable(i, now) {
			total += p.deps[i].Weight
			n++
			only = i
		}
	}
	switch {
	case n == 0:
		return -1
	case n == 1:
		return only
	}
	a := p.weighted(lo, hi, now, total)
	if !p.r.latency {
		return a
	}
	b := p.weighted(lo, hi, now, total)
	if b != a && p.deps[b].state.ewma.Load() < p.deps[a].state.ewma.Load() {
		return b
	}
	return a
}

func (p *Plan) weighted(lo, hi int, now int64, total int) int {
	n := rand.IntN(total)
	last := -1
	for i := lo; i < hi; i++ {
		if !p.usable(i, now) {
			continue
		}
		if n < p.deps[i].Weight {
			return i
		}
		n -= p.deps[i].Weight
		last = i
	}
	return last
}

// Report records how the last try went: its failure class (see
// provider.Classify), the upstream's Retry-After (0: none) and, for an
// answer, its latency. It updates the provider's health; a vendor that
// refused the key makes the next Next try the provider's next live key.
// The Event says what changed, for the log.
func (p *Plan) Report(f provider.Failure, retryAfter, latency time.Duration) Event {
	if p.cur < 0 {
		return Event{}
	}
	d := &p.deps[p.cur]
	now := p.r.now().UnixNano()
	if retryAfter > 0 && (f == provider.Limited || f == provider.ServerFailed) {
		cool(d.limit, now+int64(min(retryAfter, p.r.health.MaxCooldown)))
	}
	e := d.state.report(p.r.health, now, f, latency, p.key, p.probe)
	p.again = e.KeyOut
	p.probe = false
	return e
}

// Key is the index of the key the last try used (in the provider's
// api_keys order).
func (p *Plan) Key() int { return p.key }

// Release gives back the half-open probe of a try that was given but
// never reported (the request failed in the gateway before its call, or
// its call is a background task's): deferred by every walk, so a probe is
// never held forever.
func (p *Plan) Release() {
	if p.probe && p.cur >= 0 {
		p.deps[p.cur].state.probing.Store(false)
		p.probe = false
	}
}

// Again reports whether the next try is the same provider with another
// key (the vendor refused the last one): it needs no backoff.
func (p *Plan) Again() bool { return p.again }

// Candidates is how many deployments of the model can serve the request,
// whatever their health.
func (p *Plan) Candidates() int {
	n := 0
	for i := range p.deps {
		if p.candidate(i) {
			n++
		}
	}
	return n
}

// Tried is how many distinct deployments the plan has given.
func (p *Plan) Tried() int {
	n := 0
	for i := range p.deps {
		if p.tried&(1<<i) != 0 {
			n++
		}
	}
	return n
}

// RetryIn is how long until a candidate not yet tried becomes available
// again, when Next has none now; candidates already tried count as
// available at once (a client retrying later starts a new walk). It is at
// least one second, the unit of Retry-After.
func (p *Plan) RetryIn() time.Duration {
	now := p.r.now().UnixNano()
	soonest := int64(-1)
	for i := range p.deps {
		if !p.candidate(i) {
			continue
		}
		at := now
		if p.tried&(1<<i) == 0 {
			if ok, u := p.deps[i].available(now); !ok {
				at = u
			}
		}
		if soonest < 0 || at < soonest {
			soonest = at
		}
	}
	wait := time.Duration(soonest - now)
	return max((wait + time.Second - 1).Truncate(time.Second), time.Second)
}

// Health lists every provider's health, in config order.
func (r *Router) Health() []ProviderHealth {
	now := r.now()
	out := make([]ProviderHealth, 0, len(r.states))
	for _, s := range r.states {
		h := ProviderHealth{Name: s.name, Circuit: s.circuit(now.UnixNano()), Failures: int(s.fails.Load()),
			Keys: s.keys, Trips: s.trips.Load(), KeyFaults: s.removed.Load(), Latency: time.Duration(s.ewma.Load())}
		if u := s.until.Load(); u > now.UnixNano() {
			h.Until = time.Unix(0, u)
		}
		for d := s.dead.Load(); d != 0; d &= d - 1 {
			h.DeadKeys++
		}
		out = append(out, h)
	}
	return out
}
