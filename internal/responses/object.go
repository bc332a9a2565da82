package responses

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// Response is the Response object (object: "response") with every member
// the official schema requires.
type Response struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	CompletedAt        *int64            `json:"completed_at"`
	Background         bool              `json:"background"`
	Error              *ResponseError    `json:"error"`
	IncompleteDetails  *Incomplete       `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int64            `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []any             `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Reasoning          reasoningEcho     `json:"reasoning"`
	Store              bool              `json:"store"`
	Temperature        float64           `json:"temperature"`
	Text               json.RawMessage   `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              []any             `json:"tools"`
	TopP               float64           `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *Usage            `json:"usage,omitempty"` // absent until the end, as the schema has no null
	User               *string           `json:"user,omitempty"`
	Metadata           map[string]string `json:"metadata"`
}

type reasoningEcho struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

// ResponseError is a failed response's error.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Incomplete says why a response stopped early.
type Incomplete struct {
	Reason string `json:"reason"` // max_output_tokens or content_filter
}

// Usage is the Responses usage object.
type Usage struct {
	InputTokens         int64        `json:"input_tokens"`
	InputTokensDetails  inputDetail  `json:"input_tokens_details"`
	OutputTokens        int64        `json:"output_tokens"`
	OutputTokensDetails outputDetail `json:"output_tokens_details"`
	TotalTokens         int64        `json:"total_tokens"`
}

type inputDetail struct {
	CachedTokens     int64 `json:"cached_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"` // not reported by chat vendors: 0
}

type outputDetail struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

// NewUsage converts the gateway's usage to the Responses shape.
func NewUsage(u provider.Usage) *Usage {
	return &Usage{InputTokens: u.PromptTokens, InputTokensDetails: inputDetail{CachedTokens: u.CachedTokens},
		OutputTokens: u.CompletionTokens, OutputTokensDetails: outputDetail{ReasoningTokens: u.ReasoningTokens},
		TotalTokens: u.PromptTokens + u.CompletionTokens}
}

// Output items and content parts, one type per kind so that each carries
// exactly the members its schema has.
type (
	messageItem struct {
		Type    string `json:"type"` // message
		ID      string `json:"id"`
		Status  string `json:"status"`
		Role    string `json:"role"`
		Content []any  `json:"content"`
	}
	reasoningItem struct {
		Type             string          `json:"type"` // reasoning
		ID               string          `json:"id"`
		Summary          []any           `json:"summary"`
		Content          []reasoningText `json:"content"`
		EncryptedContent *string         `json:"encrypted_content,omitempty"` // see reasoning.go
		Status           string          `json:"status"`
	}
	outputText struct {
		Type        string `json:"type"` // output_text
		Text        string `json:"text"`
		Annotations []any  `json:"annotations"`
		Logprobs    []any  `json:"logprobs"`
	}
	refusalPart struct {
		Type    string `json:"type"` // refusal
		Refusal string `json:"refusal"`
	}
	reasoningText struct {
		Type string `json:"type"` // reasoning_text
		Text string `json:"text"`
	}
)

func newText(s string) outputText {
	return outputText{Type: "output_text", Text: s, Annotations: []any{}, Logprobs: []any{}}
}

// NewID returns a random id with prefix ("resp_", "msg_", "fc_", "rs_"),
// shaped like OpenAI's: the prefix and 48 hex digits.
func NewID(prefix string) string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// status maps a chat finish_reason to the response's status.
func status(finish string) (string, *Incomplete) {
	switch finish {
	case "length":
		return "incomplete", &Incomplete{Reason: "max_output_tokens"}
	case "content_filter":
		return "incomplete", &Incomplete{Reason: "content_filter"}
	}
	return "completed", nil
}

// Answer is a chat.completion read for translation: its output items and
// status, waiting for the response id and the settled usage.
type Answer struct {
	r      Response
	search bool // the request had a web search tool
}

// Answer reads a chat.completion (the first choice; the translation never
// asks for more).
func (t *Translation) Answer(chat []byte) (*Answer, error) {
	var c oaiwire.Response
	if err := json.Unmarshal(chat, &c); err != nil {
		return nil, fmt.Errorf("responses: decode chat completion: %w", err)
	}
	if len(c.Choices) == 0 {
		return nil, fmt.Errorf("responses: chat completion without choices")
	}
	ch := c.Choices[0]
	r := t.base
	r.Status, r.IncompleteDetails = status(ch.FinishReason)
	itemStatus := "completed"
	if r.Status == "incomplete" {
		itemStatus = "incomplete"
	}
	r.Output = nil
	m := ch.Message
	if m.ReasoningContent != "" || len(m.ThinkingBlocks) > 0 {
		ri := reasoningItem{Type: "reasoning", ID: NewID("rs_"), Summary: []any{}, Content: []reasoningText{}, Status: itemStatus}
		if m.ReasoningContent != "" {
			ri.Content = append(ri.Content, reasoningText{Type: "reasoning_text", Text: m.ReasoningContent})
		}
		if t.encrypted {
			ri.EncryptedContent = sealBlocks(m.ThinkingBlocks)
		}
		r.Output = append(r.Output, ri)
	}
	var text, refusal string
	if m.Content != nil {
		text = *m.Content
	}
	if m.Refusal != nil {
		refusal = *m.Refusal
	}
	if text != "" || refusal != "" || len(m.ToolCalls) == 0 {
		msg := messageItem{Type: "message", ID: NewID("msg_"), Status: itemStatus, Role: "assistant", Content: []any{}}
		if text != "" || refusal == "" {
			msg.Content = append(msg.Content, newText(text))
		}
		if refusal != "" {
			msg.Content = append(msg.Content, refusalPart{Type: "refusal", Refusal: refusal})
		}
		r.Output = append(r.Output, msg)
	}
	for _, tc := range m.ToolCalls {
		id := tc.ID
		if id == "" {
			id = NewID("call_")
		}
		prefix := idPrefix(t.names.of(tc.Function.Name).kind)
		r.Output = append(r.Output, t.names.callOutput(NewID(prefix), id, tc.Function.Name, tc.Function.Arguments, "completed"))
	}
	return &Answer{r: r, search: t.searchParam != ""}, nil
}

// JSON is the Response object with id, created and completed times (Unix
// seconds) and usage u (the settled counts, which may be the gateway's
// estimate); the web searches u counts lead the output as web_search_call
// items.
func (a *Answer) JSON(id string, created, completed int64, u provider.Usage) ([]byte, error) {
	r := a.r
	r.ID, r.CreatedAt, r.Usage = id, created, NewUsage(u)
	if a.search && u.WebSearches > 0 {
		r.Output = append(searchItems(u.WebSearches), r.Output...)
	}
	if r.Status == "completed" {
		r.CompletedAt = &completed
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("responses: encode response: %w", err)
	}
	return b, nil
}
