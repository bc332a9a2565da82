package responses

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// Tools chat has no counterpart for by name, turned into function tools
// and back. Codex CLI sends all of them:
//
//	namespace    {type, name, description, tools: [function|custom]}: each member becomes a function
//	             named <namespace>__<tool> (shortened with a hash past the vendors' 64 characters);
//	             the model's calls come back as function_call (custom_tool_call) items with the
//	             member's own name and the namespace, as the Responses API returns them
//	custom       {type, name, description, format}: a function with one string parameter, input
//	             (the format's grammar is told in the description); calls come back as
//	             custom_tool_call items with that input
//	local_shell  a function local_shell taking the command as an array of strings; calls come
//	             back as local_shell_call items with an exec action

// Kinds of client tool a chat function stands for.
const (
	kindFunction   = "function"
	kindCustom     = "custom"
	kindLocalShell = "local_shell"
)

// maxChatName is the longest function name every vendor accepts
// (Anthropic and Gemini: 64 characters of [a-zA-Z0-9_-]).
const maxChatName = 64

// origin is the client tool a chat function stands for.
type origin struct {
	kind      string // kindFunction, kindCustom, kindLocalShell
	namespace string // "" outside a namespace
	name      string // the tool's own name
}

// toolNames maps chat function names to the client tools they stand for;
// a name it does not hold is a plain function of that name.
type toolNames map[string]origin

// of is the client tool the chat function name stands for.
func (n toolNames) of(name string) origin {
	if o, ok := n[name]; ok {
		return o
	}
	return origin{kind: kindFunction, name: name}
}

// chatName is the chat function name that stands for the client tool o.
func chatName(o origin) string {
	if o.kind == kindLocalShell {
		return kindLocalShell
	}
	if o.namespace == "" {
		return o.name
	}
	return flatName(o.namespace, o.name)
}

