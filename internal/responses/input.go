package responses

import (
	"encoding/json"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// inputItem is one element of input, every kind the translation reads.
type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments *string         `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	// Namespace is a function or custom tool call's namespace.
	Namespace string `json:"namespace"`
	// Input is a custom tool call's input.
	Input *string `json:"input"`
	// Action is a local shell call's action; ID is also a local shell
	// call output's call id.
	Action json.RawMessage `json:"action"`
	ID     string          `json:"id"`
	// EncryptedContent is a reasoning item's (see reasoning.go).
	EncryptedContent *string `json:"encrypted_content"`
}

// inputPart is one content part of a message or a function call output.
type inputPart struct {
	Type       string          `json:"type"`
	Text       *string         `json:"text"`
	Refusal    *string         `json:"refusal"`
	ImageURL   *string         `json:"image_url"`
	FileID     *string         `json:"file_id"`
	Detail     string          `json:"detail"`
	FileData   *string         `json:"file_data"`
	FileURL    *string         `json:"file_url"`
	Filename   string          `json:"filename"`
	InputAudio json.RawMessage `json:"input_audio"`
}

// messages turns instructions and input into chat messages:
//
//	instructions                          → a leading system message
//	input string                          → one user message
//	message (user, system, developer)     → the same role; input_text → text, input_image → image_url,
//	                                        input_file (file_data) → file, input_audio → input_audio
//	message (assistant)                   → assistant text (output_text) and refusal
//	function_call                         → a tool call on the assistant message before it (or a new one),
//	                                        named as the tool's chat function (see toolmap.go)
//	custom_tool_call, local_shell_call    → the same, with arguments {"input": ...} or the exec action's
//	function_call_output                  → a tool message
//	custom_tool_call_output, local_shell_call_output → a tool message
//	reasoning                             → its thinking blocks (when the gateway made its
//	                                        encrypted_content) on the next assistant message, else dropped
//	web_search_call                       → dropped (the vendor searched; its answer holds what it found)
//	item_reference, built-in tool items   → 400: they need the vendor's stored state or tools
func (r *Request) messages() ([]oaiwire.Message, *apierr.Error) {
	var out []oaiwire.Message
	if r.w.Instructions != nil && *r.w.Instructions != "" {
		out = append(out, oaiwire.Message{Role: "system", Content: textContent(*r.w.Instructions)})
	}
	in := r.w.Input
	switch kind(in) {
	case "nothing", "null":
		return nil, missing("input")
	case "string":
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			return nil, apierr.Invalid("input", "Invalid string for 'input'.")
		}
		return append(out, oaiwire.Message{Role: "user", Content: textContent(s)}), nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(in, &items); err != nil {
		return nil, wrongType("input", "a string or an array of input items", in)
	}
	if len(items) == 0 {
		return nil, apierr.Invalid("input", "Invalid 'input': empty array. Expected at least one input item.")
	}
	var thinking []oaiwire.ThinkingBlock // from reasoning items, for the next assistant turn
	for i, raw := range items {
		param := at("input", i)
		if kind(raw) != "object" {
			return nil, wrongType(param, "an object", raw)
		}
		var it inputItem
		if err := json.Unmarshal(raw, &it); err != nil {
			e := typeError(err)
			e.Param = param + "." + e.Param
			e.Message = "Invalid '" + param + "': " + e.Message
			return nil, e
		}
		typ := it.Type
		if typ == "" && it.Role != "" {
			typ = "message"
		}
		var e *apierr.Error
		switch typ {
		case "message":
			out, e = appendMessage(out, param, &it)
		case "function_call", "custom_tool_call", "local_shell_call":
			out, e = appendCall(out, param, typ, &it)
		case "function_call_output", "custom_tool_call_output":
			out, e = appendOutput(out, param, &it)
		case "local_shell_call_output":
			if it.CallID == "" {
				it.CallID = it.ID
			}
			out, e = appendOutput(out, param, &it)
		case "web_search_call":
			// The vendor's own search in an earlier turn: what it found is
			// in the answer that followed.
		case "reasoning":
			thinking = append(thinking, openBlocks(it.EncryptedContent)...)
		case "":
			e = missing(param + ".type")
		case "item_reference":
			e = apierr.Invalid(param, "Invalid '%s': item references are not supported for the model '%s': the gateway "+
				"translates this model's Responses API to chat completions and stores no items. Send the items themselves.", param, r.Model)
		default:
			e = apierr.Invalid(param+".type", "Input items of type '%s' are not supported for the model '%s': the gateway "+
				"translates this model's Responses API to chat completions, which have messages, function calls and "+
				"function call outputs only.", typ, r.Model)
		}
		if e != nil {
			return nil, e
		}
		if n := len(out); n > 0 && typ != "reasoning" && typ != "web_search_call" && len(thinking) > 0 {
			if out[n-1].Role == "assistant" {
				out[n-1].ThinkingBlocks = append(out[n-1].ThinkingBlocks, thinking...)
			}
			thinking = nil // what follows no assistant turn goes nowhere
		}
	}
	return out, nil
}

func textContent(s string) oaiwire.Content { return oaiwire.Content{Text: &s} }

func appendMessage(out []oaiwire.Message, param string, it *inputItem) ([]oaiwire.Message, *apierr.Error) {
	switch it.Role {
	case "user", "system", "developer":
		c, e := userContent(param+".content", it.Content, it.Role == "user")
		if e != nil {
			return nil, e
		}
		return append(out, oaiwire.Message{Role: it.Role, Content: c}), nil
	case "assistant":
		text, refusal, e := assistantContent(param+".content", it.Content)
		if e != nil {
			return nil, e
		}
		m := oaiwire.Message{Role: "assistant", Refusal: refusal}
		if text != "" || refusal == "" {
			m.Content = textContent(text)
		}
		return append(out, m), nil
	case "":
		return nil, missing(param + ".role")
	}
	return nil, apierr.Invalid(param+".role", "Invalid value for '%s.role': '%s'. Supported values are: 'user', 'assistant', 'system', 'developer'.", param, it.Role)
}

// userContent converts a user, system or developer message's content; only
// user messages may hold more than text.
func userContent(param string, raw json.RawMessage, user bool) (oaiwire.Content, *apierr.Error) {
	switch kind(raw) {
	case "string":
		var s string
		_ = json.Unmarshal(raw, &s)
		return textContent(s), nil
	case "array":
	case "nothing", "null":
		return oaiwire.Content{}, missing(param)
	default:
		return oaiwire.Content{}, wrongType(param, "a string or an array of content parts", raw)
	}
	parts, e := decodeParts(param, raw)
	if e != nil {
		return oaiwire.Content{}, e
	}
	out := make([]oaiwire.Part, 0, len(parts))
	for j, p := range parts {
		pp := at(param, j)
		switch p.Type {
		case "input_text", "output_text", "text":
			if p.Text == nil {
				return oaiwire.Content{}, missing(pp + ".text")
			}
			out = append(out, oaiwire.Part{Type: "text", Text: *p.Text})
			continue
		}
		if !user {
			return oaiwire.Content{}, apierr.Invalid(pp+".type", "Invalid value for '%s.type': '%s'. System and developer messages hold text only.", pp, p.Type)
		}
		part, e := mediaPart(pp, p)
		if e != nil {
			return oaiwire.Content{}, e
		}
		out = append(out, part)
	}
	if len(out) == 1 && out[0].Type == "text" {
		return textContent(out[0].Text), nil
	}
	if len(out) == 0 {
		return textContent(""), nil
	}
	return oaiwire.Content{Parts: out}, nil
}

// mediaPart converts an image, file or audio part of a user message.
func mediaPart(pp string, p inputPart) (oaiwire.Part, *apierr.Error) {
	switch p.Type {
	case "input_image":
		if p.ImageURL == nil || *p.ImageURL == "" {
			if p.FileID != nil {
				return oaiwire.Part{}, apierr.Invalid(pp+".file_id", "Images given by file_id are not supported for this model: "+
					"the gateway has no Files API. Send image_url (an https or data: URL) instead.")
			}
			return oaiwire.Part{}, missing(pp + ".image_url")
		}
		switch p.Detail {
		case "", "auto", "low", "high":
		default:
			return oaiwire.Part{}, apierr.Invalid(pp+".detail", "Invalid value for '%s.detail': '%s'. Supported values are: 'auto', 'low', 'high'.", pp, p.Detail)
		}
		return oaiwire.Part{Type: "image_url", ImageURL: &oaiwire.ImageURL{URL: *p.ImageURL, Detail: p.Detail}}, nil
	case "input_file":
		if p.FileData == nil || *p.FileData == "" {
			return oaiwire.Part{}, apierr.Invalid(pp, "Files given by file_id or file_url are not supported for this model: "+
				"the gateway has no Files API. Send file_data (base64) with a filename instead.")
		}
		f, _ := json.Marshal(struct {
			FileData string `json:"file_data"`
			Filename string `json:"filename,omitempty"`
		}{*p.FileData, p.Filename})
		return oaiwire.Part{Type: "file", File: f}, nil
	case "input_audio":
		if !present(p.InputAudio) {
			return oaiwire.Part{}, missing(pp + ".input_audio")
		}
		return oaiwire.Part{Type: "input_audio", InputAudio: p.InputAudio}, nil
	case "":
		return oaiwire.Part{}, missing(pp + ".type")
	}
	return oaiwire.Part{}, apierr.Invalid(pp+".type", "Invalid value for '%s.type': '%s'. Supported values are: 'input_text', 'input_image', 'input_file', 'input_audio'.", pp, p.Type)
}

// assistantContent joins an assistant message's text and refusal parts.
func assistantContent(param string, raw json.RawMessage) (text, refusal string, e *apierr.Error) {
	switch kind(raw) {
	case "string":
		_ = json.Unmarshal(raw, &text)
		return text, "", nil
	case "array":
	case "nothing", "null":
		return "", "", missing(param)
	default:
		return "", "", wrongType(param, "a string or an array of content parts", raw)
	}
	parts, e := decodeParts(param, raw)
	if e != nil {
		return "", "", e
	}
	var t, r strings.Builder
	for j, p := range parts {
		switch {
		case (p.Type == "output_text" || p.Type == "input_text" || p.Type == "text") && p.Text != nil:
			t.WriteString(*p.Text)
		case p.Type == "refusal" && p.Refusal != nil:
			r.WriteString(*p.Refusal)
		default:
			pp := at(param, j)
			return "", "", apierr.Invalid(pp+".type", "Invalid value for '%s.type': '%s'. Assistant messages hold output_text and refusal parts.", pp, p.Type)
		}
	}
	return t.String(), r.String(), nil
}

func decodeParts(param string, raw json.RawMessage) ([]inputPart, *apierr.Error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, wrongType(param, "an array of content parts", raw)
	}
	parts := make([]inputPart, len(items))
	for j, el := range items {
		pp := at(param, j)
		if kind(el) != "object" {
			return nil, wrongType(pp, "an object", el)
		}
		if err := json.Unmarshal(el, &parts[j]); err != nil {
			e := typeError(err)
			e.Param = pp + "." + e.Param
			return nil, e
		}
	}
	return parts, nil
}

// appendCall adds a function, custom tool or local shell call (typ) to the
// assistant message just before it (parallel calls, or text followed by
// calls), or starts one.
func appendCall(out []oaiwire.Message, param, typ string, it *inputItem) ([]oaiwire.Message, *apierr.Error) {
	if it.CallID == "" {
		return nil, missing(param + ".call_id")
	}
	o := origin{kind: kindFunction, namespace: it.Namespace, name: it.Name}
	var args string
	switch typ {
	case "function_call":
		switch {
		case it.Name == "":
			return nil, missing(param + ".name")
		case it.Arguments == nil:
			return nil, missing(param + ".arguments")
		}
		args = *it.Arguments
	case "custom_tool_call":
		switch {
		case it.Name == "":
			return nil, missing(param + ".name")
		case it.Input == nil:
			return nil, missing(param + ".input")
		}
		o.kind = kindCustom
		b, _ := json.Marshal(map[string]string{"input": *it.Input})
		args = string(b)
	default: // local_shell_call
		a, e := shellArguments(param+".action", it.Action)
		if e != nil {
			return nil, e
		}
		o, args = origin{kind: kindLocalShell, name: kindLocalShell}, a
	}
	tc := oaiwire.ToolCall{ID: it.CallID, Type: "function", Function: oaiwire.FunctionCall{Name: chatName(o), Arguments: args}}
	if n := len(out); n > 0 && out[n-1].Role == "assistant" {
		out[n-1].ToolCalls = append(out[n-1].ToolCalls, tc)
		return out, nil
	}
	return append(out, oaiwire.Message{Role: "assistant", ToolCalls: []oaiwire.ToolCall{tc}}), nil
}

// appendOutput adds a function call's result as a tool message.
func appendOutput(out []oaiwire.Message, param string, it *inputItem) ([]oaiwire.Message, *apierr.Error) {
	if it.CallID == "" {
		return nil, missing(param + ".call_id")
	}
	var text string
	switch kind(it.Output) {
	case "string":
		_ = json.Unmarshal(it.Output, &text)
	case "array":
		parts, e := decodeParts(param+".output", it.Output)
		if e != nil {
			return nil, e
		}
		var b strings.Builder
		for j, p := range parts {
			if (p.Type != "input_text" && p.Type != "output_text" && p.Type != "text") || p.Text == nil {
				pp := at(param+".output", j)
				return nil, apierr.Invalid(pp+".type", "Invalid value for '%s.type': '%s'. Function call outputs hold text only for this model "+
					"(the gateway translates its Responses API to chat completions, whose tool results are text).", pp, p.Type)
			}
			b.WriteString(*p.Text)
		}
		text = b.String()
	case "nothing", "null":
		return nil, missing(param + ".output")
	default:
		return nil, wrongType(param+".output", "a string or an array of content parts", it.Output)
	}
	return append(out, oaiwire.Message{Role: "tool", ToolCallID: it.CallID, Content: textContent(text)}), nil
}
