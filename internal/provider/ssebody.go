package provider

import (
	"io"
	"time"

	"github.com/modelgate/modelgate/internal/sse"
)

// SSEBody is an upstream event stream being read: the exchange's timers,
// the body, and the SSE reader over it. The idle timer runs only while the
// reader waits for upstream bytes (see Call.StreamReader): the time a
// consumer spends with an event, writing it to a slow client, does not
// count against the upstream. Adapters' streams embed it for Buffered,
// Finish and Close.
type SSEBody struct {
	K      *Call
	Body   io.ReadCloser
	R      *sse.Reader
	closed bool
}

// After a stream's last event the body still holds the end of the HTTP
// message (an HTTP/1.1 chunked body's terminating zero-length chunk, an
// HTTP/2 END_STREAM). Closing the body before reading it makes net/http
// discard the connection (HTTP/1.1: closed with a reset, so the next
// request dials again, and against an https upstream pays a TLS handshake)
// instead of returning it to the pool. Finish reads at most drainLimit
// bytes for at most drainWait to reach it; upstreams send it right after
// the last event.
const (
	drainLimit = 4 << 10
	drainWait  = 100 * time.Millisecond
)

// NewSSEBody starts reading body, an answer of the exchange k.
func NewSSEBody(k *Call, body io.ReadCloser) SSEBody {
	return SSEBody{K: k, Body: body, R: sse.NewReader(k.StreamReader(body), 0)}
}

// Closed reports whether Close has run.
func (b *SSEBody) Closed() bool { return b.closed }

// Buffered reports whether the next event is already in memory (see
// provider.Buffered).
func (b *SSEBody) Buffered() bool { return b.R != nil && b.R.Buffered() }

// Finish ends a stream whose upstream sent its last event ([DONE],
// message_stop, or the end of the body after a finished answer): it reads
// the rest of the body, so that the connection goes back to the pool, then
// closes. Streams call it from Next, before they report the end, so the
// client's own end of stream follows the upstream's as through a plain
// proxy: a gateway that ended its answer later than its [DONE] would lose
// the connections of SDKs that close at [DONE] (openai-go does). A body
// whose end was already read (most often it came with the last event)
// answers at once.
func (b *SSEBody) Finish() {
	if b.closed {
		return
	}
	// The idle timer, cut to drainWait, cancels the exchange if the
	// upstream holds the body open; io.Discard reads into pooled buffers.
	wait := drainWait
	if d := b.K.d; d > 0 && d < wait {
		wait = d
	}
	b.K.idle.Reset(wait)
	_, _ = io.CopyN(io.Discard, b.Body, drainLimit)
	_ = b.Close()
}

// Close releases the upstream connection and the reader's buffer; safe to
// call more than once. Closing a body not read to its end (an error, a
// client that left) closes the connection; see Finish.
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
