package main

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// fix is one overlay entry: keywords merged into (or dropped from) the
// schema at a JSON pointer.
type fix struct {
	At   string         `yaml:"at"`
	Why  string         `yaml:"why"`
	Add  map[string]any `yaml:"add"`
	Drop []string       `yaml:"drop"`
}

// load parses the description and applies the overlay to it. An overlay
// pointer that no longer resolves is an error, so a changed description
// cannot silently drop a rule.
func load(spec, overlay []byte) (map[string]any, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		return nil, fmt.Errorf("parse the description: %w", err)
	}
	var fixes []fix
	if err := yaml.Unmarshal(overlay, &fixes); err != nil {
		return nil, fmt.Errorf("parse the overlay: %w", err)
	}
	for _, f := range fixes {
		if f.Why == "" || len(f.Add) == 0 && len(f.Drop) == 0 {
			return nil, fmt.Errorf("overlay %s: every entry needs why, and add or drop", f.At)
		}
		target, err := pointer(doc, f.At)
		if err != nil {
			return nil, fmt.Errorf("overlay: %w", err)
		}
		m, ok := target.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("overlay %s: not a schema object", f.At)
		}
		for _, k := range f.Drop {
			if _, ok := m[k]; !ok {
				return nil, fmt.Errorf("overlay %s: no keyword %q to drop", f.At, k)
			}
			delete(m, k)
		}
		for k, v := range f.Add {
			m[k] = v
		}
	}
	return doc, nil
}

// pointer resolves a JSON pointer (RFC 6901) in doc.
func pointer(doc any, p string) (any, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("%q is not a JSON pointer", p)
	}
	cur := doc
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, fmt.Errorf("%s: no member %q", p, tok)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, fmt.Errorf("%s: no element %q", p, tok)
			}
			cur = v[i]
		default:
			return nil, fmt.Errorf("%s: cannot descend into %q", p, tok)
		}
	}
	return cur, nil
}
