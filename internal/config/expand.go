package config

import (
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/modelgate/modelgate/internal/catalog"
)

// AllModels is the pattern "models: all" stands for: every priced catalog
// model of the provider's vendor.
const AllModels = "*"

// IsPattern reports whether a provider's models entry is a glob pattern over
// catalog ids (Go path.Match syntax, as in groups) rather than one model id.
// The word all, alone or as a list entry, means every model.
func IsPattern(id string) bool {
	return id == "all" || strings.ContainsAny(id, "*?[")
}

// hasBaseURL reports whether a provider type is a known one that calls a vendor over HTTP.
func hasBaseURL(typ string) bool {
	kind, ok := providerKinds[typ]
	return ok && kind.baseURL != forbidden
}

// Vendor is the catalog vendor (the owned_by of its models) whose models a
// provider's patterns expand to: owned_by when set; else anthropic for type
// anthropic, google for gemini, openai for azure (Azure OpenAI serves
// OpenAI's models; set owned_by: azure for the catalog's Azure-only models
// such as phi-4), demo for demo; for type openai the vendor behind a
// well-known base_url host (api.groq.com → groq). "" when it cannot be told.
func (p Provider) Vendor() string {
	if p.OwnedBy != "" {
		return p.OwnedBy
	}
	switch p.Type {
	case "anthropic":
		return "anthropic"
	case "gemini":
		return "google"
	case "azure":
		return "openai"
	case "demo":
		return "demo"
	case "openai":
		return VendorFromURL(p.BaseURL)
	}
	return ""
}

// builtinCatalog decodes the embedded catalog once: a Catalog is immutable,
// so every Validate and Catalog call can share it, and decoding it (some
// milliseconds) on each would slow every config check.
var builtinCatalog = sync.OnceValues(catalog.Builtin)

// Catalog is the built-in catalog with the models section applied: the set
// of models a provider's patterns expand over and the gateway prices by.
func (c *Config) Catalog() (*catalog.Catalog, error) {
	b, err := builtinCatalog()
	if err != nil {
		return nil, fmt.Errorf("model catalog: %w", err)
	}
	return b.With(c.CatalogOverrides()), nil
}

// expandable reports whether a catalog model can be served by expanding a
// pattern: it has a price (or is free).
func expandable(m catalog.Model) bool {
	return m.Priced()
}

// ExpandModels resolves every provider's models list against cat (the
// effective catalog, see Catalog): the entries written as ids come first, as
// written; then, for each pattern in order, the expandable catalog models of
// the provider's Vendor whose ids it matches, sorted by id, each served under
// its catalog id (with the vendor's prefix, e.g. Fireworks'
// accounts/fireworks/models/). An id listed explicitly wins over a pattern
// match (its upstream is kept) and no id appears twice. The result is indexed
// like c.Providers; a provider without patterns keeps its list unchanged (an
// empty one stays empty: the demo provider's "every demo model" is app's
// business). The problems are the ones Validate reports: invalid patterns,
// a pattern with an upstream, an unknown vendor (errors) and patterns that
// match nothing (warnings). cat may be nil when no provider has a pattern.
// The lists are the caller's own.
func (c *Config) ExpandModels(cat *catalog.Catalog) ([][]ModelRef, []Problem) {
	out := make([][]ModelRef, len(c.Providers))
	var problems []Problem
	var all []catalog.Model // cat.All(), once
	for i := range c.Providers {
		p := &c.Providers[i]
		var patterns []ModelRef
		explicit := map[string]bool{}
		for _, m := range p.Models {
			if IsPattern(m.ID) {
				patterns = append(patterns, m)
				continue
			}
			if m.Upstream == "" {
				m.Upstream = m.ID
			}
			explicit[m.ID] = true
			out[i] = append(out[i], m)
		}
		if len(patterns) == 0 {
			continue
		}
		if all == nil && cat != nil {
			all = cat.All()
		}
		refs, ps := c.expandPatterns(i, patterns, explicit, all)
		out[i] = append(out[i], refs...)
		problems = append(problems, ps...)
	}
	return out, problems
}

// expandPatterns resolves the patterns of provider i over the catalog
// models all, skipping the ids in explicit (and adding each match to it).
func (c *Config) expandPatterns(i int, patterns []ModelRef, explicit map[string]bool, all []catalog.Model) ([]ModelRef, []Problem) {
	p := &c.Providers[i]
	label := fmt.Sprintf("provider %q", p.Name)
	if p.Name == "" {
		label = fmt.Sprintf("provider #%d", i+1)
	}
	line := func(m ModelRef) int {
		if m.Line > 0 {
			return m.Line
		}
		return c.line(fmt.Sprintf("providers.%d.models", i), p.Line)
	}
	var problems []Problem
	problem := func(m ModelRef, warning bool, format string, args ...any) {
		problems = append(problems, Problem{Line: line(m), Warning: warning, Message: label + ": " + fmt.Sprintf(format, args...)})
	}
	var valid []ModelRef
	for _, m := range patterns {
		switch _, err := path.Match(patternOf(m.ID), ""); {
		case err != nil:
			problem(m, false, "invalid model pattern %q: %v", m.ID, err)
		case m.Upstream != "" && m.Upstream != m.ID:
			problem(m, false, "pattern %q cannot have an upstream (each match is sent under its own id); list models that need one as {id, upstream}", m.ID)
		default:
			valid = append(valid, m)
		}
	}
	if len(valid) == 0 {
		return nil, problems
	}
	vendor := p.Vendor()
	switch {
	case vendor == "":
		problem(valid[0], false, "cannot tell whose catalog models %q means: the base_url host is not a vendor modelgate knows; "+
			"set owned_by to the catalog's vendor name (e.g. openai, meta) or list the models by id", valid[0].ID)
		return nil, problems
	case all == nil:
		problem(valid[0], false, "no model catalog to expand patterns against")
		return nil, problems
	}
	prefix := ""
	if vh, ok := lookupHost(p.BaseURL); ok && p.Type == "openai" {
		prefix = vh.upstreamPrefix
	}
	var refs []ModelRef
	for _, m := range valid {
		pat := patternOf(m.ID)
		matched := 0
		for _, cm := range all {
			if cm.OwnedBy != vendor || !matchModel(pat, cm.ID) || !expandable(cm) {
				continue
			}
			matched++
			if !explicit[cm.ID] {
				explicit[cm.ID] = true
				refs = append(refs, ModelRef{ID: cm.ID, Upstream: prefix + cm.ID, Line: m.Line})
			}
		}
		if matched == 0 {
			problem(m, true, "pattern %q matches no priced %s model in the catalog", m.ID, vendor)
		}
	}
	return refs, problems
}

// matchModel reports whether a catalog id matches a models pattern. As in
// groups, patterns are path.Match globs, whose * stops at "/"; a lone *
// (and all) matches every id, vendor ids with a slash included
// (meta-llama/llama-4-scout-17b-16e-instruct).
func matchModel(pat, id string) bool {
	if pat == AllModels {
		return true
	}
	ok, _ := path.Match(pat, id)
	return ok
}

// patternOf is the path.Match pattern of a models entry.
func patternOf(id string) string {
	if id == "all" {
		return AllModels
	}
	return id
}