// flatName joins a namespace and a tool name into one function name that
// fits the vendors' limits: <namespace>__<tool>, with characters outside
// [a-zA-Z0-9_-] replaced and, when that changed the name or it is too
// long, a hash of the original that keeps distinct tools apart.
func flatName(ns, name string) string {
	joined := ns + "__" + name
	var b strings.Builder
	for _, r := range joined {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == joined && len(s) <= maxChatName {
		return s
	}
	sum := sha256.Sum256([]byte(ns + "\x00" + name))
	tag := hex.EncodeToString(sum[:4])
	if len(s) > maxChatName-len(tag)-1 {
		s = s[:maxChatName-len(tag)-1]
	}
	return s + "_" + tag
}

// namespaceParam is a namespace tool.
type namespaceParam struct {
	Type        string            `json:"type"`
	Name        string            `json:"name"`
	Description *string           `json:"description"`
	Tools       []json.RawMessage `json:"tools"`
}

// customParam is a custom (freeform) tool.
type customParam struct {
	Type        string  `json:"type"`
	Name        string  `json:"name"`
	Description *string `json:"description"`
	Format      *struct {
		Type       string `json:"type"` // text or grammar
		Syntax     string `json:"syntax"`
		Definition string `json:"definition"`
	} `json:"format"`
}

// customParameters is the schema of a custom tool's function: one string.
const customParameters = `{"type":"object","properties":{"input":{"type":"string","description":"The tool's whole input, as raw text."}},"required":["input"],"additionalProperties":false}`

// localShellParameters is the schema of the local_shell function.
const localShellParameters = `{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"},` +
	`"description":"The program and its arguments, one string each."},"workdir":{"type":"string","description":"The working directory."},` +
	`"timeout_ms":{"type":"integer","description":"The most milliseconds the command may run."}},"required":["command"]}`

// localShellDescription tells the model what local_shell does.
const localShellDescription = "Runs a command on the user's machine and returns its output."

// toolSet collects the chat tools a request's tools become.
type toolSet struct {
	chat  []oaiwire.Tool
	names toolNames
	seen  map[string]string // chat name → where the request defines it
	// searchOpts is the web search tool's options (nil: none);
	// searchParam names its type ("tools[3].type").
	searchOpts  *oaiwire.WebSearchOptions
	searchParam string
}

// add appends a chat function standing for o, refusing a second tool with
// the same chat name.
func (s *toolSet) add(param string, o origin, def oaiwire.FunctionDef) *apierr.Error {
	def.Name = chatName(o)
	if prev, ok := s.seen[def.Name]; ok {
		return apierr.Invalid(param, "Invalid '%s': the tool name '%s' is already used by %s.", param, def.Name, prev)
	}
	if s.seen == nil {
		s.seen = map[string]string{}
	}
	s.seen[def.Name] = param
	if o.kind != kindFunction || o.namespace != "" {
		if s.names == nil {
			s.names = toolNames{}
		}
		s.names[def.Name] = o
	}
	s.chat = append(s.chat, oaiwire.Tool{Type: "function", Function: def})
	return nil
}

// custom adds a custom tool (in namespace ns, "" none).
func (s *toolSet) custom(param, ns string, raw json.RawMessage) *apierr.Error {
	var t customParam
	if err := json.Unmarshal(raw, &t); err != nil {
		e := typeError(err)
		e.Param = param + "." + e.Param
		return e
	}
	if t.Name == "" {
		return missing(param + ".name")
	}
	desc := ""
	if t.Description != nil {
		desc = *t.Description
	}
	if f := t.Format; f != nil && f.Type == "grammar" && f.Definition != "" {
		syntax := f.Syntax
		if syntax == "" {
			syntax = "given"
		}
		desc += "\n\nThe input must follow this " + syntax + " grammar:\n" + f.Definition
	}
	return s.add(param, origin{kind: kindCustom, namespace: ns, name: t.Name},
		oaiwire.FunctionDef{Description: strings.TrimSpace(desc), Parameters: json.RawMessage(customParameters)})
}

// namespace adds every function and custom tool of a namespace.
func (s *toolSet) namespace(param string, raw json.RawMessage) *apierr.Error {
	var ns namespaceParam
	if err := json.Unmarshal(raw, &ns); err != nil {
		e := typeError(err)
		e.Param = param + "." + e.Param
		return e
	}
	if ns.Name == "" {
		return missing(param + ".name")
	}
	if len(ns.Tools) == 0 {
		return apierr.Invalid(param+".tools", "Invalid '%s.tools': a namespace needs at least one tool.", param)
	}
	for j, el := range ns.Tools {
		pp := at(param+".tools", j)
		if kind(el) != "object" {
			return wrongType(pp, "an object", el)
		}
		var t toolParam
		if err := json.Unmarshal(el, &t); err != nil {
			e := typeError(err)
			e.Param = pp + "." + e.Param
			return e
		}
		switch t.Type {
		case "function":
			def, e := functionDef(pp, &t)
			if e != nil {
				return e
			}
			if ns.Description != nil && *ns.Description != "" {
				def.Description = strings.TrimSpace(*ns.Description + "\n\n" + def.Description)
			}
			if e := s.add(pp, origin{kind: kindFunction, namespace: ns.Name, name: t.Name}, def); e != nil {
				return e
			}
		case "custom":
			if e := s.custom(pp, ns.Name, el); e != nil {
				return e
			}
		case "":
			return missing(pp + ".type")
		default:
			return apierr.Invalid(pp+".type", "Invalid value for '%s.type': '%s'. A namespace holds function and custom tools.", pp, t.Type)
		}
	}
	return nil
}

// functionDef checks a function tool and returns its chat definition
// (without its name, which add sets).
func functionDef(param string, t *toolParam) (oaiwire.FunctionDef, *apierr.Error) {
	if t.Name == "" {
		return oaiwire.FunctionDef{}, missing(param + ".name")
	}
	if present(t.Parameters) && kind(t.Parameters) != "object" {
		return oaiwire.FunctionDef{}, wrongType(param+".parameters", "an object", t.Parameters)
	}
	if !present(t.Parameters) {
		t.Parameters = nil
	}
	def := oaiwire.FunctionDef{Parameters: t.Parameters, Strict: t.Strict}
	if t.Description != nil {
		def.Description = *t.Description
	}
	return def, nil
}
