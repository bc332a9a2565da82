// Package route maps a public model id to the deployments that serve it (a
// provider plus the vendor's model id) and picks one per request: the lowest
// priority tier first, weighted at random inside the tier. Failover, retries
// and circuit breaking build on this in a later issue.
package route

import (
	"math/rand/v2"
	"sort"

	"github.com/modelgate/modelgate/internal/provider"
)

// Deployment is one way to serve a public model.
type Deployment struct {
	Provider string           // provider name from the config
	Chatter  provider.Chatter // the adapter
	Model    string           // public model id
	Upstream string           // the vendor's id for it
	Priority int              // lower is tried first
	Weight   int              // share inside the priority tier, >= 1
	OwnedBy  string           // vendor label shown in /v1/models
	OwnerSet bool             // OwnedBy came from the config, not a guess from the base URL
	Created  int64            // Unix time shown in /v1/models
}

// Model is what /v1/models shows for a public id.
type Model struct {
	ID      string
	OwnedBy string
	Created int64
}

// Router is immutable once built and safe for concurrent use.
type Router struct {
	tiers  map[string][]Deployment // the lowest-priority tier of each model
	all    map[string][]Deployment // every deployment of each model, by priority
	models []Model                 // sorted by id
	byID   map[string]Model
}

// New builds a router from every configured deployment.
func New(deps []Deployment) *Router {
	all := make(map[string][]Deployment)
	for _, d := range deps {
		if d.Weight < 1 {
			d.Weight = 1
		}
		all[d.Model] = append(all[d.Model], d)
	}
	r := &Router{tiers: make(map[string][]Deployment, len(all)), all: all, byID: make(map[string]Model, len(all))}
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
