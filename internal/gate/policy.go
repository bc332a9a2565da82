package gate

import (
	"path"

	"github.com/modelgate/modelgate/internal/money"
)

// Policy knows which public models each group may use. It is computed once
// from the groups' glob patterns and the servable models, so the per-request
// check is a map lookup.
type Policy struct {
	allowed map[string]map[string]struct{}
	rules   map[string]Rules
}

// NewPolicy matches every group's patterns (path.Match syntax) against the
// model ids. Invalid patterns match nothing (the config check reports them).
func NewPolicy(groups map[string][]string, models []string) *Policy {
	p := &Policy{allowed: make(map[string]map[string]struct{}, len(groups))}
	for g, patterns := range groups {
		set := make(map[string]struct{})
		for _, m := range models {
			for _, pat := range patterns {
				// A lone * matches every id, vendor ids with a slash
				// (meta-llama/...) included, which path.Match's * would not.
				if ok, err := path.Match(pat, m); pat == "*" || ok && err == nil {
					set[m] = struct{}{}
					break
				}
			}
		}
		p.allowed[g] = set
	}
	return p
}

// Allows reports whether group may use model. An unknown group allows nothing.
func (p *Policy) Allows(group, model string) bool {
	_, ok := p.allowed[group][model]
	return ok
}

// Rules are a group's rules for requests whose cost their body does not
// show (the config's groups.G.responses).
type Rules struct {
	// AllowUnsized lets through context the gateway cannot size
	// (conversation, stored prompts, file ids), reserving Reserve more.
	AllowUnsized bool
	Reserve      money.Micros
	// MaxToolCalls bounds built-in tool calls when the client sets no
	// max_tool_calls (0: the gateway's default).
	MaxToolCalls int64
	// Limits are the rate limits of each of the group's keys that has
	// none of its own (the config's groups.G.limits).
	Limits Limits
}

// WithRules sets the groups' rules (groups not listed have the zero
// Rules) and returns p; call it once, before p serves requests.
func (p *Policy) WithRules(rules map[string]Rules) *Policy {
	p.rules = rules
	return p
}

// Rules returns group's rules.
func (p *Policy) Rules(group string) Rules { return p.rules[group] }
