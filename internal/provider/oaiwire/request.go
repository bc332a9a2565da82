// Package oaiwire holds OpenAI chat completions wire types for adapters that
// translate to another vendor's dialect (Anthropic, Gemini): the request as
// the client sent it, and the response, chunk and usage objects they build.
// OpenAI-compatible pass-through never decodes into these; it keeps bytes.
package oaiwire

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Request is a chat completion request. Pointers mark optional fields so
// "absent" and "zero" stay apart.
type Request struct {
	Model               string          `json:"model"`
	Messages            []Message       `json:"messages"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       *StreamOptions  `json:"stream_options,omitempty"`
	MaxTokens           *int64          `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	TopP                *float64        `json:"top_p,omitempty"`
	N                   *int64          `json:"n,omitempty"`
	Stop                Stop            `json:"stop,omitempty"`
	Seed                *int64          `json:"seed,omitempty"`
	PresencePenalty     *float64        `json:"presence_penalty,omitempty"`
	FrequencyPenalty    *float64        `json:"frequency_penalty,omitempty"`
	Logprobs            *bool           `json:"logprobs,omitempty"`
	TopLogprobs         *int64          `json:"top_logprobs,omitempty"`
	User                string          `json:"user,omitempty"`
	Tools               []Tool          `json:"tools,omitempty"`
	ToolChoice          json.RawMessage `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls,omitempty"`
	Functions           []FunctionDef   `json:"functions,omitempty"`     // legacy
	FunctionCall        json.RawMessage `json:"function_call,omitempty"` // legacy
	ResponseFormat      *ResponseFormat `json:"response_format,omitempty"`
	ReasoningEffort     string          `json:"reasoning_effort,omitempty"`
	Metadata            json.RawMessage `json:"metadata,omitempty"`
	// WebSearchOptions asks for the vendor's own web search (Anthropic's
	// web search tool, Gemini's Google Search grounding).
	WebSearchOptions *WebSearchOptions `json:"web_search_options,omitempty"`
}

// WebSearchOptions is chat's web_search_options.
type WebSearchOptions struct {
	SearchContextSize string              `json:"search_context_size,omitempty"`
	UserLocation      *SearchUserLocation `json:"user_location,omitempty"`
}

// SearchUserLocation is web_search_options.user_location.
type SearchUserLocation struct {
	Type        string `json:"type"` // approximate
	Approximate struct {
		City     string `json:"city,omitempty"`
		Country  string `json:"country,omitempty"`
		Region   string `json:"region,omitempty"`
		Timezone string `json:"timezone,omitempty"`
	} `json:"approximate"`
}

// StreamOptions is stream_options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Stop is a string or a list of strings; it always holds a list.
type Stop []string

// UnmarshalJSON accepts a string, a list of strings or null.
func (s *Stop) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*s = nil
		return nil
	case len(b) > 0 && b[0] == '"':
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = Stop{one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("stop: want a string or a list of strings")
	}
	*s = list
	return nil
}

// Message is one message of the conversation.
type Message struct {
	Role         string        `json:"role"` // system, developer, user, assistant, tool, function
	Content      Content       `json:"content"`
	Name         string        `json:"name,omitempty"`
	ToolCalls    []ToolCall    `json:"tool_calls,omitempty"`
	ToolCallID   string        `json:"tool_call_id,omitempty"`
	FunctionCall *FunctionCall `json:"function_call,omitempty"` // legacy
	Refusal      string        `json:"refusal,omitempty"`
	// ReasoningContent is the thinking text some vendors return and some
	// clients send back on the next turn.
	ReasoningContent string `json:"reasoning_content,omitempty"`
	// ThinkingBlocks are an assistant turn's signed thinking (LiteLLM's
	// convention), sent back so that a vendor that wants them (Anthropic,
	// with extended thinking and tools) gets them.
	ThinkingBlocks []ThinkingBlock `json:"thinking_blocks,omitempty"`
}

// ThinkingBlock is one block of a vendor's signed thinking: type
// "thinking" (thinking text and signature) or "redacted_thinking" (data).
// In a stream's delta a thinking block without thinking text closes the
// reasoning_content streamed since the previous block.
type ThinkingBlock struct {
	Type      string  `json:"type"`
	Thinking  *string `json:"thinking,omitempty"`
	Signature string  `json:"signature,omitempty"`
	Data      string  `json:"data,omitempty"`
}

