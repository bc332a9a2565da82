package openai

import (
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/responses"
	"github.com/modelgate/modelgate/internal/sse"
)

// startEvents writes the headers of a Responses event stream: 200, SSE,
// and the cost trailer when billing is on. It counts the stream in flight:
// the caller defers streamEnded.
func (h *Handler) startEvents(w http.ResponseWriter, info *reqinfo.Info, billed bool) *sse.Writer {
	hdr := w.Header()
	if billed {
		hdr.Set("Trailer", costHeader)
	}
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	info.Status = http.StatusOK
	h.streamStarted()
	return h.eventWriter(w)
}

// streamStarted counts a stream whose answer started (the metrics' streams
// in flight); the caller defers streamEnded.
func (h *Handler) streamStarted() {
	if h.Metrics != nil {
		h.Metrics.StreamStarted()
	}
}

// streamEnded uncounts a stream counted by streamStarted.
func (h *Handler) streamEnded() {
	if h.Metrics != nil {
		h.Metrics.StreamEnded()
	}
}

// writeEvents writes translated events, stopping at the first failure.
func writeEvents(sw *sse.Writer, evs []responses.Event) error {
	for _, ev := range evs {
		if err := sw.Event(ev.Type, ev.Data); err != nil {
			return err
		}
	}
	return nil
}

// translateStream relays a chat stream as Responses events, chunk by
// chunk. Billing is chat's, by the rules in streamend.go: the event that
// carries the vendor's usage to the client is response.completed, which
// the translation writes once the upstream's stream has ended; a stream
// the upstream broke off after content reached the client ends with
// response.failed.
func (h *Handler) translateStream(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, t *tries, ch provider.Chatter,
	req *provider.ChatRequest, tr *responses.Translation, id string, created int64, c *charge, u *upstream, out *outcome) {
	st, err := ch.ChatStream(u.ctx(r), req)
	if err != nil {
		t.failed(err, u)
		c.settleOwed(u.owed(err, false), c.promptCount, out)
		h.fail(w, info, err)
		return
	}
	defer st.Close()
	delivered := c.delivered()
	defer delivered.release()
	b := streamBill{c: c, up: u, delivered: delivered, out: out}
	more := st.Next()
	if !more && st.Err() != nil {
		t.failed(st.Err(), u)
		b.charge(st, st.Err())
		h.fail(w, info, st.Err())
		return
	}
	t.answered()
	sw := h.startEvents(w, info, c != nil)
	defer h.streamEnded()
	ts := tr.NewStream(id, created)
	buffered, _ := st.(provider.Buffered)
	var end streamEnd
	end.werr = writeEvents(sw, ts.Start())
	var upstreamErr error
	for ; more && end.werr == nil && !end.stop(r, u); more = st.Next() {
		if out.ttft == 0 {
			out.ttft = h.now().Sub(info.Start)
		}
		evs, terr := ts.Chunk(st.Chunk())
		if terr != nil {
			upstreamErr = provider.BadResponse(info.Provider, terr)
			break
		}
		delivered.add(st.Chunk())
		if end.werr = writeEvents(sw, evs); end.werr != nil {
			break
		}
		if buffered != nil && buffered.Buffered() {
			continue
		}
		end.werr = sw.Flush()
	}
	end.stop(r, u) // a drained call's client may have left while its end came
	end.drain(u, st, nil)
	if upstreamErr == nil {
		upstreamErr = st.Err()
	}
	b.charge(st, upstreamErr)
	if end.clientEnded() {
		end.note(r, info)
		return
	}
	if c != nil {
		w.Header().Set(costHeader, out.charged().String())
	}
	if upstreamErr != nil {
		e := streamFailed(info, upstreamErr)
		if e.Status == apierr.StatusClientClosed {
			return // nobody to tell
		}
		_ = writeEvents(sw, ts.Fail(e))
		_ = sw.End()
		return
	}
	if err := writeEvents(sw, ts.Finish(out.usage, h.now().Unix())); err != nil {
		clientEnded(info, err) // it left before response.completed
		return
	}
	_ = sw.End() // with the response's end; see sse.Writer.End
}
