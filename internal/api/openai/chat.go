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
	"github.com/modelgate/modelgate/internal/telemetry"
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
	c, err := h.admit(r.Context(), info, p, d, req, params)
	limitTokenHeaders(w, info)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	u := h.callUpstream(r, c)
	defer u.end()
	if params.Stream {
		h.stream(w, r, info, d, req, c, u, &out)
		return
	}
	res, err := d.Chatter.Chat(u.ctx(r), req)
	if err != nil {
		c.settleOwed(u.owed(err, false), c.promptCount, &out)
		h.fail(w, info, err)
		return
	}
	out.usage = res.Usage
	out.cost = c.settle(&out.usage, c.answerTokens(res.Body), &out)
	h.answerJSON(w, r, info, c != nil, &out, res.Body)
}

// stream relays chunks as they arrive. The first chunk is read before the
// response starts, so a request that fails at once still gets a proper
// status code; after that, failures end the stream with an error event.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, d route.Deployment, req *provider.ChatRequest,
	c *charge, u *upstream, out *outcome) {
	st, err := d.Chatter.ChatStream(u.ctx(r), req)
	if err != nil {
		c.settleOwed(u.owed(err, false), c.promptCount, out)
		h.fail(w, info, err)
		return
	}
	h.relay(w, r, info, st, streamBill{c: c, up: u, delivered: c.delivered(), out: out})
}

// streamBill is how a relayed stream is charged: the charge and the call
// (nil without billing), the record of what reached the client, and, for
// a legacy completion, its prompt member (a chat request's prompt is its
// body, which the charge keeps).
type streamBill struct {
	c         *charge
	up        *upstream
	delivered *delivered
	legacy    bool
	prompt    []byte // legacy completions only
	out       *outcome
}

// settle charges the vendor's usage u, completed by the gateway's count
// when the vendor reported none.
func (b streamBill) settle(u *provider.Usage) money.Micros {
	if b.legacy {
		return b.c.settleCompletion(u, b.prompt, b.delivered.tokens, b.out)
	}
	return b.c.settle(u, b.delivered.tokens, b.out)
}

// count is the gateway's count of the prompt and of what was delivered.
func (b streamBill) count() provider.Usage {
	var u provider.Usage
	if b.legacy {
		u.PromptTokens, _ = countPrompts(b.c.Tok, b.prompt)
	} else {
		u = b.c.promptCount()
	}
	u.CompletionTokens = b.delivered.tokens()
	return u
}

// charge settles a stream that stopped with upErr (nil: a clean end) by
// the rules in streamend.go.
func (b streamBill) charge(st usageStream, upErr error) {
	if u, ok := st.Usage(); ok {
		b.out.usage = u
		b.out.cost = b.settle(&b.out.usage)
		return
	}
	b.c.settleOwed(b.up.owed(upErr, b.delivered.sent() > 0), b.count, b.out)
}

// relay sends the chunks of st to the client as they arrive (chat and
// legacy completions share it) and charges the stream by the rules in
// streamend.go.
func (h *Handler) relay(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, st provider.ChatStream, b streamBill) {
	out := b.out
	defer st.Close()
	more := st.Next()
	if !more && st.Err() != nil {
		b.charge(st, st.Err())
		h.fail(w, info, st.Err())
		return
	}
	hdr := w.Header()
	if b.c != nil {
		hdr.Set("Trailer", costHeader)
	}
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	info.Status = http.StatusOK
	h.streamStarted()
	defer h.streamEnded()
	sw := h.eventWriter(w)
	buffered, _ := st.(provider.Buffered)
	// Delivered text is counted as it goes (bounded memory), for when the
	// vendor's usage never comes: the client left, or the vendor sends none.
	defer b.delivered.release()
	var end streamEnd
	for ; more && !end.stop(r, b.up); more = st.Next() {
		if out.ttft == 0 {
			out.ttft = h.now().Sub(info.Start)
		}
		if end.werr = sw.Data(st.Chunk()); end.werr != nil {
			break
		}
		end.wrote(r, st)
		b.delivered.add(st.Chunk())
		if buffered != nil && buffered.Buffered() {
			continue // the next chunk is already here; flush after it
		}
		if end.werr = sw.Flush(); end.werr != nil {
			break
		}
	}
	end.stop(r, b.up) // a drained call's client may have left while its end came
	end.drain(b.up, st, nil)
	upErr := st.Err()
	b.charge(st, upErr)
	switch {
	case end.complete:
		// The client has the answer up to the vendor's usage: whatever
		// came after (it hung up, the upstream's end failed), it is done.
	case end.clientEnded():
		end.note(r, info)
		return
	case upErr != nil:
		e := streamFailed(info, upErr)
		if e.Status == apierr.StatusClientClosed {
			return // nobody to tell
		}
		if b.c != nil {
			hdr.Set(costHeader, out.cost.String())
		}
		_ = sw.Data(e.JSON())
		_ = sw.End()
		return
	}
	if b.c != nil {
		hdr.Set(costHeader, out.cost.String())
	}
	if end.werr == nil {
		_ = sw.Done()
		_ = sw.End() // with the response's end; see sse.Writer.End
	}
}

// record leaves the usage record of the request, whatever happened, once
// its key was authenticated. A request that ends without an account (no
// key or a bad one, an unknown path, a wrong method, a signed image link)
// is nobody's to bill or show, and anyone can send any number of them: it
// is counted by reason instead (see refuse), so it cannot grow the database.
// So is a key's request the gateway refused itself before any upstream
// call, for nothing (a bad parameter, an unknown model, no balance, a rate
// limit): a key with no balance can send thousands a second, and records
// are kept for months, so it is counted per key, reason and minute (see
// refusal).
//
// It runs once per request (info.Recorded): the usage recorder stores a
// request's record without looking whether it has it already. It is also
// where every request is counted in the metrics, whichever of the three
// ways it is recorded.
func (h *Handler) record(info *reqinfo.Info, out *outcome) {
	if info.Recorded {
		return
	}
	info.Recorded = true
	h.unlimit(info, out)
	end := h.now()
	status := info.Status
	if status == 0 {
		status = http.StatusOK
	}
	refused := info.AccountID != "" && refusal(info, status, out)
	if h.Metrics != nil {
		m := telemetry.Request{Endpoint: info.Endpoint, Model: info.Model, Provider: info.Provider, Status: status,
			Duration: end.Sub(info.Start), TTFT: out.ttft, PromptTokens: out.usage.PromptTokens,
			CompletionTokens: out.usage.CompletionTokens, CostMicros: int64(out.cost), VendorFailed: info.VendorFailed}
		if refused {
			m.Refusal = info.ErrCode
		}
		h.Metrics.Request(m)
	}
	if info.AccountID == "" {
		h.refuse(info, status)
		return
	}
	if h.KeyRefusals != nil && refused {
		h.KeyRefusals.Count(store.RefusalCount{AccountID: info.AccountID, KeyID: info.KeyID,
			Minute: info.Start, Endpoint: info.Endpoint, Reason: info.ErrCode, Status: status})
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

// refusal reports whether a request that ended with status is one the
// gateway refused itself, before any upstream call and for nothing: a
// client error (not 499, the client leaving) with an error code, no charge,
// and no error from the upstream.
func refusal(info *reqinfo.Info, status int, out *outcome) bool {
	return status >= http.StatusBadRequest && status < http.StatusInternalServerError &&
		status != apierr.StatusClientClosed && info.ErrCode != "" && !info.Upstreamed &&
		out.cost == 0 && out.usage == (provider.Usage{})
}
