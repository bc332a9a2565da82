package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// schema is one compiled schema: $refs resolved (shared, so recursion is a
// cycle of pointers) and allOf merged.
type schema struct {
	name     string // component name, "" for inline schemas
	done     bool   // fully compiled (false while a recursive $ref is being filled)
	types    []string
	nullable bool
	min, max *float64
	exclMin  bool
	exclMax  bool
	minLen   *int64
	maxLen   *int64
	minItems *int64
	maxItems *int64
	minProps *int64
	maxProps *int64
	enum     []string
	pattern  string
	props    map[string]*schema
	required []string
	addl     *schema
	names    *schema
	items    *schema
	alts     []*schema
	disc     string     // the discriminator's propertyName, when given
	tag      string     // the member that tells alts apart
	tags     [][]string // per alt: the tag values that select it (nil: any)
	needsTag []bool     // per alt: the branch requires the tag member
	all      []*schema  // schemas the value must also match (allOf members that could not be merged)
	id       int32
}

// annotations are keywords that state no rule on a request value.
var annotations = map[string]bool{
	"description": true, "title": true, "default": true, "example": true, "examples": true,
	"deprecated": true, "format": true, "readOnly": true, "writeOnly": true,
	"$recursiveAnchor": true, "externalDocs": true, "contentMediaType": true, "contentEncoding": true,
	// "not" appears only in bodies the gateway does not accept (EditImageBodyJsonParam); it fails below if that changes.
}

type compiler struct {
	schemas map[string]any
	paths   map[string]any
	memo    map[string]*schema
	anchors []*schema // enclosing schemas with $recursiveAnchor
}

func newCompiler(doc map[string]any) *compiler {
	comps, _ := doc["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	paths, _ := doc["paths"].(map[string]any)
	return &compiler{schemas: schemas, paths: paths, memo: map[string]*schema{}}
}

// body compiles the request body schema of one endpoint.
func (c *compiler) body(e Endpoint) (*schema, error) {
	raw, err := pointer(map[string]any{"paths": c.paths},
		"/paths/"+strings.ReplaceAll(e.Path, "/", "~1")+"/post/requestBody/content/"+strings.ReplaceAll(e.Content, "/", "~1")+"/schema")
	if err != nil {
		return nil, err
	}
	s, err := c.schema(raw)
	if err != nil {
		return nil, err
	}
	c.findTags(s, map[*schema]bool{})
	return s, nil
}

func (c *compiler) schema(v any) (*schema, error) {
	if b, ok := v.(bool); ok && b {
		return &schema{done: true}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema %v is not an object", v)
	}
	if ref, ok := m["$ref"].(string); ok {
		if rules := withoutAnnotations(m, "$ref"); len(rules) > 0 {
			return c.fill(&schema{}, map[string]any{"allOf": []any{map[string]any{"$ref": ref}, rules}})
		}
		return c.ref(ref)
	}
	if _, ok := m["$recursiveRef"]; ok {
		if len(c.anchors) == 0 {
			return nil, fmt.Errorf("$recursiveRef outside a $recursiveAnchor schema")
		}
		return c.anchors[len(c.anchors)-1], nil
	}
	return c.fill(&schema{}, m)
}

func withoutAnnotations(m map[string]any, drop string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != drop && !annotations[k] && !strings.HasPrefix(k, "x-") {
			out[k] = v
		}
	}
	return out
}

func (c *compiler) ref(ref string) (*schema, error) {
	name, ok := strings.CutPrefix(ref, "#/components/schemas/")
	if !ok {
		return nil, fmt.Errorf("unsupported $ref %q", ref)
	}
	if s := c.memo[name]; s != nil {
		return s, nil
	}
	raw, ok := c.schemas[name].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q: no such schema", ref)
	}
	s := &schema{name: name}
	c.memo[name] = s
	if a, _ := raw["$recursiveAnchor"].(bool); a {
		c.anchors = append(c.anchors, s)
		defer func() { c.anchors = c.anchors[:len(c.anchors)-1] }()
	}
	if _, err := c.fill(s, raw); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// fill compiles m into s. allOf members are merged in order and the
// schema's own keywords last: the most specific definition of a member
// wins, as the official SDK generators read the description.
func (c *compiler) fill(s *schema, m map[string]any) (*schema, error) {
	own := &schema{done: true}
	if err := c.keywords(own, m); err != nil {
		return nil, err
	}
	acc := own
	if all, ok := m["allOf"].([]any); ok {
		acc = &schema{done: true}
		for i, raw := range all {
			ms, err := c.schema(raw)
			if err != nil {
				return nil, fmt.Errorf("allOf[%d]: %w", i, err)
			}
			merge(acc, ms)
		}
		merge(acc, own)
	}
	name := s.name
	*s = *acc
	s.name, s.done = name, true
	return s, nil
}

