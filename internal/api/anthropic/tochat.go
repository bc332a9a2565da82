package anthropic

// Messages → chat completions, for models the gateway serves through a
// vendor that speaks OpenAI's chat completions (OpenAI-compatible, Azure,
// Gemini, demo). Anthropic upstreams never come here: they get the client's
// bytes.
//
// | Messages (request)                              | chat completions                                                       |
// |-------------------------------------------------|------------------------------------------------------------------------|
// | model                                           | model                                                                  |
// | system (string or text blocks)                  | one leading system message, block texts joined by a blank line        |
// | messages[] role system (beta)                   | a system message at the same place (text blocks only)                  |
// | user text block                                 | user content part {type: text}                                         |
// | user image, base64 source                       | image_url part with a data: URL (data:<media_type>;base64,<data>)      |
// | user image, url source                          | image_url part with the URL                                            |
// | document, text source                           | text part with the document's text                                     |
// | document, base64 PDF source                     | file part {filename: title or document.pdf, file_data: data: URL}      |
// | document, content source                        | its text and image blocks as parts                                     |
// | assistant text blocks                           | assistant content, texts joined by a blank line                        |
// | assistant tool_use blocks                       | assistant tool_calls (id, function.name, arguments = compact input)   |
// | assistant thinking / redacted_thinking          | dropped                                                                |
// | user tool_result blocks                         | role tool messages (tool_call_id, text blocks joined by a newline),    |
// |                                                 | right after the assistant message, in order                            |
// | images and documents inside a tool_result       | a user message after the tool messages                                 |
// | the same user turn's other blocks               | that same user message, after the tool results' images                 |
// | tool_result is_error                            | dropped (the text says what failed)                                    |
// | tools[] custom (no type, or custom)             | function tools: name, description, input_schema → parameters (as is,   |
// |                                                 | $schema included), strict → strict                                     |
// | tool_choice auto / any / tool / none            | "auto" / "required" / {type: function, function: {name}} / "none"     |
// | tool_choice.disable_parallel_tool_use: true     | parallel_tool_calls: false                                             |
// | max_tokens                                      | max_tokens; max_completion_tokens when the model reasons               |
// | stop_sequences                                  | stop                                                                   |
// | temperature, top_p                              | temperature, top_p (copied)                                            |
// | top_k                                           | dropped                                                                |
// | metadata.user_id                                | user                                                                   |
// | thinking enabled, budget_tokens < 4096          | reasoning_effort "low" (only when the model reasons, else dropped)     |
// | thinking enabled, budget_tokens < 16384         | reasoning_effort "medium" (idem)                                       |
// | thinking enabled, larger budget                 | reasoning_effort "high" (idem)                                         |
// | thinking adaptive                               | reasoning_effort "medium" (idem)                                       |
// | thinking disabled / between_tools               | nothing                                                                |
// | output_config.effort low / medium / high        | reasoning_effort, the same (only when the model reasons; wins over     |
// |                                                 | thinking); xhigh and max → "high"                                      |
// | output_config.format json_schema                | response_format {type: json_schema, json_schema: {name: output, schema}}|
// | stream                                          | stream: true, stream_options: {include_usage: true}                    |
// | cache_control (anywhere), context_management,   | dropped                                                                |
// | service_tier, inference_geo, citations on text  |                                                                        |
// | server tools (any tools[].type but custom)      | refused (400 naming tools.N)                                           |
// | document or search_result asking for citations  | refused                                                                |
// | search_result blocks                            | refused                                                                |
// | container, mcp_servers                          | refused                                                                |
// | server_tool_use, mcp_tool_use, *_tool_result    | refused (a server tool's turn cannot be replayed elsewhere)           |
// | blocks (other than tool_result), container_upload, ... |                                                                 |
// | image or document with a file source            | refused (file ids are Anthropic's)                                     |
// | document with a url source                      | refused (chat file parts take inline data only)                        |

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// chatOptions says what the upstream model and the relay need.
type chatOptions struct {
	// Reasons says the upstream model reasons: thinking and
	// output_config.effort become reasoning_effort, and max_tokens becomes
	// max_completion_tokens.
	Reasons bool
	// Stream asks for a streamed answer with usage in the last chunk.
	Stream bool
}

