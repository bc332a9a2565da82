package openai

import (
	"context"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
)

// outcome is what the usage record needs beyond reqinfo.Info.
type outcome struct {
	usage     provider.Usage
	ttft      time.Duration
	cost      money.Micros
	estimated bool // token counts are the gateway's, not the vendor's
	// carried is what tries before the one that answered cost (the
	// prompt a vendor had before it failed to answer in time).
	carried money.Micros
}

// charged is what the request costs in all: its answer's charge and what
// the tries before it owed. The usage record and X-Modelgate-Cost show it.
func (o *outcome) charged() money.Micros { return o.cost + o.carried }

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
	t := h.newTries(info, params.Model, nil)
	defer t.plan.Release()
	if !t.plan.Has() || !h.Policy.Allows(p.Group, params.Model) {
		h.fail(w, info, apierr.ModelNotFound(params.Model))
		return
	}
	d, ch, err := t.next(r)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	req := &provider.ChatRequest{PublicModel: params.Model, UpstreamModel: d.Upstream, Body: body,
		Stream: params.Stream, IncludeUsage: params.IncludeUsage, ModelAt: params.modelAt, StreamOptionsAt: params.optionsAt}
	c, err := h.admit(r.Context(), info, p, d, req, params)
	limitTokenHeaders(w, info)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	var u *upstream // the try in flight's call, ended when the request is over
	defer func() { u.end() }()
	for {
		u = t.call(r, c)
		var (
			res  *provider.ChatResponse
			st   provider.ChatStream
			more bool
		)
		if params.Stream {
			st, more, err = openStream(u.ctx(r), ch, req)
		} else {
			res, err = ch.Chat(u.ctx(r), req)
		}
		if err == nil {
			if params.Stream {
				t.opened()
				upErr, done := h.relay(w, r, info, st, more, streamBill{c: c, up: u, delivered: c.delivered(), out: &out})
				t.streamEnded(upErr, done)
				return
			}
			t.answered()
			out.usage = res.Usage
			out.cost = c.settle(&out.usage, c.answerTokens(res.Body), &out)
			h.answerJSON(w, r, info, c != nil, &out, res.Body)
			return
		}
		nd, nch, owed, err := t.failover(r, err, u, c, c.promptCount, &out)
		u = nil
		if err != nil {
			h.fail(w, info, err)
			return
		}
		if owed != owesNothing || nd.PriceKey != d.PriceKey {
			// The try owes its prompt, or the next deployment is priced
			// otherwise: settle this charge and admit the request again.
			c.carry(owed, c.promptCount, &out)
			req.UpstreamModel = nd.Upstream
			if c, err = h.admit(r.Context(), info, p, nd, req, params); err != nil {
				h.fail(w, info, err)
				return
			}
		}
		d, ch, req.UpstreamModel = nd, nch, nd.Upstream
	}
}

// openStream opens a chat stream and reads its first chunk, so that a
// stream that fails at once fails here, before anything is written: with
// a proper status, or tried again elsewhere. more is the first Next's.
func openStream(ctx context.Context, ch provider.Chatter, req *provider.ChatRequest) (provider.ChatStream, bool, error) {
	st, err := ch.ChatStream(ctx, req)
	if err != nil {
		return nil, false, err
	}
	more := st.Next()
	if !more && st.Err() != nil {
		err := st.Err()
		st.Close()
		return nil, false, err
	}
	return st, more, nil
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
// It returns how the upstream's stream ended (upErr, nil for a clean end)
// and whether the client was done with it by then, for the provider's
// health (tries.streamEnded).
func (h *Handler) relay(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, st provider.ChatStream, more bool, b streamBill) (upErr error, done bool) {
	out := b.out
	defer st.Close()
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
	upErr, done = st.Err(), end.complete || end.clientEnded()
	b.charge(st, upErr)
	switch {
	case end.complete:
		// The client has the answer up to the vendor's usage: whatever
		// came after (it hung up, the upstream's end failed), it is done.
	case end.clientEnded():
		end.note(r, info)
		return upErr, done
	case upErr != nil:
		e := streamFailed(info, upErr)
		if e.Status == apierr.StatusClientClosed {
			return upErr, done // nobody to tell
		}
		if b.c != nil {
			hdr.Set(costHeader, out.charged().String())
		}
		_ = sw.Data(e.JSON())
		_ = sw.End()
		return upErr, done
	}
	if b.c != nil {
		hdr.Set(costHeader, out.charged().String())
	}
	if end.werr == nil {
		_ = sw.Done()
		_ = sw.End() // with the response's end; see sse.Writer.End
	}
	return upErr, done
}
