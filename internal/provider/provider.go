// Package provider defines the small interface every upstream adapter
// implements (chat and chat streaming) and the values that cross it.
// Adapters take a context and values and return values and an error; they
// never see an http.ResponseWriter. Other capabilities (embeddings, images,
// audio, video) are separate optional interfaces found by type assertion.
package provider

import (
	"context"

	"github.com/modelgate/modelgate/internal/jsonx"
)

// Usage is what the upstream reports it used.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64
	CachedTokens     int64 // part of PromptTokens served from the vendor's cache
	ReasoningTokens  int64 // part of CompletionTokens spent on hidden reasoning
	// AudioPromptTokens and AudioCompletionTokens are the parts of
	// PromptTokens and CompletionTokens that are audio (a chat model that
	// hears or speaks), priced apart.
	AudioPromptTokens     int64
	AudioCompletionTokens int64
	// WebSearches counts the web searches the vendor ran for the answer
	// and bills apiece (Anthropic's web search tool, Gemini's grounding
	// queries); WebSearchesCounted says the adapter counts them (a vendor
	// whose adapter does not is billed one search per web_search_options).
	WebSearches        int64
	WebSearchesCounted bool
	// ServiceTier is the tier the vendor says it ran the request at
	// ("default", "priority", "flex"; "" when it does not say), which
	// decides the token prices.
	ServiceTier string
}

// ChatRequest is a validated chat completion request on its way upstream.
// Body is the client's JSON exactly as received; OpenAI-compatible adapters
// forward it with only model (and stream_options) patched, so fields the
// gateway does not know still reach the vendor.
type ChatRequest struct {
	PublicModel   string // the id the client asked for; responses must carry it
	UpstreamModel string // the id the vendor knows the model by
	Body          []byte
	Stream        bool
	IncludeUsage  bool // the client asked for a usage chunk at the end of the stream
	// MaxOutput is the model's output limit from the catalog (0: unknown).
	// Vendors that require a max_tokens (Anthropic) use it when the client
	// sent none.
	MaxOutput int64
	// ModelAt and StreamOptionsAt locate Body's top-level model and
	// stream_options members when the handler found them while validating
	// Body, so that an adapter that patches Body need not scan it again.
	// A ModelAt that is not Found means unknown: the adapter looks itself.
	ModelAt, StreamOptionsAt jsonx.Span
}

// ChatResponse is a complete chat.completion in OpenAI's wire format whose
// model field is already the public id.
type ChatResponse struct {
	Body     []byte
	Usage    Usage
	HasUsage bool
}

// ChatStream yields chat.completion.chunk objects in OpenAI's wire format,
// model already set to the public id. It has openai-go's ssestream shape.
type ChatStream interface {
	// Next advances to the next chunk; false at the end or on error.
	Next() bool
	// Chunk is the current chunk's JSON, valid until the next call to Next.
	Chunk() []byte
	// Usage is the usage the upstream reported; ok once its final figures
	// arrived (a usage chunk, Anthropic's message_delta, the event that
	// finishes Gemini's answer), not before: a client that leaves before
	// then has not seen what the vendor bills (see lifecycle/streamend.go).
	Usage() (Usage, bool)
	// Err is nil after a clean end, else an *apierr.Error for the client.
	Err() error
	// Close releases the upstream connection; safe to call more than once.
	Close() error
}

// Buffered is implemented by streams that can tell whether the next chunk is
// already in memory, so the writer can batch flushes without delaying any.
type Buffered interface {
	Buffered() bool
}

// Chatter is the core interface every provider implements.
type Chatter interface {
	Chat(ctx context.Context, req *ChatRequest) (*ChatResponse, error)
	ChatStream(ctx context.Context, req *ChatRequest) (ChatStream, error)
}
