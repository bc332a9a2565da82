package openai

import (
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/sse"
)

// How a stream can end, and what each ending costs (every streaming
// endpoint follows these rules):
//
//   - it completes: the vendor's usage, else the delivered text counted;
//   - the client goes away, or is too slow to take a write within
//     Handler.WriteTimeout (client_too_slow): the client pays for the
//     prompt and the text it was sent, counted as it was sent;
//   - the upstream ends it after content reached the client (idle or total
//     timeout, a broken or failed stream, shutdown): the same, since the
//     client has what it was sent; the error event tells it the rest is
//     missing;
//   - it fails before any content reached the client: nothing is charged.
//
// The upstream's idle timer runs only while the gateway waits for upstream
// bytes (provider.SSEBody), so a slow client can never make the upstream
// look idle: a slow client is ended by the write timeout, as a client-side
// ending.

// eventWriter is the stream writer for w, its writes bounded by the
// handler's write timeout.
func (h *Handler) eventWriter(w http.ResponseWriter) *sse.Writer {
	sw := sse.NewWriter(w)
	sw.SetTimeout(h.WriteTimeout)
	return sw
}

// clientEnded notes in info a stream the client side ended: werr is the
// failed write (the client went away, or was too slow to take it).
func clientEnded(info *reqinfo.Info, werr error) {
	code := apierr.CodeClientClosed
	if sse.TooSlow(werr) {
		code = apierr.CodeClientTooSlow
	}
	info.Status, info.ErrCode, info.ErrDetail = apierr.StatusClientClosed, code, werr.Error()
}

// sent counts the completion delivered so far; 0 without billing.
func (d *delivered) sent() int64 {
	if d == nil {
		return 0
	}
	return d.tokens()
}
