package config

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/surcharge"
)

var (
	providerNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	groupNameRe    = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
)

// Validate runs the semantic checks on a config whose defaults have been
// applied, and returns every problem found (errors and warnings) sorted by
// line. For a config built in code the lines fall back to the Line fields
// (or 0), so it is as useful in tests as on a loaded file.
func (c *Config) Validate() []Problem {
	v := &validator{c: c}
	v.server()
	v.metrics()
	v.routing()
	v.messagesSettings()
	v.telemetrySettings()
	v.providers()
	cat := v.catalog()
	served := v.expand(cat)
	v.groups(served)
	v.billing()
	v.catalogModels()
	v.videoModels(cat, served)
	v.imageTokenModels(cat)
	v.freePrices(cat)
	v.imageStore()
	v.fetchLimits()
	v.usageRetention()
	v.videoSettings()
	v.backgroundSettings()
	v.consoleSettings()
	v.paymentsSettings()
	v.publicURL()
	return sortProblems(v.problems)
}

type validator struct {
	c        *Config
	problems []Problem
	// reported marks, per models entry, the video fields whose values
	// were already reported as malformed (see flag).
	reported map[int]catalog.OverrideFields
}

func (v *validator) errorf(line int, format string, args ...any) {
	v.problems = append(v.problems, Problem{Line: line, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) warnf(line int, format string, args ...any) {
	v.problems = append(v.problems, Problem{Line: line, Warning: true, Message: fmt.Sprintf(format, args...)})
}

// positive reports a duration that is zero or negative (a zero left after
// ApplyDefaults was written explicitly).
func (v *validator) positive(line int, name string, d Duration) {
	if d <= 0 {
		v.errorf(line, "%s must be a positive duration (like 30s), got %s", name, d)
	}
}

// server checks the process-wide settings.
func (v *validator) server() {
	c := v.c
	if err := checkListen(c.Listen); err != nil {
		v.errorf(c.line("listen", 0), "listen: %v", err)
	}
	if _, _, err := c.DatabaseKind(); err != nil {
		v.errorf(c.line("database", 0), "database: %v", err)
	}
	if err := CheckRedisURL(c.Redis); err != nil {
		v.errorf(c.line("redis", 0), "redis: %v", err)
	}
	if c.MaxRequestBytes < 1024 {
		v.errorf(c.line("max_request_bytes", 0), "max_request_bytes must be at least 1024, got %d", c.MaxRequestBytes)
	}
	v.positive(c.line("shutdown_timeout", 0), "shutdown_timeout", c.ShutdownTimeout)
	v.positive(c.line("auth_cache_ttl", 0), "auth_cache_ttl", c.AuthCacheTTL)
	v.positive(c.line("read_timeout", 0), "read_timeout", c.ReadTimeout)
	if c.MaxBodyMemory < c.MaxRequestBytes {
		v.errorf(c.line("max_body_memory", 0), "max_body_memory must be at least max_request_bytes (%d), got %d: a body of the largest allowed size could never be read",
			c.MaxRequestBytes, c.MaxBodyMemory)
	}
	v.positive(c.line("write_timeout", 0), "write_timeout", c.WriteTimeout)
	if c.MaxConnections < 0 {
		v.errorf(c.line("max_connections", 0), "max_connections must be 0 (from the process's file limit) or a positive number, got %d", c.MaxConnections)
	}
	if c.DrainTimeout < 0 {
		v.errorf(c.line("drain_timeout", 0), "drain_timeout must be 0 (charge the reservation at once) or a positive duration (like 15s), got %s", c.DrainTimeout)
	}
	if c.GCPercent < 10 {
		v.errorf(c.line("gc_percent", 0), "gc_percent must be at least 10, got %d: below that the collector runs almost without pause", c.GCPercent)
	}
	if c.MemoryLimit != 0 && c.MemoryLimit < c.MaxBodyMemory {
		v.errorf(c.line("memory_limit", 0), "memory_limit must be 0 (none) or at least max_body_memory (%d), got %d: the collector would run without pause once the bodies it admits were in memory",
			c.MaxBodyMemory, c.MemoryLimit)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		v.errorf(c.line("log.level", c.line("log", 0)), "log.level must be one of debug, info, warn, error; got %q", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		v.errorf(c.line("log.format", c.line("log", 0)), "log.format must be text or json; got %q", c.Log.Format)
	}
	if c.Usage.BatchSize < 1 {
		v.errorf(c.line("usage.batch_size", c.line("usage", 0)), "usage.batch_size must be at least 1, got %d", c.Usage.BatchSize)
	}
	v.positive(c.line("usage.flush_interval", c.line("usage", 0)), "usage.flush_interval", c.Usage.FlushInterval)
}

// providers checks each provider on its own and the names across them.
func (v *validator) providers() {
	c := v.c
	if len(c.Providers) == 0 {
		// When the file lists providers that all failed to decode, the
		// decoder's problems already say why.
		if c.line("providers.0", 0) == 0 {
			v.errorf(c.line("providers", 0), "no providers configured; add at least one (for example {name: demo, type: demo})")
		}
		return
	}
	firstLine := map[string]int{}
	for i := range c.Providers {
		p := &c.Providers[i]
		base := "providers." + strconv.Itoa(i) + "."
		at := func(key string) int { return c.line(base+key, p.Line) }

		label := fmt.Sprintf("provider #%d", i+1)
		switch {
		case p.Name == "":
			v.errorf(p.Line, "%s: name is required", label)
		case !providerNameRe.MatchString(p.Name):
			v.errorf(at("name"), "%s: name %q must match [a-z0-9][a-z0-9._-]*", label, p.Name)
		default:
			label = fmt.Sprintf("provider %q", p.Name)
			if first, dup := firstLine[p.Name]; dup && first > 0 {
				v.errorf(at("name"), "%s: duplicate name (first defined at line %d)", label, first)
			} else if dup {
				v.errorf(at("name"), "%s: duplicate name", label)
			} else {
				firstLine[p.Name] = at("name")
			}
		}

		kind, known := providerKinds[p.Type]
		switch {
		case p.Type == "":
			v.errorf(at("type"), "%s: type is required (one of: %s)", label, knownTypes())
		case !known:
			v.errorf(at("type"), "%s: unknown type %q (known: %s)", label, p.Type, knownTypes())
		default:
			v.providerKind(p, kind, label, base, at)
		}

		v.models(p, label, base)
		if p.Priority < 0 {
			v.errorf(at("priority"), "%s: priority must be 0 or more (lower tiers are tried first), got %d", label, p.Priority)
		}
		if p.Weight < 1 {
			v.errorf(at("weight"), "%s: weight must be at least 1, got %d", label, p.Weight)
		}
		v.headers(p, label, base)
		v.positive(at("timeout"), label+": timeout", p.Timeout)
		v.positive(at("idle_timeout"), label+": idle_timeout", p.IdleTimeout)
		if p.ConnectTimeout < 0 {
			v.errorf(at("connect_timeout"), "%s: connect_timeout must not be negative, got %s", label, p.ConnectTimeout)
		}
		if p.Timeout > 0 && p.IdleTimeout > p.Timeout {
			v.warnf(at("idle_timeout"), "%s: idle_timeout (%s) is longer than timeout (%s), so it never triggers", label, p.IdleTimeout, p.Timeout)
		}
	}
}

// providerKind checks the settings whose rules depend on the provider type.
func (v *validator) providerKind(p *Provider, kind providerKind, label, base string, at func(string) int) {
	switch {
	case kind.baseURL == required && p.BaseURL == "":
		v.errorf(at("base_url"), "%s: base_url is required for type %s (e.g. https://api.openai.com/v1)", label, p.Type)
	case kind.baseURL == forbidden && p.BaseURL != "":
		v.errorf(at("base_url"), "%s: type %s does not use base_url; remove it", label, p.Type)
	case p.BaseURL != "":
		// The URL is never repeated: it may carry credentials.
		if b, err := normalizeBaseURL(p.Type, p.BaseURL); err != nil {
			v.errorf(at("base_url"), "%s: %v", label, err)
		} else if b.warning != "" {
			v.warnf(at("base_url"), "%s: %s", label, b.warning)
		}
	}

	if p.APIVersion != "" && p.Type != "azure" {
		v.warnf(at("api_version"), "%s: api_version is only used by type azure", label)
	}
	if p.MaxTokens < 0 {
		v.errorf(at("max_tokens"), "%s: max_tokens must not be negative", label)
	}
	if strings.ContainsAny(p.APIKey, "\r\n\x00") {
		v.errorf(at("api_key"), "%s: api_key contains a line break or NUL", label) // never the value itself
	}
	switch {
	case kind.apiKey == forbidden && p.APIKey != "":
		v.errorf(at("api_key"), "%s: type %s does not use api_key; remove it", label, p.Type)
	case p.APIKey == "" && len(p.APIKeys) == 0 && kind.warnNoKey:
		v.warnf(at("api_key"), "%s: api_key is empty, so requests go upstream without credentials (fine for local servers like Ollama or vLLM)", label)
	case p.APIKey != "" && v.c.given(base+"api_key") && !v.c.fromEnv(base+"api_key"):
		v.warnf(at("api_key"), "%s: api_key is written literally in the file; secrets should come from the environment (api_key: ${VAR})", label)
	}

	v.apiKeys(p, kind, label, base, at)
	if kind.models == required && len(p.Models) == 0 {
		v.errorf(at("models"), "%s: type %s needs at least one model under models:", label, p.Type)
	}
}

// models checks the model ids of one provider.
func (v *validator) models(p *Provider, label, base string) {
	first := map[string]int{}
	for j, m := range p.Models {
		line := m.Line
		if line == 0 {
			line = v.c.line(base+"models."+strconv.Itoa(j), v.c.line(base+"models", p.Line))
		}
		switch {
		case m.ID == "":
			v.errorf(line, "%s: model #%d has an empty id", label, j+1)
		case strings.IndexFunc(m.ID, isSpaceOrControl) >= 0:
			v.errorf(line, "%s: model id %q must not contain spaces or control characters", label, m.ID)
		default:
			if prev, dup := first[m.ID]; dup {
				v.errorf(line, "%s: duplicate model id %q (first listed at line %d)", label, m.ID, prev)
			} else {
				first[m.ID] = line
			}
		}
		if strings.IndexFunc(m.Upstream, isSpaceOrControl) >= 0 {
			v.errorf(line, "%s: upstream id %q must not contain spaces or control characters", label, m.Upstream)
		}
	}
}

// headers checks extra upstream headers; values are never printed (they may be secrets).
func (v *validator) headers(p *Provider, label, base string) {
	names := make([]string, 0, len(p.Headers))
	for name := range p.Headers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		line := v.c.line(base+"headers."+name, v.c.line(base+"headers", p.Line))
		if !isToken(name) {
			v.errorf(line, "%s: header name %q is not a valid HTTP header name", label, name)
		}
		if strings.ContainsAny(p.Headers[name], "\r\n\x00") {
			v.errorf(line, "%s: the value of header %q contains a line break or NUL", label, name)
		}
	}
}

// catalog builds the effective catalog (the built-in one with the models
// section applied), which patterns expand over and served video models are
// checked against; nil (reported) if it cannot be built.
func (v *validator) catalog() *catalog.Catalog {
	cat, err := v.c.Catalog()
	if err != nil {
		v.errorf(0, "%v", err)
		return nil
	}
	return cat
}

// expand resolves the providers' model patterns over cat (reporting their
// problems) and returns what each provider serves.
func (v *validator) expand(cat *catalog.Catalog) [][]ModelRef {
	served, problems := v.c.ExpandModels(cat)
	v.problems = append(v.problems, problems...)
	return served
}

// groups checks group names and patterns, and warns about groups that can
// reach no configured model (served is what each provider serves).
func (v *validator) groups(served [][]ModelRef) {
	c := v.c
	var ids []string
	// A provider that may omit its list (demo) then serves models this
	// package cannot see, so "matches nothing" cannot be decided.
	// The same goes for a provider of unknown type (already an error).
	// Without any provider there is nothing to match; that is reported too.
	unlisted := len(c.Providers) == 0
	for i, p := range c.Providers {
		if kind, ok := providerKinds[p.Type]; (!ok || kind.models != required) && len(p.Models) == 0 {
			unlisted = true
		}
		for _, m := range served[i] {
			ids = append(ids, m.ID)
		}
	}
	names := make([]string, 0, len(c.Groups))
	for name := range c.Groups {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		g := c.Groups[name]
		base := "groups." + name
		gl := g.Line
		if gl == 0 {
			gl = c.line(base, c.line("groups", 0))
		}
		if !groupNameRe.MatchString(name) {
			v.errorf(gl, "group %q: name must match [a-z0-9][a-z0-9_-]*", name)
		}
		v.priceRatio(name, g, gl)
		v.groupResponses(name, g, gl)
		v.groupLimits(name, g, gl)
		if len(g.Models) == 0 {
			v.errorf(c.line(base+".models", gl), "group %q has no models; list glob patterns such as \"*\" or \"gpt-4o*\"", name)
			continue
		}
		var valid []string
		for j, pat := range g.Models {
			pl := c.line(base+".models."+strconv.Itoa(j), gl)
			if pat == "" {
				v.errorf(pl, "group %q: empty model pattern", name)
				continue
			}
			if _, err := path.Match(pat, ""); err != nil {
				v.errorf(pl, "group %q: invalid pattern %q: %v", name, pat, err)
				continue
			}
			valid = append(valid, pat)
		}
		if unlisted || len(valid) == 0 || matchesAny(valid, ids) {
			continue
		}
		v.warnf(gl, "group %q matches no configured model (patterns: %s)", name, strings.Join(valid, ", "))
	}
}

func matchesAny(patterns, ids []string) bool {
	for _, pat := range patterns {
		for _, id := range ids {
			if matchModel(pat, id) {
				return true
			}
		}
	}
	return false
}

func isSpaceOrControl(r rune) bool {
	return r <= ' ' || r == 0x7f || r == 0x85 || r == 0xa0 || r == '\u2028' || r == '\u2029'
}

// isToken reports whether s is an RFC 9110 token, the syntax of header names.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// groupResponses checks a group's responses rules: letting unsized
// requests through needs the reservation that pays for them.
func (v *validator) groupResponses(name string, g Group, gl int) {
	c, r := v.c, g.Responses
	base := "groups." + name + ".responses"
	at := func(key string) int { return c.line(base+"."+key, c.line(base, gl)) }
	switch {
	case r.Reserve < 0:
		v.errorf(at("reserve"), "group %q: responses.reserve must not be negative, got %s", name, catalog.FormatPrice(r.Reserve.Micros()))
	case r.AllowUnsized && r.Reserve == 0:
		v.errorf(at("allow_unsized"), "group %q: responses.allow_unsized needs responses.reserve: the amount each such request "+
			"reserves, since the gateway cannot see what the vendor will bill for it (e.g. reserve: 2.00)", name)
	case !r.AllowUnsized && r.Reserve > 0:
		v.warnf(at("reserve"), "group %q: responses.reserve is used only with responses.allow_unsized: true", name)
	}
	if r.MaxToolCalls < 0 {
		v.errorf(at("max_tool_calls"), "group %q: responses.max_tool_calls must be 0 (the default, %d) or more, got %d",
			name, surcharge.DefaultMaxToolCalls, r.MaxToolCalls)
	}
}

// groupLimits checks a group's rate limits: counts, 0 for none.
func (v *validator) groupLimits(name string, g Group, gl int) {
	c := v.c
	base := "groups." + name + ".limits"
	for _, l := range []struct {
		key string
		n   int64
	}{{"rpm", g.Limits.RPM}, {"tpm", g.Limits.TPM}, {"concurrency", g.Limits.Concurrency}} {
		if l.n < 0 {
			v.errorf(c.line(base+"."+l.key, c.line(base, gl)), "group %q: limits.%s must be 0 (no limit) or more, got %d", name, l.key, l.n)
		}
	}
}
