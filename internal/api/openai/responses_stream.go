package openai

import (
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/responses"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/sse"
)

// startEvents writes the headers of a Responses event stream: 200, SSE,
// and the cost trailer when billing is on.
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
	return h.eventWriter(w)
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
// chunk. Billing is chat's: the vendor's usage, else the delivered text
// counted as it goes; a client that leaves (or is too slow) pays for what
// it was sent, and so does one whose stream the upstream broke off after
// content reached it, which ends with response.failed (see streamend.go).
func (h *Handler) translateStream(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, d route.Deployment,
	req *provider.ChatRequest, tr *responses.Translation, id string, created int64, c *charge, out *outcome) {
	st, err := d.Chatter.ChatStream(r.Context(), req)
	if err != nil {
		c.release()
		h.fail(w, info, err)
		return
	}
	defer st.Close()
	more := st.Next()
	if !more && st.Err() != nil {
		c.release()
		h.fail(w, info, st.Err())
		out.usage, _ = st.Usage()
		return
	}
	sw := h.startEvents(w, info, c != nil)
	ts := tr.NewStream(id, created)
	buffered, _ := st.(provider.Buffered)
	delivered := c.delivered()
	defer delivered.release()
	werr := writeEvents(sw, ts.Start())
	var upstreamErr error
	for ; more && werr == nil; more = st.Next() {
		if out.ttft == 0 {
			out.ttft = h.now().Sub(info.Start)
		}
		evs, terr := ts.Chunk(st.Chunk())
		if terr != nil {
			upstreamErr = provider.BadResponse(info.Provider, terr)
			break
		}
		delivered.add(st.Chunk())
		if werr = writeEvents(sw, evs); werr != nil {
			break
		}
		if buffered != nil && buffered.Buffered() {
			continue
		}
		werr = sw.Flush()
	}
	if werr != nil {
		// The client left, or was too slow: it pays for what it was sent.
		out.usage = provider.Usage{}
		out.cost = c.settle(&out.usage, delivered.tokens, out)
		clientEnded(info, werr)
		return
	}
	if upstreamErr == nil {
		upstreamErr = st.Err()
	}
	if upstreamErr != nil {
		e := apierr.From(upstreamErr)
		info.Status, info.ErrCode = e.Status, e.Code
		if e.Err != nil {
			info.ErrDetail = e.Err.Error()
		}
		if e.Status == apierr.StatusClientClosed {
			out.usage = provider.Usage{}
			out.cost = c.settle(&out.usage, delivered.tokens, out)
			return // nobody to tell
		}
		if delivered.sent() > 0 {
			// The vendor broke the answer off after content reached the
			// client: it pays for what it was sent.
			out.usage = provider.Usage{}
			out.cost = c.settle(&out.usage, delivered.tokens, out)
			if c != nil {
				w.Header().Set(costHeader, out.cost.String())
			}
		} else {
			c.release() // nothing billable reached the client
		}
		_ = writeEvents(sw, ts.Fail(e))
		_ = sw.End()
		return
	}
	out.usage, _ = st.Usage()
	out.cost = c.settle(&out.usage, delivered.tokens, out)
	if c != nil {
		w.Header().Set(costHeader, out.cost.String())
	}
	_ = writeEvents(sw, ts.Finish(out.usage, h.now().Unix()))
	_ = sw.End() // with the response's end; see sse.Writer.End
}
