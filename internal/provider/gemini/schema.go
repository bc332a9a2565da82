package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
)

// schemaKeys are the members of Gemini's Schema object (an OpenAPI 3.0
// subset) that function parameters and responseSchema may use. Everything
// else a JSON schema may hold ("additionalProperties", "$schema", "strict",
// "$comment", ...) is rejected by the API, so cleanSchema drops it.
var schemaKeys = map[string]bool{
	"anyOf": true, "default": true, "description": true, "enum": true, "example": true, "format": true,
	"items": true, "maxItems": true, "maxLength": true, "maxProperties": true, "maximum": true,
	"minItems": true, "minLength": true, "minProperties": true, "minimum": true, "nullable": true,
	"pattern": true, "properties": true, "propertyOrdering": true, "required": true, "title": true, "type": true,
}

// maxSchemaDepth bounds nesting after $ref expansion; a recursive schema
// (a tree type) exceeds it, and Gemini's Schema cannot express recursion.
const maxSchemaDepth = 32

// errRecursive reports a schema that refers to itself.
var errRecursive = errors.New("the schema refers to itself, which Gemini cannot express")

// cleanSchema returns a JSON schema as a Gemini Schema object: local $ref
// pointers (#/$defs/x, #/definitions/x) are expanded in place, "const"
// becomes a one-value "enum", "oneOf" becomes "anyOf", a null member of a
// type list or anyOf becomes "nullable", and unsupported members are
// dropped, at every depth.
func cleanSchema(raw json.RawMessage) (json.RawMessage, error) {
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, errors.New("schema is not an object")
	}
	s := &schemaCleaner{defs: map[string]any{}}
	for _, k := range []string{"definitions", "$defs"} {
		if d, ok := v[k].(map[string]any); ok {
			for name, def := range d {
				s.defs["#/"+k+"/"+name] = def
			}
		}
	}
	out, err := s.clean(v, 0)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

type schemaCleaner struct {
	defs map[string]any // "#/$defs/name" → schema
}

func (s *schemaCleaner) clean(m map[string]any, depth int) (map[string]any, error) {
	if depth > maxSchemaDepth {
		return nil, errRecursive
	}
	if ref, ok := m["$ref"].(string); ok {
		def, ok := s.defs[ref].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q names no local definition", ref)
		}
		merged := make(map[string]any, len(def)+len(m))
		for k, v := range def {
			merged[k] = v
		}
		for k, v := range m { // a $ref's siblings (description, ...) win
			if k != "$ref" {
				merged[k] = v
			}
		}
		m = merged
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch k {
		case "const":
			if _, has := m["enum"]; !has {
				out["enum"] = []any{v}
			}
			continue
		case "oneOf":
			if _, has := m["anyOf"]; has {
				continue
			}
			k = "anyOf"
		}
		if !schemaKeys[k] {
			continue
		}
		var err error
		switch k {
		case "properties":
			if props, ok := v.(map[string]any); ok {
				cp := make(map[string]any, len(props))
				for name, p := range props {
					if pm, ok := p.(map[string]any); ok {
						if cp[name], err = s.clean(pm, depth+1); err != nil {
							return nil, err
						}
					}
				}
				v = cp
			}
		case "items":
			if pm, ok := v.(map[string]any); ok {
				if v, err = s.clean(pm, depth+1); err != nil {
					return nil, err
				}
			}
		case "anyOf":
			if v, err = s.anyOf(v, out, depth); err != nil {
				return nil, err
			}
			if v == nil {
				continue
			}
		case "type":
			_, hasAlt := m["anyOf"]
			if _, ok := m["oneOf"]; ok {
				hasAlt = true
			}
			if v = nullableType(v, out, hasAlt); v == nil {
				continue
			}
		}
		out[k] = v
	}
	fixEnum(out)
	if one, ok := out["anyOf"].([]any); ok && len(one) == 1 { // {anyOf:[X, null]} is X, nullable
		delete(out, "anyOf")
		for k, v := range one[0].(map[string]any) {
			if _, has := out[k]; !has {
				out[k] = v
			}
		}
	}
	return out, nil
}

// anyOf cleans each alternative; {"type":"null"} alternatives set nullable
// on out instead. It returns nil when no alternative is left.
func (s *schemaCleaner) anyOf(v any, out map[string]any, depth int) (any, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, nil
	}
	cl := make([]any, 0, len(list))
	for _, alt := range list {
		pm, ok := alt.(map[string]any)
		if !ok {
			continue
		}
		if t, _ := pm["type"].(string); t == "null" && len(pm) == 1 {
			out["nullable"] = true
			continue
		}
		c, err := s.clean(pm, depth+1)
		if err != nil {
			return nil, err
		}
		cl = append(cl, c)
	}
	if len(cl) == 0 {
		return nil, nil
	}
	return cl, nil
}

// nullableType turns a type list such as ["string","null"] into "string"
// with nullable set on out. Gemini takes one type, so several non-null
// ones become an anyOf of one-type schemas.
func nullableType(v any, out map[string]any, hasAlt bool) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	var types []string
	for _, t := range list {
		ts, _ := t.(string)
		switch {
		case ts == "null":
			out["nullable"] = true
		case ts != "":
			types = append(types, ts)
		}
	}
	if len(types) == 0 {
		return nil
	}
	if len(types) == 1 {
		return types[0]
	}
	if !hasAlt {
		alts := make([]any, len(types))
		for i, t := range types {
			alts[i] = map[string]any{"type": t}
		}
		out["anyOf"] = alts
	}
	return nil
}

// fixEnum fits "enum" to Gemini, whose enums are strings of a STRING
// schema: a string enum gets type "string" when it has none; an enum with
// other values (numbers, booleans) is dropped and its values are written
// into the description, so the model still learns them.
func fixEnum(out map[string]any) {
	list, ok := out["enum"].([]any)
	if !ok {
		delete(out, "enum")
		return
	}
	for _, v := range list {
		if _, ok := v.(string); !ok {
			delete(out, "enum")
			b, _ := json.Marshal(list)
			d, _ := out["description"].(string)
			if d != "" {
				d += " "
			}
			out["description"] = d + "One of " + string(b) + "."
			return
		}
	}
	if _, has := out["type"]; !has {
		out["type"] = "string"
	}
}
