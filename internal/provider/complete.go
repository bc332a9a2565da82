package provider

import "context"

// CompletionRequest is a validated legacy text completion request (POST
// /v1/completions) on its way upstream. It has ChatRequest's fields, but
// Body is the client's CreateCompletionRequest JSON exactly as received
// (prompt, max_tokens, echo, suffix, ...), not a chat body.
type CompletionRequest = ChatRequest

// CompletionResponse is a complete text_completion object in OpenAI's wire
// format (choices[].text), model already set to the public id.
type CompletionResponse = ChatResponse

// CompletionStream yields text_completion chunks (the same object as the
// complete answer, choices[].text holding the new text), model already set
// to the public id; a usage-only chunk ends it when the client asked.
type CompletionStream = ChatStream

// Completer is the optional capability of adapters whose vendor serves
// OpenAI's legacy /v1/completions itself: the request is passed through.
// Deployments whose adapter lacks it get the request translated to chat
// (package completechat).
type Completer interface {
	Complete(ctx context.Context, req *CompletionRequest) (*CompletionResponse, error)
	CompleteStream(ctx context.Context, req *CompletionRequest) (CompletionStream, error)
}
