package anthropicwire

import (
	"encoding/json"
	"maps"
	"slices"
)

// MessagesRequest is the body of POST /v1/messages and of
// /v1/messages/count_tokens (which has no max_tokens). Pointers mark the
// members where absent and zero differ. The fields' order is the order
// they are marshalled in (system before messages, stream after thinking),
// which the Anthropic adapter's golden request bodies depend on.
type MessagesRequest struct {
	Model         string    `json:"model"`
	MaxTokens     *int64    `json:"max_tokens,omitempty"`
	System        *Content  `json:"system,omitempty"` // a string or a list of text blocks
	Messages      []Message `json:"messages"`
	Temperature   *float64  `json:"temperature,omitempty"`
	TopP          *float64  `json:"top_p,omitempty"`
	TopK          *int64    `json:"top_k,omitempty"`
	StopSequences []string  `json:"stop_sequences,omitempty"`
	Metadata      *Metadata `json:"metadata,omitempty"`
	Tools         []Tool    `json:"tools,omitempty"`
	// ToolChoice is nil when the client left the choice to the model.
	ToolChoice *ToolChoice `json:"tool_choice,omitempty"`
	Thinking   *Thinking   `json:"thinking,omitempty"`
	Stream     bool        `json:"stream,omitempty"`
	// ServiceTier is auto or standard_only.
	ServiceTier string `json:"service_tier,omitempty"`
	// ContextManagement (edits that clear old tool results or thinking) is
	// Anthropic's alone; it is kept raw.
	ContextManagement json.RawMessage `json:"context_management,omitempty"`
	OutputConfig      *OutputConfig   `json:"output_config,omitempty"`
	// Container is a container id (a string) or {id, skills}; raw.
	Container json.RawMessage `json:"container,omitempty"`
	// MCPServers lists remote MCP servers Anthropic connects to; raw.
	MCPServers json.RawMessage `json:"mcp_servers,omitempty"`
	// CacheControl at the top level asks for automatic prompt caching.
	CacheControl *CacheControl `json:"cache_control,omitempty"`
	InferenceGeo string        `json:"inference_geo,omitempty"`
	// Extra holds every member not named above, as sent.
	Extra map[string]json.RawMessage `json:"-"`
}

// Message is one turn of the conversation. Role is user, assistant or
// system (the beta's mid-conversation system messages).
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
	// ClearAt is set on system messages only: next_user_message or never.
	ClearAt string `json:"clear_at,omitempty"`
}

// Content is a string or a list of content blocks: a message's content, the
// top-level system prompt, a tool result's content, a document's content
// source. Exactly one of Text and Blocks is set after decoding (Blocks is
// empty, not nil, for []).
type Content struct {
	Text   *string
	Blocks []Block
}

// TextContent is string content.
func TextContent(s string) Content { return Content{Text: &s} }

// IsText reports whether the content was a string.
func (c Content) IsText() bool { return c.Text != nil }

// MarshalJSON writes the form the content was read in.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Text != nil {
		return json.Marshal(*c.Text)
	}
	if c.Blocks != nil {
		return json.Marshal(c.Blocks)
	}
	return []byte("null"), nil
}

// Block is a content block: one struct with the members of every block type
// of the union, Type saying which apply. Members of one name but different
// shapes in different blocks are kept raw (Citations) or made unions
// (Source, Content).
type Block struct {
	Type string `json:"type"`
	// text; also the text of a thinking block lives in Thinking.
	Text string `json:"text,omitempty"`
	// Citations is a list of citations on a text block, or the citations
	// config {enabled} on a document or search_result block.
	Citations    json.RawMessage `json:"citations,omitempty"`
	CacheControl *CacheControl   `json:"cache_control,omitempty"`
	// Source is an image's or document's source, or a search_result's
	// source (a string, kept in Source.Name).
	Source *Source `json:"source,omitempty"`
	// tool_use, server_tool_use, mcp_tool_use.
	ID         string          `json:"id,omitempty"`
	Name       string          `json:"name,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	ServerName string          `json:"server_name,omitempty"` // mcp_tool_use
	// tool_result and the server tools' *_tool_result blocks.
	ToolUseID string   `json:"tool_use_id,omitempty"`
	Content   *Content `json:"content,omitempty"` // also search_result's text blocks
	IsError   *bool    `json:"is_error,omitempty"`
	// thinking, redacted_thinking.
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
	// document, search_result.
	Title   string `json:"title,omitempty"`
	Context string `json:"context,omitempty"`
	// container_upload.
	FileID string `json:"file_id,omitempty"`
	// Extra holds every member not named above (caller, toolset_name, ...).
	Extra map[string]json.RawMessage `json:"-"`
}

// CitationsEnabled reports whether a document or search_result block asks
// for citations ({"enabled": true}).
func (b *Block) CitationsEnabled() bool {
	var c struct {
		Enabled bool `json:"enabled"`
	}
	return len(b.Citations) > 0 && b.Citations[0] == '{' && json.Unmarshal(b.Citations, &c) == nil && c.Enabled
}

// Source is where an image's or a document's content comes from. Type is
// base64 (MediaType, Data), url (URL), file (FileID, a Files API id), text
// (a plain text document in Data) or content (a document made of Content's
// blocks). A search_result block's source is a plain string instead; it is
// kept in Name.
type Source struct {
	Type      string   `json:"type,omitempty"`
	MediaType string   `json:"media_type,omitempty"`
	Data      string   `json:"data,omitempty"`
	URL       string   `json:"url,omitempty"`
	FileID    string   `json:"file_id,omitempty"`
	Content   *Content `json:"content,omitempty"`
	Name      string   `json:"-"`
}

// MarshalJSON writes a string source as a string, else the object.
func (s Source) MarshalJSON() ([]byte, error) {
	if s.Name != "" && s.Type == "" {
		return json.Marshal(s.Name)
	}
	return json.Marshal(sourceFields(s))
}

// Tool is a tool definition. A custom tool (Type empty or "custom") has a
// Name, a Description and an InputSchema; a server tool or an
// Anthropic-defined client tool has a dated Type (web_search_20250305,
// bash_20250124, text_editor_20250728, code_execution_20250825,
// computer_20250124, web_fetch_20250910, ...) and its own members in Extra
// (max_uses, allowed_domains, display_width_px, ...).
type Tool struct {
	Type         string          `json:"type,omitempty"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	CacheControl *CacheControl   `json:"cache_control,omitempty"`
	Strict       *bool           `json:"strict,omitempty"`
	// Extra holds every member not named above.
	Extra map[string]json.RawMessage `json:"-"`
}

