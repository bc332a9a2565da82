package demo

import (
	"encoding/hex"
	"encoding/json"
	"sort"
)

// pickTool decides whether to answer with a tool call: only when tools are
// offered, tool_choice does not forbid it, and the last turn is the user's
// (after a tool result the demo answers in text).
func pickTool(r *request, sum [32]byte) *toolCall {
	if len(r.Tools) == 0 || len(r.Messages) == 0 || r.Messages[len(r.Messages)-1].Role == "tool" {
		return nil
	}
	var choice string
	if json.Unmarshal(r.ToolChoice, &choice) == nil && choice == "none" {
		return nil
	}
	name, params := "", json.RawMessage(nil)
	var named struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(r.ToolChoice, &named) == nil && named.Function.Name != "" {
		name = named.Function.Name
	}
	for _, t := range r.Tools {
		if t.Function.Name == "" {
			continue
		}
		if name == "" || t.Function.Name == name {
			name, params = t.Function.Name, t.Function.Parameters
			break
		}
	}
	if name == "" {
		return nil
	}
	return &toolCall{id: "call_demo" + hex.EncodeToString(sum[:8]), name: name, args: sampleArgs(params)}
}

// sampleArgs builds deterministic arguments that satisfy a JSON schema's
// required properties (all properties when none are required).
func sampleArgs(schema json.RawMessage) string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	names := s.Required
	if len(names) == 0 {
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	args := make(map[string]any, len(names))
	for _, n := range names {
		args[n] = sampleValue(s.Properties[n])
	}
	b, _ := json.Marshal(args) // map keys are sorted: deterministic
	return string(b)
}

func sampleValue(schema json.RawMessage) any {
	var s struct {
		Type any   `json:"type"`
		Enum []any `json:"enum"`
	}
	_ = json.Unmarshal(schema, &s)
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	typ, _ := s.Type.(string)
	if list, ok := s.Type.([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	switch typ {
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	case "null":
		return nil
	default:
		return "demo"
	}
}
