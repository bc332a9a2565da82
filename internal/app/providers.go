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
		var (
			ch      provider.Chatter
			models  = served[i]
			owner   = p.OwnedBy
			created int64
		)
		switch p.Type {
		case "demo":
			dp := demo.New(o.Now)
			dp.VideoDelay = max(time.Duration(cfg.Video.DemoDelay), time.Nanosecond) // 0: at once
			ch, created = dp, demoCreated
			if owner == "" {
				owner = demo.OwnedBy
			}
			for _, m := range models {
				if !demo.Known(m.UpstreamID()) {
					return nil, fmt.Errorf("provider %s (line %d): the demo provider has no model %q (it has %s)",
						p.Name, m.Line, m.UpstreamID(), strings.Join(demo.Models, ", "))
				}
			}
		case "openai":
			c, err := openaicompat.New(openaicompat.Options{
				Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, Headers: p.Headers,
				Timeout: time.Duration(p.Timeout), IdleTimeout: time.Duration(p.IdleTimeout),
				UserAgent: "modelgate/" + o.Version, HTTPClient: upstreamClient(p, o),
			})
			if err != nil {
				return nil, err
			}
			ch = c
			if owner == "" {
				owner = ownerFromURL(p.BaseURL, p.Name)
			}
		case "azure":
			c, err := openaicompat.New(openaicompat.Options{
				Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, Headers: p.Headers,
				Timeout: time.Duration(p.Timeout), IdleTimeout: time.Duration(p.IdleTimeout),
				UserAgent: "modelgate/" + o.Version, HTTPClient: upstreamClient(p, o),
				Azure: true, APIVersion: p.APIVersion,
			})
			if err != nil {
				return nil, err
			}
			ch = c
			if owner == "" {
				owner = "azure"
			}
		case "anthropic":
			c, err := newAnthropic(p, cat, tokens, o)
			if err != nil {
				return nil, err
			}
			ch = c
			if owner == "" {
				owner = "anthropic"
			}
		case "gemini":
			c, err := newGemini(p, cfg.Fetch, o)
			if err != nil {
				return nil, err
			}
			ch = c
			if owner == "" {
				owner = "google"
			}
		default:
			return nil, fmt.Errorf("provider %s: unknown type %q", p.Name, p.Type)
		}
		for _, m := range models {
			deps = append(deps, route.Deployment{Provider: p.Name, Chatter: ch, Model: m.ID, Upstream: m.UpstreamID(),
				Priority: p.Priority, Weight: p.Weight, OwnedBy: owner, OwnerSet: p.OwnedBy != "" || p.Type == "demo", Created: created})
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