// UserLocation is the web search tool's user_location (kept in its Tool's
// Extra): Type approximate, and what is known of where the user is.
type UserLocation struct {
	Type     string `json:"type"`
	City     string `json:"city,omitempty"`
	Country  string `json:"country,omitempty"`
	Region   string `json:"region,omitempty"`
	Timezone string `json:"timezone,omitempty"`
}

// IsCustom reports whether the tool is one the client defines and runs
// (a function tool, in other dialects).
func (t *Tool) IsCustom() bool { return t.Type == "" || t.Type == "custom" }

// ToolChoice is tool_choice: Type auto, any, tool (with Name) or none.
type ToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse *bool  `json:"disable_parallel_tool_use,omitempty"`
}

// Thinking is the extended thinking config: Type enabled (with
// BudgetTokens), disabled or adaptive.
type Thinking struct {
	Type         string `json:"type"`
	BudgetTokens *int64 `json:"budget_tokens,omitempty"`
	// Display is summarized or omitted (whether thinking text is returned).
	Display string `json:"display,omitempty"`
}

// Metadata is the request's metadata; UserID is an opaque id of the end
// user (Claude Code sends one on every request).
type Metadata struct {
	UserID string `json:"user_id,omitempty"`
}

// CacheControl marks a prompt-caching breakpoint: Type ephemeral, TTL 5m
// (the default) or 1h.
type CacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"`
}

// OutputConfig is output_config: the effort the model spends (low, medium,
// high, xhigh, max) and a structured output format.
type OutputConfig struct {
	Effort string        `json:"effort,omitempty"`
	Format *OutputFormat `json:"format,omitempty"`
	// Extra holds every member not named above (task_budget, ...).
	Extra map[string]json.RawMessage `json:"-"`
}

// OutputFormat is output_config.format: Type json_schema with its Schema.
type OutputFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema,omitempty"`
}

// The types with an Extra member (and Source) marshal through these shadows,
// which have no methods, so encoding/json does not recurse.
type (
	requestFields      MessagesRequest
	requestBlockFields Block
	toolFields         Tool
	outputConfigFields OutputConfig
	sourceFields       Source
)

// MarshalJSON writes the named members and then Extra.
func (r MessagesRequest) MarshalJSON() ([]byte, error) {
	return marshalWithExtra((*requestFields)(&r), r.Extra)
}

// MarshalJSON writes the named members and then Extra. A thinking block
// always has its thinking member, "" included (Anthropic requires it; a
// thinking block whose text was omitted has an empty one).
func (b Block) MarshalJSON() ([]byte, error) {
	extra := b.Extra
	if b.Type == BlockThinking && b.Thinking == "" {
		extra = maps.Clone(extra)
		if extra == nil {
			extra = make(map[string]json.RawMessage, 1)
		}
		extra["thinking"] = json.RawMessage(`""`)
	}
	return marshalWithExtra((*requestBlockFields)(&b), extra)
}

// MarshalJSON writes the named members and then Extra.
func (t Tool) MarshalJSON() ([]byte, error) {
	return marshalWithExtra((*toolFields)(&t), t.Extra)
}

// MarshalJSON writes the named members and then Extra.
func (o OutputConfig) MarshalJSON() ([]byte, error) {
	return marshalWithExtra((*outputConfigFields)(&o), o.Extra)
}

// marshalWithExtra marshals v (a struct) and appends the extra members, in
// name order, before its closing brace.
func marshalWithExtra(v any, extra map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	b = b[:len(b)-1] // the closing brace
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(k)
		b = append(b, name...)
		b = append(b, ':')
		b = append(b, extra[k]...)
	}
	return append(b, '}'), nil
}
