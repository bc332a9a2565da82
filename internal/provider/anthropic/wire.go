package anthropic

import "encoding/json"

// Anthropic Messages API wire types: only the members the gateway sends or
// reads. Requests are checked against anthropic-sdk-go's MessageNewParams
// in the tests.

// messagesRequest is the body of POST /v1/messages.
type messagesRequest struct {
	Model         string      `json:"model"`
	MaxTokens     int64       `json:"max_tokens"`
	System        []block     `json:"system,omitempty"`
	Messages      []message   `json:"messages"`
	Temperature   *float64    `json:"temperature,omitempty"`
	TopP          *float64    `json:"top_p,omitempty"`
	StopSequences []string    `json:"stop_sequences,omitempty"`
	Metadata      *metadata   `json:"metadata,omitempty"`
	Tools         []tool      `json:"tools,omitempty"`
	ToolChoice    *toolChoice `json:"tool_choice,omitempty"`
	Thinking      *thinking   `json:"thinking,omitempty"`
	Stream        bool        `json:"stream,omitempty"`
}

type metadata struct {
	UserID string `json:"user_id"`
}

// message is one user or assistant turn.
type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a request content block: text, image, tool_use, tool_result,
// or an earlier turn's thinking or redacted_thinking.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	Source    *imageSource    `json:"source,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   []block         `json:"content,omitempty"`
}

// imageSource is a base64 or url image source.
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// tool is a client tool (name, description, input_schema) or a server
// tool (type, name and its own members: the web search's max_uses and
// user_location).
type tool struct {
	Type         string          `json:"type,omitempty"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	MaxUses      int64           `json:"max_uses,omitempty"`
	UserLocation *userLocation   `json:"user_location,omitempty"`
}

// userLocation is the web search tool's approximate location.
type userLocation struct {
	Type     string `json:"type"` // approximate
	City     string `json:"city,omitempty"`
	Country  string `json:"country,omitempty"`
	Region   string `json:"region,omitempty"`
	Timezone string `json:"timezone,omitempty"`
}

type toolChoice struct {
	Type                   string `json:"type"` // auto, any, tool, none
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse *bool  `json:"disable_parallel_tool_use,omitempty"`
}

type thinking struct {
	Type         string `json:"type"` // enabled
	BudgetTokens int64  `json:"budget_tokens"`
}
