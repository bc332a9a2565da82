package provider

import "context"

// TokenCounter is implemented by adapters whose vendor counts a Messages
// request's input tokens itself (Anthropic's /v1/messages/count_tokens):
// the answer's JSON comes back as the vendor sent it.
type TokenCounter interface {
	CountTokens(ctx context.Context, req *MessagesRequest) ([]byte, error)
}