// toChat translates a validated Messages request into a chat completions
// body, or refuses it with a 400 naming the member that cannot be carried.
func toChat(p *parsed, o chatOptions) ([]byte, *apierr.Error) {
	t := chatTranslator{model: p.Model}
	r := &p.Req
	out := oaiwire.Request{Model: p.Model}
	if rawGiven(r.Container) {
		return nil, t.refuse("container", "a container")
	}
	if rawGiven(r.MCPServers) {
		return nil, t.refuse("mcp_servers", "MCP servers")
	}
	for i := range r.Tools {
		tool := &r.Tools[i]
		if !tool.IsCustom() {
			return nil, t.refuse("tools."+strconv.Itoa(i), fmt.Sprintf("the server tool '%s' (type '%s')", tool.Name, tool.Type))
		}
		var strict *bool
		if tool.Strict != nil {
			strict = tool.Strict
		}
		out.Tools = append(out.Tools, oaiwire.Tool{Type: "function", Function: oaiwire.FunctionDef{
			Name: tool.Name, Description: tool.Description, Parameters: tool.InputSchema, Strict: strict}})
	}
	if r.System != nil {
		s, e := t.systemText(*r.System, "system")
		if e != nil {
			return nil, e
		}
		if s != "" {
			out.Messages = append(out.Messages, oaiwire.Message{Role: "system", Content: chatText(s)})
		}
	}
	for i := range r.Messages {
		msgs, e := t.message(&r.Messages[i], "messages."+strconv.Itoa(i))
		if e != nil {
			return nil, e
		}
		out.Messages = append(out.Messages, msgs...)
	}
	if c := r.ToolChoice; c != nil && len(out.Tools) > 0 {
		out.ToolChoice = toolChoiceJSON(c)
		if c.DisableParallelToolUse != nil && *c.DisableParallelToolUse {
			f := false
			out.ParallelToolCalls = &f
		}
	}
	if r.MaxTokens != nil {
		n := *r.MaxTokens
		if o.Reasons {
			out.MaxCompletionTokens = &n
		} else {
			out.MaxTokens = &n
		}
	}
	out.Stop = r.StopSequences
	out.Temperature, out.TopP = r.Temperature, r.TopP
	if r.Metadata != nil {
		out.User = r.Metadata.UserID
	}
	if o.Reasons {
		out.ReasoningEffort = reasoningEffort(r)
	}
	if oc := r.OutputConfig; oc != nil && oc.Format != nil && oc.Format.Type == "json_schema" {
		out.ResponseFormat = &oaiwire.ResponseFormat{Type: "json_schema",
			JSONSchema: &oaiwire.JSONSchema{Name: "output", Schema: oc.Format.Schema}}
	}
	if o.Stream {
		out.Stream = true
		out.StreamOptions = &oaiwire.StreamOptions{IncludeUsage: true}
	}
	b, err := json.Marshal(&out)
	if err != nil {
		return nil, apierr.Internal(fmt.Errorf("anthropic: encode chat request: %w", err))
	}
	return b, nil
}

// reasoningEffort maps output_config.effort, else thinking, to OpenAI's
// reasoning_effort ("" for none).
func reasoningEffort(r *anthropicwire.MessagesRequest) string {
	if oc := r.OutputConfig; oc != nil && oc.Effort != "" {
		switch oc.Effort {
		case "low", "medium", "high":
			return oc.Effort
		default: // xhigh, max: more than chat vendors generally take
			return "high"
		}
	}
	th := r.Thinking
	if th == nil {
		return ""
	}
	switch th.Type {
	case "enabled":
		budget := int64(0)
		if th.BudgetTokens != nil {
			budget = *th.BudgetTokens
		}
		switch {
		case budget < 4096:
			return "low"
		case budget < 16384:
			return "medium"
		}
		return "high"
	case "adaptive":
		return "medium"
	}
	return ""
}

func toolChoiceJSON(c *anthropicwire.ToolChoice) json.RawMessage {
	switch c.Type {
	case "any":
		return json.RawMessage(`"required"`)
	case "none":
		return json.RawMessage(`"none"`)
	case "tool":
		b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": c.Name}})
		return b
	}
	return json.RawMessage(`"auto"`)
}

// chatTranslator carries what the refusals name.
type chatTranslator struct{ model string }

