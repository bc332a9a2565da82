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

// messageResponse is a Message object (and message_start's message).
type messageResponse struct {
	ID         string      `json:"id"`
	Type       string      `json:"type"`
	Role       string      `json:"role"`
	Model      string      `json:"model"`
	Content    []respBlock `json:"content"`
	StopReason string      `json:"stop_reason"`
	Usage      usage       `json:"usage"`
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// respBlock is a response content block (or content_block_start's block).
type respBlock struct {
	Type      string          `json:"type"` // text, thinking, redacted_thinking, tool_use
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"` // thinking
	Data      string          `json:"data"`      // redacted_thinking
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

// usage is Anthropic's usage; pointers tell message_delta's partial
// counts from absent ones.
type usage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	// OutputTokensDetails.ThinkingTokens is the part of OutputTokens spent
	// thinking, when the answer reports it.
	OutputTokensDetails *struct {
		ThinkingTokens *int64 `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
	// ServerToolUse counts the server tools' calls (web searches).
	ServerToolUse *struct {
		WebSearchRequests *int64 `json:"web_search_requests"`
	} `json:"server_tool_use"`
}

// thinkingTokens is the reported thinking count; ok is false when the
// answer did not report one.
func (u *usage) thinkingTokens() (n int64, ok bool) {
	if u.OutputTokensDetails == nil || u.OutputTokensDetails.ThinkingTokens == nil {
		return 0, false
	}
	return *u.OutputTokensDetails.ThinkingTokens, true
}

// webSearches is the number of web searches the answer reports.
func (u *usage) webSearches() int64 {
	if u.ServerToolUse == nil || u.ServerToolUse.WebSearchRequests == nil {
		return 0
	}
	return *u.ServerToolUse.WebSearchRequests
}

// merge takes every count u2 reports (stream counts are cumulative).
func (u *usage) merge(u2 *usage) {
	if u2 == nil {
		return
	}
	for _, p := range [...]struct{ dst, src **int64 }{
		{&u.InputTokens, &u2.InputTokens}, {&u.OutputTokens, &u2.OutputTokens},
		{&u.CacheCreationInputTokens, &u2.CacheCreationInputTokens}, {&u.CacheReadInputTokens, &u2.CacheReadInputTokens},
	} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
	if n, ok := u2.thinkingTokens(); ok {
		u.OutputTokensDetails = u2.OutputTokensDetails
		u.OutputTokensDetails.ThinkingTokens = &n
	}
	if u2.ServerToolUse != nil && u2.ServerToolUse.WebSearchRequests != nil {
		u.ServerToolUse = u2.ServerToolUse
	}
}

// streamEvent is any SSE event's data.
type streamEvent struct {
	Type         string           `json:"type"`
	Message      *messageResponse `json:"message"`
	Index        int              `json:"index"`
	ContentBlock *respBlock       `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *usage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}
