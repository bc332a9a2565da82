package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Routing bounds each request's tries across the providers of its model:
// zero fields take the defaults below (see route.Retry and route.Health).
type Routing struct {
	MaxAttempts int      `yaml:"max_attempts"` // tries in all for one request, across candidates (default 3)
	Backoff     Duration `yaml:"backoff"`      // before the second try; doubles each time, with jitter (default 50ms)
	MaxBackoff  Duration `yaml:"max_backoff"`  // cap on one wait (default 2s)
	Deadline    Duration `yaml:"deadline"`     // no try starts after the request is this old (default 60s)
	// FirstByteTimeout bounds the wait for the first byte of an upstream
	// answer (default: the provider's idle_timeout); models[].first_byte_timeout
	// sets it per model (reasoning models start slowly).
	FirstByteTimeout Duration `yaml:"first_byte_timeout"`
	// MaxCooldown caps how long an upstream's Retry-After takes its
	// provider out of rotation (default 5m).
	MaxCooldown Duration `yaml:"max_cooldown"`
	// Strategy picks inside a priority tier: "weighted" (default: at random
	// by weight) or "latency" (the lower recent latency of two weighted picks).
	Strategy string `yaml:"strategy"`
}

// Circuit configures the per-provider circuit breaker.
type Circuit struct {
	Failures int      `yaml:"failures"` // consecutive failures that open it (default 5)
	Cooldown Duration `yaml:"cooldown"` // how long it stays open before one probe (default 30s)
}

// maxAttemptsLimit bounds routing.max_attempts: more tries than this only
// make a failing request slower.
const maxAttemptsLimit = 10

// Keys is the provider's API keys in rotation order: api_keys, or the one
// api_key (possibly empty, for local servers).
func (p *Provider) Keys() []string {
	if len(p.APIKeys) > 0 {
		return p.APIKeys
	}
	return []string{p.APIKey}
}

// routing checks the routing, circuit and per-model timeout settings.
func (v *validator) routing() {
	c := v.c
	r := c.Routing
	at := func(k string) int { return c.line("routing."+k, c.line("routing", 0)) }
	if r.MaxAttempts < 0 || r.MaxAttempts > maxAttemptsLimit {
		v.errorf(at("max_attempts"), "routing.max_attempts must be 1 to %d (0: the default, 3), got %d", maxAttemptsLimit, r.MaxAttempts)
	}
	for _, d := range []struct {
		key string
		val Duration
	}{{"backoff", r.Backoff}, {"max_backoff", r.MaxBackoff}, {"deadline", r.Deadline},
		{"first_byte_timeout", r.FirstByteTimeout}, {"max_cooldown", r.MaxCooldown}} {
		if d.val < 0 {
			v.errorf(at(d.key), "routing.%s must not be negative, got %s", d.key, d.val)
		}
	}
	if r.Backoff > 0 && r.MaxBackoff > 0 && r.MaxBackoff < r.Backoff {
		v.errorf(at("max_backoff"), "routing.max_backoff (%s) is shorter than routing.backoff (%s)", r.MaxBackoff, r.Backoff)
	}
	switch r.Strategy {
	case "", "weighted", "latency":
	default:
		v.errorf(at("strategy"), "routing.strategy must be weighted or latency, got %q", r.Strategy)
	}
	if c.Circuit.Failures < 0 {
		v.errorf(c.line("circuit.failures", c.line("circuit", 0)), "circuit.failures must be 1 or more (0: the default, 5), got %d", c.Circuit.Failures)
	}
	if c.Circuit.Cooldown < 0 {
		v.errorf(c.line("circuit.cooldown", c.line("circuit", 0)), "circuit.cooldown must not be negative, got %s", c.Circuit.Cooldown)
	}
	for i, m := range c.Models {
		if m.FirstByteTimeout != nil && *m.FirstByteTimeout <= 0 {
			v.errorf(c.line(fmt.Sprintf("models[%d].first_byte_timeout", i), m.Line), "models: %s: first_byte_timeout must be a positive duration, got %s", m.ID, *m.FirstByteTimeout)
		}
	}
}

// apiKeys checks a provider's api_keys list.
func (v *validator) apiKeys(p *Provider, kind providerKind, label, base string, at func(string) int) {
	if len(p.APIKeys) == 0 {
		if p.APIKeys != nil {
			v.errorf(at("api_keys"), "%s: api_keys is empty; list at least one key, or use api_key", label)
		}
		return
	}
	switch {
	case kind.apiKey == forbidden:
		v.errorf(at("api_keys"), "%s: type %s does not use api keys; remove api_keys", label, p.Type)
	case p.APIKey != "":
		v.errorf(at("api_keys"), "%s: give api_key or api_keys, not both", label)
	case len(p.APIKeys) > 64:
		v.errorf(at("api_keys"), "%s: at most 64 api_keys, got %d", label, len(p.APIKeys))
	}
	seen := map[string]bool{}
	for i, k := range p.APIKeys {
		switch {
		case k == "":
			v.errorf(at("api_keys"), "%s: api_keys[%d] is empty (an unset environment variable?)", label, i)
		case strings.ContainsAny(k, "\r\n\x00"):
			v.errorf(at("api_keys"), "%s: api_keys[%d] contains a line break or NUL", label, i) // never the value itself
		case seen[k]:
			v.errorf(at("api_keys"), "%s: api_keys[%d] repeats an earlier key", label, i)
		case v.c.given(base+"api_keys") && !v.c.fromEnv(base+"api_keys."+strconv.Itoa(i)):
			v.warnf(at("api_keys"), "%s: api_keys[%d] is written literally in the file; secrets should come from the environment (${VAR})", label, i)
		}
		seen[k] = true
	}
}
