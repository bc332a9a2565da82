package responses

import (
	"encoding/json"
	"fmt"

	"github.com/modelgate/modelgate/internal/surcharge"
)

// What a pass-through request makes the vendor bill that its body does not
// show the gateway: context stored at the vendor, built-in tools and
// service tiers (see internal/surcharge).

// Unsized names the first part of the request that makes the vendor bill
// input whose size the gateway cannot know: a conversation, a stored
// prompt, an item reference, or a file given by id or URL (its text or
// pages). "" when the body holds all the input (previous_response_id is
// sized from what the gateway recorded of the earlier response, not here).
func (r *Request) Unsized() string {
	switch {
	case present(r.w.Conversation):
		return "conversation"
	case present(r.w.Prompt):
		return "prompt"
	}
	if kind(r.w.Input) != "array" {
		return ""
	}
	var items []json.RawMessage
	if json.Unmarshal(r.w.Input, &items) != nil {
		return ""
	}
	for i, raw := range items {
		var it inputItem
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		param := at("input", i)
		switch it.Type {
		case "item_reference":
			return param
		case "function_call_output", "custom_tool_call_output":
			if p := unsizedParts(param+".output", it.Output); p != "" {
				return p
			}
		case "", "message":
			if p := unsizedParts(param+".content", it.Content); p != "" {
				return p
			}
		}
	}
	return ""
}

// unsizedParts names the first content part of raw (an array of parts;
// anything else has none) that is a file by id or URL.
func unsizedParts(param string, raw json.RawMessage) string {
	if kind(raw) != "array" {
		return ""
	}
	var parts []inputPart
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	for j, p := range parts {
		if p.Type != "input_file" {
			continue
		}
		switch {
		case p.FileID != nil && *p.FileID != "":
			return fmt.Sprintf("%s[%d].file_id", param, j)
		case p.FileURL != nil && *p.FileURL != "":
			return fmt.Sprintf("%s[%d].file_url", param, j)
		}
	}
	return ""
}

// builtinTool is the part of a tool the surcharges read.
type builtinTool struct {
	Type    string `json:"type"`
	Model   string `json:"model"`
	Size    string `json:"size"`
	Quality string `json:"quality"`
}

// Ask is what the request asks the vendor for beyond tokens: its service
// tier, its built-in tools (every tool but the client's own: function and
// custom tools, namespaces of them, and local_shell, which the client
// runs) and max_tool_calls. defaultCalls is the group's bound for
// tool calls (0: the gateway's).
func (r *Request) Ask(defaultCalls int64) surcharge.Ask {
	a := surcharge.Ask{DefaultCalls: defaultCalls}
	if r.w.ServiceTier != nil {
		a.Tier = *r.w.ServiceTier
	}
	if r.w.MaxToolCalls != nil {
		a.MaxToolCalls = *r.w.MaxToolCalls
	}
	for i, raw := range r.w.Tools {
		var t builtinTool
		if json.Unmarshal(raw, &t) != nil {
			continue // not an object: the vendor refuses it
		}
		switch t.Type {
		case "function", "custom", "namespace", "local_shell":
			continue
		}
		a.Tools = append(a.Tools, surcharge.Tool{Param: at("tools", i) + ".type", Type: t.Type,
			Model: t.Model, Size: t.Size, Quality: t.Quality})
	}
	return a
}

// FileImages counts the input images given by file id: the gateway
// reserves for each as for an image sent by URL, since the vendor counts
// an image's tokens from its size, which has a ceiling.
func (r *Request) FileImages() int64 {
	if kind(r.w.Input) != "array" {
		return 0
	}
	var items []struct {
		Content json.RawMessage `json:"content"`
		Output  json.RawMessage `json:"output"`
	}
	if json.Unmarshal(r.w.Input, &items) != nil {
		return 0
	}
	var n int64
	for _, it := range items {
		for _, raw := range [2]json.RawMessage{it.Content, it.Output} {
			var parts []inputPart
			if kind(raw) != "array" || json.Unmarshal(raw, &parts) != nil {
				continue
			}
			for _, p := range parts {
				if p.Type == "input_image" && p.FileID != nil && *p.FileID != "" {
					n++
				}
			}
		}
	}
	return n
}
