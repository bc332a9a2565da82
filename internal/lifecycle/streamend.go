package lifecycle

import (
	"context"
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/sse"
)

// How a request can end, and what each ending costs (every endpoint that
// calls a vendor follows these rules; docs/billing.md has them per vendor).
// The rule behind them: the key pays at least what the vendor bills.
//
//   - It completes: the vendor's usage, else the delivered text counted.
//   - The client got the event that carries the vendor's usage (the final
//     usage chunk of a chat stream, response.completed) and left before
//     the upstream's body ended: the request is complete, 200 and the
//     vendor's usage. (Codex CLI hangs up exactly there.)
//   - The vendor's usage arrived before the client left, however the
//     stream ended: the vendor's usage.
//   - The client leaves, or is too slow to take a write within
//     Core.WriteTimeout (client_too_slow), before the vendor's usage:
//     on a model whose usage can hold tokens the stream does not show
//     (hidden reasoning: the catalog's reasoning models) the upstream call
//     was not cancelled: the gateway reads on without forwarding, for at
//     most Core.DrainTimeout after the client left, and charges the
//     vendor's usage; if the bound (or the server's shutdown) ends the
//     call first, the reservation. On any other model the upstream is
//     cancelled at once and the client pays for the prompt and the text it
//     was sent, counted by the gateway.
//   - The client leaves before the first byte: the same, as soon as the
//     vendor has the request (it was written whole to the vendor's
//     connection, see provider.RequestSent): the prompt, or on a reasoning
//     model the drained usage or the reservation. Before that, nothing.
//   - The gateway ends the call (an idle or total timeout, shutdown, a
//     broken connection, an answer it cannot read): the prompt and what
//     was delivered, counted; on a reasoning model the reservation (its
//     hidden tokens cannot be counted). Before the vendor had the request
//     (it could not be reached), nothing.
//   - The vendor answers with an error (an error status or error event):
//     nothing before content reached the client (vendors do not bill their
//     failures); after, what the client was sent.
//
// Images and transcriptions whose answer never came charge their
// reservation once the vendor had the request: the vendor makes the whole
// answer whether or not the client waits.
//
// The upstream's idle timer runs only while the gateway waits for upstream
// bytes (provider.SSEBody), so a slow client can never make the upstream
// look idle: a slow client is ended by the write timeout, as a client-side
// ending.

// EventWriter is the stream writer for w, its writes bounded by the
// core's write timeout.
func (h *Core) EventWriter(w http.ResponseWriter) *sse.Writer {
	sw := sse.NewWriter(w)
	sw.SetTimeout(h.WriteTimeout)
	return sw
}

// ClientEnded notes in info a stream the client side ended: werr is the
// failed write (the client went away, or was too slow to take it).
func ClientEnded(info *reqinfo.Info, werr error) {
	code := apierr.CodeClientClosed
	if sse.TooSlow(werr) {
		code = apierr.CodeClientTooSlow
	}
	info.Status, info.ErrCode, info.ErrDetail = apierr.StatusClientClosed, code, werr.Error()
}

// Sent counts the completion delivered so far; 0 without billing.
func (d *Delivered) Sent() int64 {
	if d == nil {
		return 0
	}
	return d.Tokens()
}

// StreamEnd is what a relay knows about the client's side when its stream
// stopped.
type StreamEnd struct {
	WriteErr error // the write that failed: the client left, or was too slow
	Gone     bool  // the client left while a drained call's answer came in
	Complete bool  // the client was sent the answer up to the vendor's usage
}

// ClientEnded reports whether the client side ended the stream.
func (e *StreamEnd) ClientEnded() bool { return e.WriteErr != nil || e.Gone }

// Stop reports whether the relay must stop forwarding: for a drained call
// the upstream goes on when the client leaves, so the relay looks.
func (e *StreamEnd) Stop(r *http.Request, u *Upstream) bool {
	e.Gone = u.Drains() && ClientGone(r)
	return e.Gone
}

// Wrote notes an event written to the client: once the vendor's usage has
// arrived, the client has the answer up to it. Written, not flushed: a
// large event reaches the client as it is written, and a client that then
// hangs up makes the flush after it fail (the write itself succeeds only
// while the client is there, or so recently gone that the server has not
// noticed: its context says which).
func (e *StreamEnd) Wrote(r *http.Request, st UsageStream) {
	if !e.Complete {
		_, ok := st.Usage()
		e.Complete = ok && r.Context().Err() == nil
	}
}

// Drain reads the rest of a drained call whose client ended the stream
// before the vendor's usage arrived; each (nil: none) sees every event
// read.
func (e *StreamEnd) Drain(u *Upstream, st UsageStream, each func()) {
	if !e.ClientEnded() || !u.Drains() {
		return
	}
	if _, ok := st.Usage(); ok {
		return
	}
	u.Leave()
	DrainStream(st, each)
}

// Note records the client's ending in info.
func (e *StreamEnd) Note(r *http.Request, info *reqinfo.Info) {
	werr := e.WriteErr
	if werr == nil {
		werr = context.Cause(r.Context())
	}
	ClientEnded(info, werr)
}
