package app

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/demo"
	"github.com/modelgate/modelgate/internal/provider/openaicompat"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// demoCreated is the fixed creation time shown for demo models (2026-01-01).
const demoCreated = 1767225600

// ProviderModels is what each provider serves, indexed like cfg.Providers:
// its models list with patterns and "all" expanded over cat (see
// config.ExpandModels), and every demo model for a demo provider without a
// list. It is the one expansion the gateway, `config check` and `modelgate
// models` all use. Pattern warnings are left to config check; errors (a
// config that was not validated) fail.
func ProviderModels(cfg *config.Config, cat *catalog.Catalog) ([][]config.ModelRef, error) {
	served, problems := cfg.ExpandModels(cat)
	var errs []error
	for _, p := range problems {
		if !p.Warning {
			errs = append(errs, errors.New(p.String()))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for i, p := range cfg.Providers {
		if p.Type == "demo" && len(served[i]) == 0 {
			for _, id := range demo.Models {
				served[i] = append(served[i], config.ModelRef{ID: id, Upstream: id})
			}
		}
	}
	return served, nil
}

// Deployments builds one adapter per configured provider and a deployment
// for each model it serves (see ProviderModels).
func Deployments(cfg *config.Config, o Options) ([]route.Deployment, error) {
	cat, err := Catalog(cfg)
	if err != nil {
		return nil, err
	}
	return deployments(cfg, cat, tokenize.NewSet(), o)
}

// deployments is Deployments over a catalog and token counters the caller
// already has.
func deployments(cfg *config.Config, cat *catalog.Catalog, tokens *tokenize.Set, o Options) ([]route.Deployment, error) {
	served, err := ProviderModels(cfg, cat)
	if err != nil {
		return nil, err
	}
	var deps []route.Deployment
	for i, p := range cfg.Providers {
		// Adapters get the canonical base URL even from a config built in
		// code; an invalid one is left for the adapter to refuse.
		if b, err := p.CanonicalBaseURL(); err == nil {
			p.BaseURL = b
		}
		p.Models = served[i] // what the adapter constructors see, patterns expanded
		var keys []provider.Chatter
		var owner string
		var created int64
		for _, key := range p.Keys() {
			pk := p
			pk.APIKey, pk.APIKeys = key, nil
			ch, o, c, err := newAdapter(cfg, pk, cat, tokens, o)
			if err != nil {
				return nil, err
			}
			keys = append(keys, ch)
			owner, created = o, c
		}
		for _, m := range served[i] {
			if p.Type == "demo" && !demo.Known(m.UpstreamID()) {
				return nil, fmt.Errorf("provider %s (line %d): the demo provider has no model %q (it has %s)",
					p.Name, m.Line, m.UpstreamID(), strings.Join(demo.Models, ", "))
			}
			price := m.ID
			if cm, ok := lookupModel(cat, m.ID, m.UpstreamID()); ok {
				price = cm.ID
			}
			deps = append(deps, route.Deployment{Provider: p.Name, Chatter: keys[0], Keys: keys, PriceKey: price,
				Model: m.ID, Upstream: m.UpstreamID(), Priority: p.Priority, Weight: p.Weight, OwnedBy: owner,
				OwnerSet: p.OwnedBy != "" || p.Type == "demo", Created: created})
		}
	}
	return deps, nil
}

// describe fills in each deployment's listing from the catalog: created,
// and the vendor label when the provider config gives none.
func describe(deps []route.Deployment, cat *catalog.Catalog) {
	for i := range deps {
		m, ok := lookupModel(cat, deps[i].Model, deps[i].Upstream)
		if !ok {
			continue
		}
		if deps[i].Created == 0 {
			deps[i].Created = m.Created
		}
		if !deps[i].OwnerSet && m.OwnedBy != "" {
			deps[i].OwnedBy = m.OwnedBy
		}
	}
}

// ownerFromURL labels models not in the catalog by the vendor behind a
// well-known base URL (api.openai.com → openai, api.mistral.ai → mistral),
// else by fallback.
func ownerFromURL(base, fallback string) string {
	if v := config.VendorFromURL(base); v != "" {
		return v
	}
	return fallback
}

// newAdapter builds provider p's adapter (with its one api_key) and its
// vendor label and listing time.
func newAdapter(cfg *config.Config, p config.Provider, cat *catalog.Catalog, tokens *tokenize.Set, o Options) (ch provider.Chatter, owner string, created int64, err error) {
	owner = p.OwnedBy
	switch p.Type {
	case "demo":
		dp := demo.New(o.Now)
		dp.VideoDelay = max(time.Duration(cfg.Video.DemoDelay), time.Nanosecond) // 0: at once
		ch, created = dp, demoCreated
		if owner == "" {
			owner = demo.OwnedBy
		}
	case "openai", "azure":
		opts := openaicompat.Options{
			Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, Headers: p.Headers,
			Timeout: time.Duration(p.Timeout), IdleTimeout: time.Duration(p.IdleTimeout),
			UserAgent: "modelgate/" + o.Version, HTTPClient: upstreamClient(p, o),
		}
		if p.Type == "azure" {
			opts.Azure, opts.APIVersion = true, p.APIVersion
		}
		c, err := openaicompat.New(opts)
		if err != nil {
			return nil, "", 0, err
		}
		ch = c
		switch {
		case owner != "":
		case p.Type == "azure":
			owner = "azure"
		default:
			owner = ownerFromURL(p.BaseURL, p.Name)
		}
	case "anthropic":
		c, err := newAnthropic(p, cat, tokens, o)
		if err != nil {
			return nil, "", 0, err
		}
		ch = c
		if owner == "" {
			owner = "anthropic"
		}
	case "gemini":
		c, err := newGemini(p, cfg.Fetch, o)
		if err != nil {
			return nil, "", 0, err
		}
		ch = c
		if owner == "" {
			owner = "google"
		}
	default:
		return nil, "", 0, fmt.Errorf("provider %s: unknown type %q", p.Name, p.Type)
	}
	return ch, owner, created, nil
}
