package lifecycle

import (
	"net/http"
	"sync"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/sse"
)

// StreamBill is how a relayed stream is charged: the charge and the call
// (nil without billing), the record of what reached the client (made by
// Charge.Delivered with the door's way of reading its chunks' text), and
// the outcome to settle into. The prompt is counted as the charge was
// admitted (a chat body, a completion's prompt, AdmitBody's count).
type StreamBill struct {
	Charge    *Charge
	Up        *Upstream
	Delivered *Delivered
	Out       *Outcome
}

// settleUsage charges the vendor's usage u, completed by the gateway's count
// when the vendor reported none.
func (b StreamBill) settleUsage(u *provider.Usage) money.Micros {
	return b.Charge.Settle(u, b.Delivered.Tokens, b.Out)
}

// count is the gateway's count of the prompt and of what was delivered.
func (b StreamBill) count() provider.Usage {
	u := b.Charge.PromptCount()
	u.CompletionTokens = b.Delivered.Tokens()
	return u
}

// Settle settles a stream that stopped with upErr (nil: a clean end) by
// the rules in streamend.go: the vendor's usage when st has it, else what
// the call owes (Upstream.Owed).
func (b StreamBill) Settle(st UsageStream, upErr error) {
	if u, ok := st.Usage(); ok {
		b.Out.Usage = u
		b.Out.Cost = b.settleUsage(&b.Out.Usage)
		return
	}
	b.Charge.SettleOwed(b.Up.Owed(upErr, b.Delivered.Sent() > 0), b.count, b.Out)
}

// Relay sends the chunks of st to the client as they arrive, each through
// enc.Chunk (chat chunks, legacy completion chunks, or a door's own
// events: the Anthropic pass-through's Chunk is one whole SSE event), and
// charges the stream by the rules in streamend.go. more is st's first
// Next (see openStream). It ends a complete stream with enc.End and a
// broken one with enc.Broken.
// It returns how the upstream's stream ended (upErr, nil for a clean end)
// and whether the client was done with it by then, for the provider's
// health (Tries.StreamEnded).
func (h *Core) Relay(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, st provider.ChatStream, more bool, b StreamBill,
	enc ChatEncoder) (upErr error, done bool) {
	out := b.Out
	defer st.Close()
	hdr := w.Header()
	if b.Charge != nil {
		hdr.Set("Trailer", CostHeader)
	}
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	info.Status = http.StatusOK
	h.StreamStarted()
	defer h.StreamEnded()
	sw := h.pooledWriter(w)
	defer releaseWriter(sw)
	buffered, _ := st.(provider.Buffered)
	// Delivered text is counted as it goes (bounded memory), for when the
	// vendor's usage never comes: the client left, or the vendor sends none.
	defer b.Delivered.Release()
	var end StreamEnd
	for ; more && !end.Stop(r, b.Up); more = st.Next() {
		if out.TTFT == 0 {
			out.TTFT = h.Clock().Sub(info.Start)
		}
		if end.WriteErr = enc.Chunk(sw, st.Chunk()); end.WriteErr != nil {
			break
		}
		end.Wrote(r, st)
		b.Delivered.Add(st.Chunk())
		if buffered != nil && buffered.Buffered() {
			continue // the next chunk is already here; flush after it
		}
		if end.WriteErr = sw.Flush(); end.WriteErr != nil {
			break
		}
	}
	end.Stop(r, b.Up) // a drained call's client may have left while its end came
	end.Drain(b.Up, st, nil)
	upErr, done = st.Err(), end.Complete || end.ClientEnded()
	b.Settle(st, upErr)
	switch {
	case end.Complete:
		// The client has the answer up to the vendor's usage: whatever
		// came after (it hung up, the upstream's end failed), it is done.
	case end.ClientEnded():
		end.Note(r, info)
		return upErr, done
	case upErr != nil:
		e := StreamFailed(info, upErr)
		if e.Status == apierr.StatusClientClosed {
			return upErr, done // nobody to tell
		}
		if b.Charge != nil {
			hdr.Set(CostHeader, out.Charged().String())
		}
		_ = enc.Broken(sw, e)
		_ = sw.End()
		return upErr, done
	}
	if b.Charge != nil {
		hdr.Set(CostHeader, out.Charged().String())
	}
	if end.WriteErr == nil {
		_ = enc.End(sw, out.Usage)
		_ = sw.End() // with the response's end; see sse.Writer.End
	}
	return upErr, done
}

// StreamStarted counts a relayed stream's start in the metrics (nil: none).
func (h *Core) StreamStarted() {
	if h.Metrics != nil {
		h.Metrics.StreamStarted()
	}
}

// StreamEnded counts a relayed stream's end in the metrics (nil: none).
func (h *Core) StreamEnded() {
	if h.Metrics != nil {
		h.Metrics.StreamEnded()
	}
}

// writerPool recycles the relay's stream writers. The relay hands its
// writer to the door's encoder, an interface, so the writer cannot live on
// the relay's stack; taking it from a pool keeps a relayed stream at the
// allocations it had when the relay framed chat chunks itself.
var writerPool = sync.Pool{New: func() any { return new(sse.Writer) }}

// pooledWriter is EventWriter's writer for w, from writerPool; give it
// back with releaseWriter once the stream is over.
func (h *Core) pooledWriter(w http.ResponseWriter) *sse.Writer {
	sw := writerPool.Get().(*sse.Writer)
	*sw = *sse.NewWriter(w)
	sw.SetTimeout(h.WriteTimeout)
	return sw
}

// releaseWriter returns sw, whose stream is over, to writerPool; it keeps
// no reference to its response.
func releaseWriter(sw *sse.Writer) {
	*sw = sse.Writer{}
	writerPool.Put(sw)
}
