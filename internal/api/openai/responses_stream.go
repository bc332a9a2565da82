package openai

import (
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/lifecycle"
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
		hdr.Set("Trailer", lifecycle.CostHeader)
	}
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	info.Status = http.StatusOK
	h.StreamStarted()
	return h.EventWriter(w)
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
// chunk. Billing is chat's, by the rules in lifecycle's streamend.go: the event that
// carries the vendor's usage to the client is response.completed, which
// the translation writes once the upstream's stream has ended; a stream
// the upstream broke off after content reached the client ends with
// response.failed.
func (h *Handler) translateStream(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, t *lifecycle.Tries, ch provider.Chatter,
	req *provider.ChatRequest, tr *responses.Translation, id string, created int64, c *lifecycle.Charge, u *lifecycle.Upstream, out *lifecycle.Outcome) {
	st, err := ch.ChatStream(u.Ctx(r), req)
	if err != nil {
		t.Failed(err, u)
		c.SettleOwed(u.Owed(err, false), c.PromptCount, out)
		h.fail(w, info, err)
		return
	}
	defer st.Close()
	delivered := c.Delivered(nil)
	defer delivered.Release()
	b := lifecycle.StreamBill{Charge: c, Up: u, Delivered: delivered, Out: out}
	more := st.Next()
	if !more && st.Err() != nil {
		t.Failed(st.Err(), u)
		b.Settle(st, st.Err())
		h.fail(w, info, st.Err())
		return
	}
	t.Answered()
	sw := h.startEvents(w, info, c != nil)
	defer h.StreamEnded()
	ts := tr.NewStream(id, created)
	buffered, _ := st.(provider.Buffered)
	var end lifecycle.StreamEnd
	end.WriteErr = writeEvents(sw, ts.Start())
	var upstreamErr error
	for ; more && end.WriteErr == nil && !end.Stop(r, u); more = st.Next() {
		if out.TTFT == 0 {
			out.TTFT = h.Clock().Sub(info.Start)
		}
		evs, terr := ts.Chunk(st.Chunk())
		if terr != nil {
			upstreamErr = provider.BadResponse(info.Provider, terr)
			break
		}
		delivered.Add(st.Chunk())
		if end.WriteErr = writeEvents(sw, evs); end.WriteErr != nil {
			break
		}
		if buffered != nil && buffered.Buffered() {
			continue
		}
		end.WriteErr = sw.Flush()
	}
	end.Stop(r, u) // a drained call's client may have left while its end came
	end.Drain(u, st, nil)
	if upstreamErr == nil {
		upstreamErr = st.Err()
	}
	b.Settle(st, upstreamErr)
	if end.ClientEnded() {
		end.Note(r, info)
		return
	}
	if c != nil {
		w.Header().Set(lifecycle.CostHeader, out.Charged().String())
	}
	if upstreamErr != nil {
		e := lifecycle.StreamFailed(info, upstreamErr)
		if e.Status == apierr.StatusClientClosed {
			return // nobody to tell
		}
		_ = writeEvents(sw, ts.Fail(e))
		_ = sw.End()
		return
	}
	if err := writeEvents(sw, ts.Finish(out.Usage, h.Clock().Unix())); err != nil {
		lifecycle.ClientEnded(info, err) // it left before response.completed
		return
	}
	_ = sw.End() // with the response's end; see sse.Writer.End
}
