package responses

import (
	"encoding/json"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// toolParam is a Responses function tool: the flat shape
// {type, name, description, parameters, strict}.
type toolParam struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description *string         `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

// toolEcho is a function tool as the Response object shows it.
type toolEcho struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description *string         `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

// tools converts the request's tools to chat function tools: function
// tools as they are, namespace, custom and local_shell tools as toolmap.go
// says. Other built-in tools (file_search, computer_use,
// code_interpreter, image_generation, mcp, tool_search, ...) run inside
// OpenAI; chat vendors have none of them, so they are refused. It returns
// the chat tools, the map from their names back to the client's tools and
// the tools as the Response shows them.
func (r *Request) tools() (*toolSet, []any, *apierr.Error) {
	set := &toolSet{}
	echo := []any{}
	for i, raw := range r.w.Tools {
		param := at("tools", i)
		if kind(raw) != "object" {
			return nil, nil, wrongType(param, "an object", raw)
		}
		var t toolParam
		if err := json.Unmarshal(raw, &t); err != nil {
			e := typeError(err)
			e.Param = param + "." + e.Param
			return nil, nil, e
		}
		var e *apierr.Error
		switch t.Type {
		case "function":
			var def oaiwire.FunctionDef
			if def, e = functionDef(param, &t); e == nil {
				e = set.add(param, origin{kind: kindFunction, name: t.Name}, def)
			}
			params := t.Parameters
			if params == nil {
				params = json.RawMessage("null")
			}
			echo = append(echo, toolEcho{Type: "function", Name: t.Name, Description: t.Description, Parameters: params, Strict: t.Strict})
		case "namespace":
			e = set.namespace(param, raw)
			echo = append(echo, raw)
		case "custom":
			e = set.custom(param, "", raw)
			echo = append(echo, raw)
		case "local_shell":
			e = set.add(param, origin{kind: kindLocalShell, name: kindLocalShell},
				oaiwire.FunctionDef{Description: localShellDescription, Parameters: json.RawMessage(localShellParameters)})
			echo = append(echo, raw)
		case "":
			e = missing(param + ".type")
		default:
			if isSearch(t.Type) {
				e = set.search(param, raw)
				echo = append(echo, raw)
				break
			}
			e = apierr.Invalid(param+".type", "The tool type '%s' is not supported for the model '%s': the gateway "+
				"translates this model's Responses API to chat completions, which have function tools only (the gateway "+
				"maps function, custom, namespace and local_shell tools to them). Built-in tools (file_search, computer_use, "+
				"code_interpreter, image_generation, mcp, tool_search, ...) work only with models the gateway passes through "+
				"to OpenAI.", t.Type, r.Model)
		}
		if e != nil {
			return nil, nil, e
		}
	}
	return set, echo, nil
}

// toolChoice converts tool_choice: none, auto and required are the same in
// chat; {type: function or custom, name} names one tool; {type:
// allowed_tools} narrows the tools sent to the listed ones. Built-in tool
// choices are refused like built-in tools. It returns the chat tool_choice
// (nil when absent) and the tools, possibly narrowed.
func (r *Request) toolChoice(set *toolSet) (json.RawMessage, []oaiwire.Tool, *apierr.Error) {
	tools := set.chat
	raw := r.w.ToolChoice
	switch kind(raw) {
	case "nothing", "null":
		return nil, tools, nil
	case "string":
		var s string
		_ = json.Unmarshal(raw, &s)
		switch s {
		case "none", "auto", "required":
			return raw, tools, nil
		}
		return nil, nil, apierr.Invalid("tool_choice", "Invalid value for 'tool_choice': '%s'. Supported values are: 'none', 'auto', 'required'.", s)
	}
	type named struct {
		Type      string `json:"type"`
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	}
	var c struct {
		named
		Mode  string  `json:"mode"`
		Tools []named `json:"tools"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		e := typeError(err)
		e.Param = "tool_choice." + e.Param
		return nil, nil, e
	}
	// find is the chat name of the function or custom tool n names.
	find := func(n named) (string, bool) {
		want := kindFunction
		if n.Type == "custom" {
			want = kindCustom
		}
		for _, t := range tools {
			o := set.names.of(t.Function.Name)
			if o.kind == want && o.name == n.Name && (n.Namespace == "" || n.Namespace == o.namespace) {
				return t.Function.Name, true
			}
		}
		return "", false
	}
	switch c.Type {
	case "function", "custom":
		if c.Name == "" {
			return nil, nil, missing("tool_choice.name")
		}
		name, ok := find(c.named)
		if !ok {
			return nil, nil, apierr.Invalid("tool_choice", "Tool choice '%s' not found in 'tools' parameter.", c.Name)
		}
		b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": name}})
		return b, tools, nil
	case "allowed_tools":
		if c.Mode != "auto" && c.Mode != "required" {
			return nil, nil, apierr.Invalid("tool_choice.mode", "Invalid value for 'tool_choice.mode': '%s'. Supported values are: 'auto', 'required'.", c.Mode)
		}
		var kept []oaiwire.Tool
		for i, a := range c.Tools {
			name, ok := find(a)
			if (a.Type != "function" && a.Type != "custom") || !ok {
				return nil, nil, apierr.Invalid(at("tool_choice.tools", i), "Allowed tool '%s' (type '%s') is not one of the function tools in 'tools'.", a.Name, a.Type)
			}
			for _, t := range tools {
				if t.Function.Name == name {
					kept = append(kept, t)
				}
			}
		}
		mode, _ := json.Marshal(c.Mode)
		return mode, kept, nil
	case "":
		return nil, nil, missing("tool_choice.type")
	}
	return nil, nil, apierr.Invalid("tool_choice.type", "The tool choice type '%s' is not supported for the model '%s': the gateway "+
		"translates this model's Responses API to chat completions, which have function tools only.", c.Type, r.Model)
}

// formatParam is text.format.
type formatParam struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description *string         `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Strict      *bool           `json:"strict"`
}

// format converts text.format to response_format: text → none,
// json_object → json_object, json_schema → json_schema{name, schema,
// strict, description}. It also returns text as the Response shows it.
func (r *Request) format() (*oaiwire.ResponseFormat, json.RawMessage, *apierr.Error) {
	def := json.RawMessage(`{"format":{"type":"text"}}`)
	if r.w.Text == nil || !present(r.w.Text.Format) {
		return nil, def, nil
	}
	raw := r.w.Text.Format
	if kind(raw) != "object" {
		return nil, nil, wrongType("text.format", "an object", raw)
	}
	var f formatParam
	if err := json.Unmarshal(raw, &f); err != nil {
		e := typeError(err)
		e.Param = "text.format." + e.Param
		return nil, nil, e
	}
	echo, _ := json.Marshal(map[string]json.RawMessage{"format": raw})
	switch f.Type {
	case "text":
		return nil, echo, nil
	case "json_object":
		return &oaiwire.ResponseFormat{Type: "json_object"}, echo, nil
	case "json_schema":
		if f.Name == "" {
			return nil, nil, missing("text.format.name")
		}
		if kind(f.Schema) != "object" {
			if !present(f.Schema) {
				return nil, nil, missing("text.format.schema")
			}
			return nil, nil, wrongType("text.format.schema", "an object", f.Schema)
		}
		js := &oaiwire.JSONSchema{Name: f.Name, Schema: f.Schema, Strict: f.Strict}
		if f.Description != nil {
			js.Description = *f.Description
		}
		return &oaiwire.ResponseFormat{Type: "json_schema", JSONSchema: js}, echo, nil
	case "":
		return nil, nil, missing("text.format.type")
	}
	return nil, nil, apierr.Invalid("text.format.type", "Invalid value for 'text.format.type': '%s'. Supported values are: 'text', 'json_object', 'json_schema'.", f.Type)
}
