package oaiwire

import (
	"crypto/rand"
	"encoding/base64"

	"github.com/modelgate/modelgate/internal/provider"
)

// Response is a chat.completion object.
type Response struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"` // "chat.completion"
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	Choices           []Choice `json:"choices"`
	Usage             *Usage   `json:"usage,omitempty"`
	SystemFingerprint *string  `json:"system_fingerprint"`
}

// Choice is one choice of a Response.
type Choice struct {
	Index        int         `json:"index"`
	Message      RespMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
	Logprobs     *struct{}   `json:"logprobs"` // always null
}

// RespMessage is the assistant message of a choice. Content is null (not
// "") when the model only called tools, as OpenAI does.
type RespMessage struct {
	Role             string          `json:"role"` // "assistant"
	Content          *string         `json:"content"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ThinkingBlocks   []ThinkingBlock `json:"thinking_blocks,omitempty"`
	ToolCalls        []ToolCall      `json:"tool_calls,omitempty"`
	Refusal          *string         `json:"refusal"`
}

// Usage is the usage object, with the details OpenAI sends.
type Usage struct {
	PromptTokens            int64                    `json:"prompt_tokens"`
	CompletionTokens        int64                    `json:"completion_tokens"`
	TotalTokens             int64                    `json:"total_tokens"`
	PromptTokensDetails     *PromptTokensDetails     `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *CompletionTokensDetails `json:"completion_tokens_details,omitempty"`
}

// PromptTokensDetails holds cached_tokens.
type PromptTokensDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

// CompletionTokensDetails holds reasoning_tokens.
type CompletionTokensDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

// NewUsage builds the wire usage from the gateway's counts.
func NewUsage(u provider.Usage) *Usage {
	w := &Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
		TotalTokens:             u.PromptTokens + u.CompletionTokens,
		PromptTokensDetails:     &PromptTokensDetails{CachedTokens: u.CachedTokens},
		CompletionTokensDetails: &CompletionTokensDetails{ReasoningTokens: u.ReasoningTokens}}
	return w
}

// Chunk is a chat.completion.chunk object. Usage is null on every chunk
// but the final usage-only chunk, when the client asked for it.
type Chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"` // "chat.completion.chunk"
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	Choices           []ChunkChoice `json:"choices"`
	Usage             *Usage        `json:"usage,omitempty"`
	SystemFingerprint *string       `json:"system_fingerprint,omitempty"`
}

// ChunkChoice is one choice of a Chunk.
type ChunkChoice struct {
	Index        int       `json:"index"`
	Delta        Delta     `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
	Logprobs     *struct{} `json:"logprobs,omitempty"`
}

// Delta is what a chunk adds to a choice.
type Delta struct {
	Role             string          `json:"role,omitempty"`
	Content          *string         `json:"content,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ThinkingBlocks   []ThinkingBlock `json:"thinking_blocks,omitempty"`
	ToolCalls        []ToolCall      `json:"tool_calls,omitempty"`
	Refusal          *string         `json:"refusal,omitempty"`
}

// NewID returns an id with prefix ("chatcmpl-", "call_") and 24 random
// URL-safe characters, for vendors whose ids do not fit OpenAI's shape.
func NewID(prefix string) string {
	var b [18]byte
	_, _ = rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// Ptr returns a pointer to v (for optional wire fields).
func Ptr[T any](v T) *T { return &v }