// refuse is the 400 for a member that cannot be carried to a chat vendor.
func (t chatTranslator) refuse(param, what string) *apierr.Error {
	return apierr.Invalid(param, "'%s' (%s) cannot be translated for the model '%s', which the gateway serves through chat completions.",
		param, what, t.model)
}

// systemText joins the text of system content (a string or text blocks).
func (t chatTranslator) systemText(c anthropicwire.Content, at string) (string, *apierr.Error) {
	if c.Text != nil {
		return *c.Text, nil
	}
	texts := make([]string, 0, len(c.Blocks))
	for j := range c.Blocks {
		b := &c.Blocks[j]
		if b.Type != "text" {
			return "", t.refuse(at+"."+strconv.Itoa(j), blockWhat(b)+" in a system message")
		}
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n\n"), nil
}

// message translates one Messages turn into the chat messages it becomes.
func (t chatTranslator) message(m *anthropicwire.Message, at string) ([]oaiwire.Message, *apierr.Error) {
	switch m.Role {
	case "system":
		s, e := t.systemText(m.Content, at+".content")
		if e != nil {
			return nil, e
		}
		return []oaiwire.Message{{Role: "system", Content: chatText(s)}}, nil
	case "assistant":
		msg, e := t.assistant(m, at)
		if e != nil || msg == nil {
			return nil, e
		}
		return []oaiwire.Message{*msg}, nil
	}
	return t.user(m, at)
}

func (t chatTranslator) assistant(m *anthropicwire.Message, at string) (*oaiwire.Message, *apierr.Error) {
	if m.Content.Text != nil {
		return &oaiwire.Message{Role: "assistant", Content: chatText(*m.Content.Text)}, nil
	}
	var texts []string
	var calls []oaiwire.ToolCall
	for j := range m.Content.Blocks {
		b := &m.Content.Blocks[j]
		bat := at + ".content." + strconv.Itoa(j)
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "thinking", "redacted_thinking":
		case "tool_use":
			args, err := toolArgs(b.Input)
			if err != nil {
				return nil, apierr.Invalid(bat+".input", "Invalid '%s.input': %v.", bat, err)
			}
			calls = append(calls, oaiwire.ToolCall{ID: b.ID, Type: "function",
				Function: oaiwire.FunctionCall{Name: b.Name, Arguments: args}})
		default:
			return nil, t.refuse(bat, blockWhat(b))
		}
	}
	if len(texts) == 0 && len(calls) == 0 {
		return nil, nil // thinking only: nothing a chat vendor can take
	}
	msg := &oaiwire.Message{Role: "assistant", ToolCalls: calls}
	if len(texts) > 0 {
		msg.Content = chatText(strings.Join(texts, "\n\n"))
	}
	return msg, nil
}

// user translates a user turn: its tool results become tool messages, and
// what else it holds (with the tool results' images and documents) one
// user message after them.
func (t chatTranslator) user(m *anthropicwire.Message, at string) ([]oaiwire.Message, *apierr.Error) {
	if m.Content.Text != nil {
		return []oaiwire.Message{{Role: "user", Content: chatText(*m.Content.Text)}}, nil
	}
	var out []oaiwire.Message
	var fromTools, parts []oaiwire.Part
	for j := range m.Content.Blocks {
		b := &m.Content.Blocks[j]
		bat := at + ".content." + strconv.Itoa(j)
		if b.Type != "tool_result" {
			ps, e := t.parts(b, bat)
			if e != nil {
				return nil, e
			}
			parts = append(parts, ps...)
			continue
		}
		text, media, e := t.toolResult(b, bat)
		if e != nil {
			return nil, e
		}
		out = append(out, oaiwire.Message{Role: "tool", ToolCallID: b.ToolUseID, Content: chatText(text)})
		fromTools = append(fromTools, media...)
	}
	if all := append(fromTools, parts...); len(all) > 0 {
		out = append(out, oaiwire.Message{Role: "user", Content: oaiwire.Content{Parts: all}})
	}
	return out, nil
}

