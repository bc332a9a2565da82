package openai

import (
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/store"
)

// outcome is what the usage record needs beyond reqinfo.Info.
type outcome struct {
	usage     provider.Usage
	ttft      time.Duration
	cost      money.Micros
	estimated bool // token counts are the gateway's, not the vendor's
}

// costHeader carries the charged cost, in currency units, on every
// response (a trailer on streams, whose cost is known only at the end).
const costHeader = "X-Modelgate-Cost"

// chat serves POST /v1/chat/completions.
func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "chat.completions"
	var out outcome
	defer h.record(info, &out)

	p, body, ok := h.authJSON(w, r, info)
	if !ok {
		return
	}
	params, perr := parseChat(body)
	if perr != nil {
		h.fail(w, info, perr)
		return
	}
	info.Model, info.Stream = params.Model, params.Stream
	d, ok := h.Router.Pick(params.Model)
	if !ok || !h.Policy.Allows(p.Group, params.Model) {
		h.fail(w, info, apierr.ModelNotFound(params.Model))
		return
	}
	info.Provider, info.Upstream = d.Provider, d.Upstream
	req := &provider.ChatRequest{PublicModel: params.Model, UpstreamModel: d.Upstream, Body: body,
		Stream: params.Stream, IncludeUsage: params.IncludeUsage, ModelAt: params.modelAt, StreamOptionsAt: params.optionsAt}
	c, err := h.admit(r.Context(), p, d, req, params)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	if params.Stream {
		h.stream(w, r, info, d, req, c, &out)
		return
	}
	res, err := d.Chatter.Chat(r.Context(), req)
	if err != nil {
		c.release()
		h.fail(w, info, err)
		return
	}
	out.usage = res.Usage
	out.cost = c.settle(&out.usage, c.answerTokens(res.Body), &out)
	h.writeJSON(w, info, c != nil, &out, res.Body)
}

// stream relays chunks as they arrive. The first chunk is read before the
// response starts, so a request that fails at once still gets a proper
// status code; after that, failures end the stream with an error event.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, d route.Deployment, req *provider.ChatRequest, c *charge, out *outcome) {
	st, err := d.Chatter.ChatStream(r.Context(), req)
	if err != nil {
		c.release()
		h.fail(w, info, err)
		return
	}
	h.relay(w, info, st, c, c.delivered(), func(u *provider.Usage, completion func() int64) money.Micros {
		return c.settle(u, completion, out)
	}, out)
}

// relay sends the chunks of st to the client as they arrive (chat and
// legacy completions share it). delivered counts what reached the client
// (nil without billing); settle charges the final usage, completing it with
// the delivered count when the vendor reported none.
func (h *Handler) relay(w http.ResponseWriter, info *reqinfo.Info, st provider.ChatStream, c *charge, delivered *delivered,
	settle func(u *provider.Usage, completion func() int64) money.Micros, out *outcome) {
	defer st.Close()
	more := st.Next()
	if !more && st.Err() != nil {
		c.release()
		h.fail(w, info, st.Err())
		out.usage, _ = st.Usage()
		return
	}
	hdr := w.Header()
	if c != nil {
		hdr.Set("Trailer", costHeader)
	}
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	info.Status = http.StatusOK
	sw := h.eventWriter(w)
	buffered, _ := st.(provider.Buffered)
	// Delivered text is counted as it goes (bounded memory), for when the
	// vendor's usage never comes: the client left, or the vendor sends none.
	defer delivered.release()
	var werr error
	for ; more; more = st.Next() {
		if out.ttft == 0 {
			out.ttft = h.now().Sub(info.Start)
		}
		if werr = sw.Data(st.Chunk()); werr != nil {
			break
		}
		delivered.add(st.Chunk())
		if buffered != nil && buffered.Buffered() {
			continue // the next chunk is already here; flush after it
		}
		if werr = sw.Flush(); werr != nil {
			break
		}
	}
	out.usage, _ = st.Usage()
	if werr != nil {
		// The client left, or was too slow to take a write: it pays for
		// what it was sent, not for the rest (see streamend.go).
		out.usage = provider.Usage{}
		out.cost = settle(&out.usage, delivered.tokens)
		clientEnded(info, werr)
		return
	}
	if err := st.Err(); err != nil {
		e := apierr.From(err)
		switch {
		case e.Status == apierr.StatusClientClosed || delivered.sent() > 0:
			// The client left while we waited upstream, or the upstream
			// ended the stream after content reached the client: either
			// way the client pays for what it was sent.
			out.usage = provider.Usage{}
			out.cost = settle(&out.usage, delivered.tokens)
			if c != nil {
				hdr.Set(costHeader, out.cost.String())
			}
		default:
			c.release() // nothing billable reached the client
		}
		info.Status, info.ErrCode = e.Status, e.Code
		if e.Err != nil {
			info.ErrDetail = e.Err.Error()
		}
		if e.Status == apierr.StatusClientClosed {
			return // nobody to tell
		}
		_ = sw.Data(e.JSON())
		_ = sw.End()
		return
	}
	out.cost = settle(&out.usage, delivered.tokens)
	if c != nil {
		hdr.Set(costHeader, out.cost.String())
	}
	_ = sw.Done()
	_ = sw.End() // with the response's end; see sse.Writer.End
}

// record leaves the usage record of the request, whatever happened, once
// its key was authenticated. A request that ends without an account (no
// key or a bad one, an unknown path, a wrong method, a signed image link)
// is nobody's to bill or show, and anyone can send any number of them: it
// is counted by reason instead (see refuse), so it cannot grow the database.
//
// It runs once per request (info.Recorded): the usage recorder stores a
// request's record without looking whether it has it already.
func (h *Handler) record(info *reqinfo.Info, out *outcome) {
	if info.Recorded {
		return
	}
	info.Recorded = true
	end := h.now()
	status := info.Status
	if status == 0 {
		status = http.StatusOK
	}
	if info.AccountID == "" {
		h.refuse(info, status)
		return
	}
	h.Usage.Record(store.UsageRecord{
		RequestID: info.ID, Time: info.Start, AccountID: info.AccountID, KeyID: info.KeyID,
		Endpoint: info.Endpoint, Model: info.Model, Provider: info.Provider, UpstreamModel: info.Upstream,
		Stream: info.Stream, PromptTokens: out.usage.PromptTokens, CompletionTokens: out.usage.CompletionTokens,
		CachedTokens: out.usage.CachedTokens, ReasoningTokens: out.usage.ReasoningTokens, Estimated: out.estimated, Cost: out.cost,
		Latency: end.Sub(info.Start), TTFT: out.ttft, Status: status, ErrorCode: info.ErrCode,
	})
}
