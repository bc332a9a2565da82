package provider

import (
	"context"
	"net/url"
)

// ResponsesRequest is a validated Responses API request (POST /v1/responses)
// on its way to a vendor that serves that API itself. Body is the client's
// JSON exactly as received; the adapter patches only model.
type ResponsesRequest struct {
	PublicModel   string // the id the client asked for; answers must carry it
	UpstreamModel string // the id the vendor knows the model by
	Body          []byte
	Stream        bool
}

// ResponsesResult is a complete Response object in OpenAI's wire format
// whose model is already the public id, with the usage it reports.
type ResponsesResult struct {
	Body     []byte
	Usage    Usage
	HasUsage bool
}

// ResponseGet asks for a stored response (GET /v1/responses/{id}). Query is
// the client's query minus the gateway's own parameters (include[], ...).
// When the stored response's model is Upstream, the answer shows Public.
type ResponseGet struct {
	ID               string
	Query            url.Values
	Public, Upstream string
}

// EventStream yields the typed server-sent events of a Responses API stream
// ("event: response.output_text.delta" ...), one at a time, without
// buffering the stream. It has openai-go's ssestream shape.
type EventStream interface {
	// Next advances to the next event; false at the end or on error.
	Next() bool
	// Event is the current event's name (its SSE "event:" field, which is
	// also its JSON type) and data, valid until the next call to Next.
	Event() (name string, data []byte)
	// Usage is the usage the vendor reported; ok once the event that
	// carries it (response.completed, response.incomplete or
	// response.failed) arrived.
	Usage() (Usage, bool)
	// Err is nil after a clean end, else an *apierr.Error for the client.
	Err() error
	// Close releases the upstream connection; safe to call more than once.
	Close() error
}

// Responder is implemented by adapters whose vendor serves OpenAI's
// Responses API natively (OpenAI, Azure OpenAI, and other OpenAI-compatible
// vendors that have it); the gateway passes those requests through. For
// every other adapter it translates the Responses API to chat completions.
type Responder interface {
	// NativeResponses reports whether this upstream really serves the
	// Responses API: one adapter type can front several vendors (the
	// OpenAI-compatible one fronts DeepSeek and Mistral too), only some of
	// which have it.
	NativeResponses() bool
	// Respond sends a non-streamed request and returns the Response object.
	Respond(ctx context.Context, req *ResponsesRequest) (*ResponsesResult, error)
	// RespondStream sends a streamed request and relays its events.
	RespondStream(ctx context.Context, req *ResponsesRequest) (EventStream, error)
	// GetResponse fetches a stored response; an id the vendor does not
	// know is a 404 *apierr.Error.
	GetResponse(ctx context.Context, req *ResponseGet) (*ResponsesResult, error)
}