// toolResult returns a tool result's text and the image and document parts
// that must follow the tool messages.
func (t chatTranslator) toolResult(b *anthropicwire.Block, at string) (string, []oaiwire.Part, *apierr.Error) {
	if b.Content == nil {
		return "", nil, nil
	}
	if b.Content.Text != nil {
		return *b.Content.Text, nil, nil
	}
	var texts []string
	var media []oaiwire.Part
	for k := range b.Content.Blocks {
		c := &b.Content.Blocks[k]
		cat := at + ".content." + strconv.Itoa(k)
		if c.Type == "text" {
			texts = append(texts, c.Text)
			continue
		}
		if c.Type != "image" && c.Type != "document" {
			return "", nil, t.refuse(cat, blockWhat(c)+" in a tool result")
		}
		ps, e := t.parts(c, cat)
		if e != nil {
			return "", nil, e
		}
		media = append(media, ps...)
	}
	return strings.Join(texts, "\n"), media, nil
}

// parts translates one block of user content into chat content parts.
func (t chatTranslator) parts(b *anthropicwire.Block, at string) ([]oaiwire.Part, *apierr.Error) {
	switch b.Type {
	case "text":
		return []oaiwire.Part{{Type: "text", Text: b.Text}}, nil
	case "image":
		s := b.Source
		switch s.Type {
		case "base64":
			return []oaiwire.Part{{Type: "image_url", ImageURL: &oaiwire.ImageURL{URL: "data:" + s.MediaType + ";base64," + s.Data}}}, nil
		case "url":
			return []oaiwire.Part{{Type: "image_url", ImageURL: &oaiwire.ImageURL{URL: s.URL}}}, nil
		}
		return nil, t.refuse(at+".source", "an image from the Files API")
	case "document":
		return t.document(b, at)
	}
	return nil, t.refuse(at, blockWhat(b))
}

func (t chatTranslator) document(b *anthropicwire.Block, at string) ([]oaiwire.Part, *apierr.Error) {
	if b.CitationsEnabled() {
		return nil, t.refuse(at+".citations", "a document with citations enabled")
	}
	s := b.Source
	switch s.Type {
	case "text":
		return []oaiwire.Part{{Type: "text", Text: s.Data}}, nil
	case "base64":
		name := b.Title
		if name == "" {
			name = "document.pdf"
		}
		file, _ := json.Marshal(map[string]string{"filename": name, "file_data": "data:" + pdfType(s.MediaType) + ";base64," + s.Data})
		return []oaiwire.Part{{Type: "file", File: file}}, nil
	case "content":
		if s.Content == nil {
			return nil, nil
		}
		if s.Content.Text != nil {
			return []oaiwire.Part{{Type: "text", Text: *s.Content.Text}}, nil
		}
		var out []oaiwire.Part
		for k := range s.Content.Blocks {
			c := &s.Content.Blocks[k]
			cat := at + ".source.content." + strconv.Itoa(k)
			if c.Type != "text" && c.Type != "image" {
				return nil, t.refuse(cat, blockWhat(c)+" in a document")
			}
			ps, e := t.parts(c, cat)
			if e != nil {
				return nil, e
			}
			out = append(out, ps...)
		}
		return out, nil
	case "url":
		return nil, t.refuse(at+".source", "a document from a URL")
	}
	return nil, t.refuse(at+".source", "a document from the Files API")
}

func pdfType(mt string) string {
	if mt == "" {
		return "application/pdf"
	}
	return mt
}

// blockWhat names a block for a refusal.
func blockWhat(b *anthropicwire.Block) string {
	switch b.Type {
	case "search_result":
		return "a search_result block"
	case "server_tool_use", "mcp_tool_use":
		return fmt.Sprintf("a %s block of the server tool '%s'", b.Type, b.Name)
	}
	if strings.HasSuffix(b.Type, "_tool_result") {
		return "a " + b.Type + " block of a server tool"
	}
	if b.Type != "" && strings.ContainsRune("aeiou", rune(b.Type[0])) {
		return "an " + b.Type + " block"
	}
	return "a " + b.Type + " block"
}

// toolArgs is a tool input as the compact JSON text chat's arguments
// carry ("{}" for none).
func toolArgs(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || rawNull(raw) {
		return "{}", nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", err
	}
	return b.String(), nil
}

func chatText(s string) oaiwire.Content { return oaiwire.Content{Text: &s} }

// rawGiven reports whether a raw member was given and is not null.
func rawGiven(raw json.RawMessage) bool { return len(raw) > 0 && !rawNull(raw) }

func rawNull(raw []byte) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
