package main

import (
	"maps"
	"slices"
	"sort"
)

// findTags makes the last pass over every schema. A required member whose
// schema admits null is made optional: the official SDKs leave such members
// out when unset (openai-go's FunctionToolParam.Strict is "required" and
// omitzero), so OpenAI accepts their absence. And for every union it picks
// the member that tells the object branches apart (the discriminator, else
// the member that most branches pin to string values, "type" first on a
// tie) and records which values select each branch.
func (c *compiler) findTags(s *schema, seen map[*schema]bool) {
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	s.required = slices.DeleteFunc(slices.Clone(s.required), func(name string) bool {
		p := s.props[name]
		return p != nil && admitsNull(p)
	})
	if len(s.alts) > 0 {
		tag := s.disc
		if tag == "" {
			tag = guessTag(s.alts)
		}
		if tag != "" {
			s.tag = tag
			s.tags = make([][]string, len(s.alts))
			s.needsTag = make([]bool, len(s.alts))
			for i, a := range s.alts {
				s.tags[i] = tagValues(a, tag, map[*schema]bool{})
				s.needsTag[i] = requires(a, tag, map[*schema]bool{})
			}
		}
	}
	for _, p := range s.props {
		c.findTags(p, seen)
	}
	for _, x := range []*schema{s.addl, s.names, s.items} {
		c.findTags(x, seen)
	}
	for _, x := range s.alts {
		c.findTags(x, seen)
	}
	for _, x := range s.all {
		c.findTags(x, seen)
	}
}

func guessTag(alts []*schema) string {
	score := map[string]int{}
	for _, a := range alts {
		names := map[string]bool{}
		collectTagNames(a, names, map[*schema]bool{})
		for n := range names {
			score[n]++
		}
	}
	best, bestScore := "", 1 // a tag must pin at least two branches
	for _, n := range slices.Sorted(maps.Keys(score)) {
		if sc := score[n]; sc > bestScore || (sc == bestScore && n == "type" && best != "") {
			best, bestScore = n, sc
		}
	}
	return best
}

func collectTagNames(a *schema, names map[string]bool, seen map[*schema]bool) {
	if seen[a] {
		return
	}
	seen[a] = true
	for n, p := range a.props {
		if enumOf(p) != nil {
			names[n] = true
		}
	}
	for _, x := range a.alts {
		collectTagNames(x, names, seen)
	}
}

// tagValues returns the values of member tag that branch a accepts, nil
// when it accepts any (or is not an object at all).
func tagValues(a *schema, tag string, seen map[*schema]bool) []string {
	if seen[a] {
		return nil
	}
	seen[a] = true
	if p := a.props[tag]; p != nil {
		return enumOf(p)
	}
	if len(a.alts) == 0 {
		return nil
	}
	var vals []string
	for _, x := range a.alts {
		if !accepts(x, "object") {
			continue
		}
		v := tagValues(x, tag, seen)
		if v == nil {
			return nil
		}
		vals = append(vals, v...)
	}
	sort.Strings(vals)
	return slices.Compact(vals)
}

// requires reports whether every object a branch allows has member tag.
func requires(a *schema, tag string, seen map[*schema]bool) bool {
	if seen[a] {
		return false
	}
	seen[a] = true
	if slices.Contains(a.required, tag) {
		p := a.props[tag]
		return p == nil || !admitsNull(p)
	}
	if len(a.alts) == 0 {
		return false
	}
	for _, x := range a.alts {
		if accepts(x, "object") && !requires(x, tag, seen) {
			return false
		}
	}
	return true
}

// enumOf returns the string values a schema pins, looking through a
// nullable union (anyOf [enum, null]); nil when it pins none.
func enumOf(s *schema) []string {
	if len(s.enum) > 0 {
		return s.enum
	}
	var vals []string
	for _, a := range s.alts {
		switch {
		case len(a.enum) > 0:
			vals = append(vals, a.enum...)
		case !onlyNull(a):
			return nil
		}
	}
	return vals
}

func onlyNull(s *schema) bool {
	return len(s.types) == 1 && s.types[0] == "null"
}

// admitsNull reports whether null is a valid value of s.
func admitsNull(s *schema) bool {
	if s.nullable || slices.Contains(s.types, "null") {
		return true
	}
	for _, a := range s.alts {
		if admitsNull(a) {
			return true
		}
	}
	return false
}