// Content is a message's content: a string, a list of parts, or null.
type Content struct {
	Text  *string // set when content was a string
	Parts []Part  // set when content was a list
}

// UnmarshalJSON accepts a string, an array of parts or null.
func (c *Content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*c = Content{}
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		c.Text = &s
		return nil
	}
	return json.Unmarshal(b, &c.Parts)
}

// MarshalJSON writes the form it was read in.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Text != nil {
		return json.Marshal(*c.Text)
	}
	if c.Parts != nil {
		return json.Marshal(c.Parts)
	}
	return []byte("null"), nil
}

// String joins the text of the content (string content, or text parts).
func (c Content) String() string {
	if c.Text != nil {
		return *c.Text
	}
	var b bytes.Buffer
	for _, p := range c.Parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Part is one content part.
type Part struct {
	Type       string          `json:"type"` // text, image_url, input_audio, file, refusal
	Text       string          `json:"text,omitempty"`
	ImageURL   *ImageURL       `json:"image_url,omitempty"`
	InputAudio json.RawMessage `json:"input_audio,omitempty"`
	File       json.RawMessage `json:"file,omitempty"`
	Refusal    string          `json:"refusal,omitempty"`
}

// ImageURL is an image part's source: an http(s) URL or a data: URL.
type ImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// Tool is a tool definition (only "function" tools exist in chat).
type Tool struct {
	Type     string      `json:"type"`
	Function FunctionDef `json:"function"`
}

// FunctionDef defines a function the model may call.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// ToolCall is a call the assistant made (in requests and responses) or a
// piece of one (in stream deltas, where Index is set).
type ToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function FunctionCall `json:"function"`
	// ExtraContent is vendor data that must come back with the call
	// (Gemini's OpenAI-compatible convention:
	// {"google":{"thought_signature":"..."}}).
	ExtraContent json.RawMessage `json:"extra_content,omitempty"`
}

// FunctionCall is a function name with its JSON arguments as a string.
type FunctionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// ResponseFormat is response_format: text, json_object or json_schema.
type ResponseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *JSONSchema `json:"json_schema,omitempty"`
}

// JSONSchema is response_format.json_schema.
type JSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// ParseRequest decodes a chat request the gateway has already validated.
func ParseRequest(body []byte) (*Request, error) {
	var r Request
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("oaiwire: chat request: %w", err)
	}
	return &r, nil
}

// ToolChoice is tool_choice (or legacy function_call) resolved.
type ToolChoice struct {
	Mode string // "" (absent), "auto", "none", "required", or "function"
	Name string // the function's name when Mode is "function"
}

// Choice resolves tool_choice, falling back to legacy function_call.
func (r *Request) Choice() (ToolChoice, error) {
	raw := r.ToolChoice
	legacy := false
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw, legacy = r.FunctionCall, true
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ToolChoice{}, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return ToolChoice{}, err
		}
		switch s {
		case "auto", "none", "required":
			return ToolChoice{Mode: s}, nil
		}
		return ToolChoice{}, fmt.Errorf("tool_choice %q: want auto, none, required or a function", s)
	}
	var obj struct {
		Type     string `json:"type"`
		Name     string `json:"name"` // legacy function_call: {"name": ...}
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return ToolChoice{}, err
	}
	name := obj.Function.Name
	if legacy {
		name = obj.Name
	}
	if name == "" {
		return ToolChoice{}, fmt.Errorf("tool_choice: a function choice needs a name")
	}
	return ToolChoice{Mode: "function", Name: name}, nil
}

// AllTools returns tools plus legacy functions as function tools.
func (r *Request) AllTools() []FunctionDef {
	out := make([]FunctionDef, 0, len(r.Tools)+len(r.Functions))
	for _, t := range r.Tools {
		out = append(out, t.Function)
	}
	return append(out, r.Functions...)
}

// MaxOutput is max_completion_tokens, else max_tokens, else 0.
func (r *Request) MaxOutput() int64 {
	if r.MaxCompletionTokens != nil {
		return *r.MaxCompletionTokens
	}
	if r.MaxTokens != nil {
		return *r.MaxTokens
	}
	return 0
}
