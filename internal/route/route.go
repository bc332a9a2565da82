// Package route maps a public model id to the deployments that serve it (a
// provider plus the vendor's model id) and orders them for one request
// (Plan): the lowest priority tier first, weighted at random inside the
// tier (or the lower recent latency of two such picks), skipping providers
// whose circuit is open or that are cooling down after a Retry-After. It
// keeps each provider's health (health.go): its circuit breaker and which
// of its API keys the vendor refused.
package route

import (
	"math/rand/v2"
	"sort"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
)

// Deployment is one way to serve a public model.
type Deployment struct {
	Provider string           // provider name from the config
	Chatter  provider.Chatter // the adapter (with the provider's first key)
	// Keys are the adapters of each of the provider's API keys, Chatter
	// first; nil or one entry when it has one key.
	Keys []provider.Chatter
	// PriceKey names the price the deployment is billed at (the catalog
	// entry it resolves to): deployments of one model with the same
	// PriceKey cost the same, so a request can move between them under
	// one reservation.
	PriceKey string
	Model    string // public model id
	Upstream string // the vendor's id for it
	Priority int    // lower is tried first
	Weight   int    // share inside the priority tier, >= 1
	OwnedBy  string // vendor label shown in /v1/models
	OwnerSet bool   // OwnedBy came from the config, not a guess from the base URL
	Created  int64  // Unix time shown in /v1/models

	state *state        // its provider's health
	limit *atomic.Int64 // Unix ns: a 429's Retry-After skips it (this model at this provider) until then
}

// Model is what /v1/models shows for a public id.
type Model struct {
	ID      string
	OwnedBy string
	Created int64
}

// Router's routes are immutable once built; its providers' health changes
// as requests report on them. It is safe for concurrent use.
type Router struct {
	tiers  map[string][]Deployment // the lowest-priority tier of each model
	all    map[string][]Deployment // every deployment of each model, by priority
	models []Model                 // sorted by id
	byID   map[string]Model

	health  Health
	states  []*state // one per provider, in the order first seen
	latency bool     // prefer the lower recent latency of two weighted picks
	now     func() time.Time
}

// Options tune a router's choices; the zero value is the defaults.
type Options struct {
	Health Health
	// Latency prefers, inside a tier, the lower recent latency of two
	// weighted random picks (the "power of two choices").
	Latency bool
	Now     func() time.Time // default time.Now
}

// New builds a router from every configured deployment.
func New(deps []Deployment, opts ...Options) *Router {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	states := map[string]*state{}
	var order []*state
	all := make(map[string][]Deployment)
	for _, d := range deps {
		if d.Weight < 1 {
			d.Weight = 1
		}
		if len(d.Keys) == 0 {
			d.Keys = []provider.Chatter{d.Chatter}
		}
		if d.PriceKey == "" {
			d.PriceKey = d.Model
		}
		st := states[d.Provider]
		if st == nil {
			st = &state{name: d.Provider, keys: min(len(d.Keys), 64)}
			states[d.Provider] = st
			order = append(order, st)
		}
		d.state, d.limit = st, new(atomic.Int64)
		all[d.Model] = append(all[d.Model], d)
	}
	r := &Router{tiers: make(map[string][]Deployment, len(all)), all: all, byID: make(map[string]Model, len(all)),
		health: o.Health.withDefaults(), states: order, latency: o.Latency, now: o.Now}
	for id, ds := range all {
		sort.SliceStable(ds, func(i, j int) bool { return ds[i].Priority < ds[j].Priority })
		n := 1
		for n < len(ds) && ds[n].Priority == ds[0].Priority {
			n++
		}
		r.tiers[id] = ds[:n]
		m := Model{ID: id, OwnedBy: ds[0].OwnedBy, Created: ds[0].Created}
		r.byID[id] = m
		r.models = append(r.models, m)
	}
	sort.Slice(r.models, func(i, j int) bool { return r.models[i].ID < r.models[j].ID })
	return r
}

// Pick chooses the deployment for one request.
func (r *Router) Pick(model string) (Deployment, bool) {
	return pick(r.tiers[model])
}

// PickFor chooses among the deployments of model whose adapter can serve
// the endpoint (can reports it, typically by a type assertion such as
// provider.Embedder): the lowest priority tier of those, weighted. ok is
// false when none can; Has then tells an unknown model from one that only
// lacks the capability.
func (r *Router) PickFor(model string, can func(provider.Chatter) bool) (Deployment, bool) {
	var tier []Deployment
	for _, d := range r.all[model] {
		if len(tier) > 0 && d.Priority != tier[0].Priority {
			break
		}
		if can(d.Chatter) {
			tier = append(tier, d)
		}
	}
	return pick(tier)
}

// Has reports whether model is served at all.
func (r *Router) Has(model string) bool { return len(r.all[model]) > 0 }

func pick(tier []Deployment) (Deployment, bool) {
	switch len(tier) {
	case 0:
		return Deployment{}, false
	case 1:
		return tier[0], true
	}
	total := 0
	for _, d := range tier {
		total += d.Weight
	}
	n := rand.IntN(total)
	for _, d := range tier {
		if n < d.Weight {
			return d, true
		}
		n -= d.Weight
	}
	return tier[len(tier)-1], true
}

// Models lists every servable public model, sorted by id.
func (r *Router) Models() []Model { return r.models }

// Model returns one public model.
func (r *Router) Model(id string) (Model, bool) {
	m, ok := r.byID[id]
	return m, ok
}
