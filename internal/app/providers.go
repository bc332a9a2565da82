package app

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/demo"
	"github.com/modelgate/modelgate/internal/provider/openaicompat"
	"github.com/modelgate/modelgate/internal/route"
)

// demoCreated is the fixed creation time shown for demo models (2026-01-01).
const demoCreated = 1767225600

// Deployments builds one adapter per configured provider and a deployment
// for each model it serves.
func Deployments(cfg *config.Config, o Options) ([]route.Deployment, error) {
	var deps []route.Deployment
	for _, p := range cfg.Providers {
		var (
			ch      provider.Chatter
			models  = p.Models
			owner   = p.OwnedBy
			created int64
		)
		switch p.Type {
		case "demo":
			ch, created = demo.New(o.Now), demoCreated
			if owner == "" {
				owner = demo.OwnedBy
			}
			if len(models) == 0 {
				for _, id := range demo.Models {
					models = append(models, config.ModelRef{ID: id, Upstream: id})
				}
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
				UserAgent: "modelgate/" + o.Version, HTTPClient: o.HTTPClient,
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
				UserAgent: "modelgate/" + o.Version, HTTPClient: o.HTTPClient,
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
			c, err := newAnthropic(p, o)
			if err != nil {
				return nil, err
			}
			ch = c
			if owner == "" {
				owner = "anthropic"
			}
		case "gemini":
			c, err := newGemini(p, o)
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

// vendorHosts labels models by the vendor behind a well-known base URL.
var vendorHosts = []struct{ host, label string }{
	{"openai.com", "openai"},
	{"deepseek.com", "deepseek"},
	{"groq.com", "groq"},
	{"mistral.ai", "mistralai"},
	{"x.ai", "xai"},
	{"openrouter.ai", "openrouter"},
	{"together.xyz", "together"},
	{"fireworks.ai", "fireworks"},
	{"moonshot.ai", "moonshot"},
	{"moonshot.cn", "moonshot"},
	{"perplexity.ai", "perplexity"},
	{"cerebras.ai", "cerebras"},
	{"anthropic.com", "anthropic"},
	{"googleapis.com", "google"},
}

func ownerFromURL(base, fallback string) string {
	u, err := url.Parse(base)
	if err != nil {
		return fallback
	}
	host := u.Hostname()
	for _, v := range vendorHosts {
		if host == v.host || strings.HasSuffix(host, "."+v.host) {
			return v.label
		}
	}
	return fallback
}
