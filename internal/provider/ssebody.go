package provider

import (
	"io"

	"github.com/modelgate/modelgate/internal/sse"
)

// SSEBody is an upstream event stream being read: the exchange's timers,
// the body, and the SSE reader over it. The idle timer runs only while the
// reader waits for upstream bytes (see Call.StreamReader): the time a
// consumer spends with an event, writing it to a slow client, does not
// count against the upstream. Adapters' streams embed it for Buffered and
// Close.
type SSEBody struct {
	K      *Call
	Body   io.ReadCloser
	R      *sse.Reader
	closed bool
}

// NewSSEBody starts reading body, an answer of the exchange k.
func NewSSEBody(k *Call, body io.ReadCloser) SSEBody {
	return SSEBody{K: k, Body: body, R: sse.NewReader(k.StreamReader(body), 0)}
}

// Closed reports whether Close has run.
func (b *SSEBody) Closed() bool { return b.closed }

// Buffered reports whether the next event is already in memory (see
// provider.Buffered).
func (b *SSEBody) Buffered() bool { return b.R != nil && b.R.Buffered() }

// Close releases the upstream connection and the reader's buffer; safe to
// call more than once.
func (b *SSEBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	err := b.Body.Close()
	b.K.Release()
	b.R.Release()
	b.R = nil
	return err
}