func (c *compiler) keywords(s *schema, m map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		var err error
		switch {
		case annotations[k] || strings.HasPrefix(k, "x-") || k == "allOf" || k == "discriminator":
		case k == "type":
			if str, ok := v.(string); ok {
				s.types = []string{str}
			} else {
				s.types, err = stringList(v)
			}
			for _, t := range s.types {
				if typeNames[t] == "" {
					err = fmt.Errorf("unknown type %q", t)
				}
			}
		case k == "nullable":
			s.nullable, _ = v.(bool)
		case k == "enum":
			s.enum, err = stringList(v)
		case k == "const":
			str, ok := v.(string)
			if !ok {
				return fmt.Errorf("const %v: only string constants are supported", v)
			}
			s.enum = []string{str}
		case k == "minimum":
			s.min, err = number(v)
		case k == "maximum":
			s.max, err = number(v)
		case k == "exclusiveMinimum", k == "exclusiveMaximum":
			err = exclusive(s, k, v)
		case k == "minLength":
			s.minLen, err = integer(v)
		case k == "maxLength":
			s.maxLen, err = integer(v)
		case k == "minItems":
			s.minItems, err = integer(v)
		case k == "maxItems":
			s.maxItems, err = integer(v)
		case k == "minProperties":
			s.minProps, err = integer(v)
		case k == "maxProperties":
			s.maxProps, err = integer(v)
		case k == "pattern":
			s.pattern, _ = v.(string)
		case k == "required":
			s.required, err = stringList(v)
		case k == "properties":
			err = c.properties(s, v)
		case k == "items":
			s.items, err = c.schema(v)
		case k == "additionalProperties":
			// false is not enforced: members the description does not know
			// are the vendor's business (see the package comment).
			if _, isBool := v.(bool); !isBool {
				s.addl, err = c.schema(v)
			}
		case k == "propertyNames":
			s.names, err = c.schema(v)
		case k == "anyOf", k == "oneOf":
			err = c.union(s, m, v)
		default:
			return fmt.Errorf("keyword %q is not supported by the generator; teach it before regenerating", k)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

func (c *compiler) properties(s *schema, v any) error {
	pm, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("not an object")
	}
	s.props = map[string]*schema{}
	for _, name := range slices.Sorted(maps.Keys(pm)) {
		ps, err := c.schema(pm[name])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s.props[name] = ps
	}
	return nil
}

// union compiles anyOf or oneOf. Both mean "one of these" here: where
// branches overlap (a plain string next to a string enum) the first that
// matches is taken, as OpenAI's own server does.
func (c *compiler) union(s *schema, m map[string]any, v any) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("not a list")
	}
	if len(s.alts) > 0 {
		return fmt.Errorf("both anyOf and oneOf")
	}
	for i, raw := range list {
		a, err := c.schema(raw)
		if err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
		s.alts = append(s.alts, a)
	}
	if d, ok := m["discriminator"].(map[string]any); ok {
		s.disc, _ = d["propertyName"].(string)
	}
	return nil
}

// merge folds src into dst: src's keywords win, members are replaced whole,
// required lists are joined. What cannot be folded (a second union, a
// schema still being compiled) is kept as a further schema to match.
func merge(dst, src *schema) {
	if !src.done {
		dst.all = append(dst.all, src)
		return
	}
	if src.types != nil {
		dst.types = src.types
	}
	dst.nullable = dst.nullable || src.nullable
	for _, f := range []struct{ d, s **float64 }{{&dst.min, &src.min}, {&dst.max, &src.max}} {
		if *f.s != nil {
			*f.d = *f.s
		}
	}
	dst.exclMin = dst.exclMin || src.exclMin
	dst.exclMax = dst.exclMax || src.exclMax
	for _, f := range []struct{ d, s **int64 }{{&dst.minLen, &src.minLen}, {&dst.maxLen, &src.maxLen},
		{&dst.minItems, &src.minItems}, {&dst.maxItems, &src.maxItems}, {&dst.minProps, &src.minProps}, {&dst.maxProps, &src.maxProps}} {
		if *f.s != nil {
			*f.d = *f.s
		}
	}
	if src.enum != nil {
		dst.enum = src.enum
	}
	if src.pattern != "" {
		dst.pattern = src.pattern
	}
	if src.props != nil {
		props := maps.Clone(dst.props)
		if props == nil {
			props = map[string]*schema{}
		}
		maps.Copy(props, src.props)
		dst.props = props
	}
	for _, r := range src.required {
		if !slices.Contains(dst.required, r) {
			dst.required = append(dst.required, r)
		}
	}
	for _, f := range []struct{ d, s **schema }{{&dst.addl, &src.addl}, {&dst.names, &src.names}, {&dst.items, &src.items}} {
		if *f.s != nil {
			*f.d = *f.s
		}
	}
	if len(src.alts) > 0 {
		if len(dst.alts) == 0 {
			dst.alts, dst.disc = src.alts, src.disc
		} else {
			dst.all = append(dst.all, &schema{done: true, alts: src.alts, disc: src.disc})
		}
	}
	dst.all = append(dst.all, src.all...)
}

func accepts(s *schema, typ string) bool {
	return s.types == nil || slices.Contains(s.types, typ)
}

func stringList(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%v is not a list", v)
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("%v: only strings are supported", x)
		}
		out = append(out, s)
	}
	return out, nil
}

func number(v any) (*float64, error) {
	var f float64
	switch n := v.(type) {
	case int:
		f = float64(n)
	case int64:
		f = float64(n)
	case uint64:
		f = float64(n)
	case float64:
		f = n
	default:
		return nil, fmt.Errorf("%v is not a number", v)
	}
	return &f, nil
}

func integer(v any) (*int64, error) {
	n, ok := v.(int)
	if !ok || n < 0 {
		return nil, fmt.Errorf("%v is not a count", v)
	}
	i := int64(n)
	return &i, nil
}

// exclusive reads exclusiveMinimum/Maximum in both spellings: OpenAPI 3.0's
// boolean next to minimum/maximum, and JSON Schema 2020-12's bound.
func exclusive(s *schema, k string, v any) error {
	lo := k == "exclusiveMinimum"
	if b, ok := v.(bool); ok {
		if lo {
			s.exclMin = b
		} else {
			s.exclMax = b
		}
		return nil
	}
	n, err := number(v)
	if err != nil {
		return err
	}
	if lo {
		s.min, s.exclMin = n, true
	} else {
		s.max, s.exclMax = n, true
	}
	return nil
}
