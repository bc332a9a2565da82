package provider

import (
	"context"
	"net/http"
)

// MessagesRequest is an Anthropic Messages API request (POST /v1/messages)
// on its way to an adapter that speaks that API itself. Body is the
// client's JSON as received: the adapter forwards it with only model
// patched, so every field (cache_control, thinking, betas' fields) reaches
// the vendor untouched.
type MessagesRequest struct {
	PublicModel   string // the id the client asked for; answers carry it
	UpstreamModel string // the id the vendor knows the model by
	Body          []byte
	Stream        bool // the client asked for an event stream
	// Header holds the client headers that go upstream: anthropic-version,
	// anthropic-beta and those the operator lets through. The adapter's
	// own credentials replace any the client sent.
	Header http.Header
}

// MessagesResponse is a complete Message whose model is already the public
// id, and the usage it reports.
type MessagesResponse struct {
	Body  []byte
	Usage Usage
}

// MessagesStream relays an Anthropic event stream. It has ChatStream's
// shape, with whole SSE events in place of chunks.
type MessagesStream interface {
	// Next advances to the next event; false at the end or on error.
	Next() bool
	// Event is the current event, "event: NAME\ndata: JSON\n\n", as the
	// vendor sent it except for message_start's model, which is the public
	// id. It is valid until the next call to Next.
	Event() []byte
	// Usage is the final usage once message_delta arrived (ok), not before.
	Usage() (Usage, bool)
	// Err is nil after a clean end, else an *apierr.Error for the client.
	Err() error
	// Close releases the upstream connection; safe to call more than once.
	Close() error
}

// Messenger is the optional capability of adapters that serve an Anthropic
// Messages request by passing it through (Anthropic itself), found by type
// assertion. Other adapters are reached through Chatter and a translation.
type Messenger interface {
	Messages(ctx context.Context, req *MessagesRequest) (*MessagesResponse, error)
	MessagesStream(ctx context.Context, req *MessagesRequest) (MessagesStream, error)
}
