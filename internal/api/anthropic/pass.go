package anthropic

import (
	"context"
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/sse"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// pass serves a Messages request on the model's Anthropic deployments
// (t walks only those): the client's body goes upstream with its model
// patched, and the answer comes back as the vendor sent it, event by
// event, with the public model id. Failover, reservations and settlement
// are the lifecycle's, as on the OpenAI door.
func (h *Handler) pass(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, p gate.Principal, t *lifecycle.Tries,
	pm *parsed, body []byte, out *lifecycle.Outcome) {
	d, ch, err := t.Next(r)
	if err != nil {
		fail(w, info, err)
		return
	}
	req := &provider.MessagesRequest{PublicModel: pm.Model, UpstreamModel: d.Upstream, Body: body, Stream: pm.Stream,
		Header: h.forwarded(r)}
	c, err := h.AdmitBody(r.Context(), info, p, pm.Model, d.Upstream, body, pm.MaxTokens, h.promptCounter(pm, d.Upstream, len(body)))
	lifecycle.LimitTokenHeaders(w, info)
	if err != nil {
		fail(w, info, err)
		return
	}
	var u *lifecycle.Upstream
	defer func() { u.End() }()
	for {
		u = t.Call(r, c)
		m := ch.(provider.Messenger)
		if pm.Stream {
			st, more, serr := openEvents(u.Ctx(r), m, req)
			if serr == nil {
				t.Opened()
				upErr, done := h.Relay(w, r, info, st, more, lifecycle.StreamBill{Charge: c, Up: u, Delivered: c.Delivered(eventText), Out: out}, passEncoder{})
				t.StreamEnded(upErr, done)
				return
			}
			err = serr
		} else {
			res, merr := m.Messages(u.Ctx(r), req)
			if merr == nil {
				t.Answered()
				out.Usage = res.Usage
				out.Cost = c.Settle(&out.Usage, answerTokens(c, res.Body), out)
				answer(w, r, info, c != nil, out, res.Body)
				return
			}
			err = merr
		}
		d, ch, c, err = h.again(r, info, p, t, err, u, c, d, pm, req, body, out)
		u = nil // ended by again
		if err != nil {
			fail(w, info, err)
			return
		}
	}
}

// again ends the failed try (err, on u) and gives the next deployment to
// try, admitting the request again when the failed try owes something or
// the next deployment is priced otherwise; its error is the one to answer.
func (h *Handler) again(r *http.Request, info *reqinfo.Info, p gate.Principal, t *lifecycle.Tries, err error, u *lifecycle.Upstream,
	c *lifecycle.Charge, d route.Deployment, pm *parsed, req *provider.MessagesRequest, body []byte,
	out *lifecycle.Outcome) (route.Deployment, provider.Chatter, *lifecycle.Charge, error) {
	nd, nch, owed, err := t.Failover(r, err, u, c, c.PromptCount, out)
	if err != nil {
		return d, nil, c, err
	}
	if owed != lifecycle.OwesNothing || nd.PriceKey != d.PriceKey {
		c.Carry(owed, c.PromptCount, out)
		if c, err = h.AdmitBody(r.Context(), info, p, pm.Model, nd.Upstream, body, pm.MaxTokens, h.promptCounter(pm, nd.Upstream, len(body))); err != nil {
			return nd, nil, nil, err
		}
	}
	req.UpstreamModel = nd.Upstream
	return nd, nch, c, nil
}

// openEvents opens a Messages stream and reads its first event, so that a
// stream that fails at once fails before anything is written (with its
// status, or tried again elsewhere).
func openEvents(ctx context.Context, m provider.Messenger, req *provider.MessagesRequest) (provider.ChatStream, bool, error) {
	st, err := m.MessagesStream(ctx, req)
	if err != nil {
		return nil, false, err
	}
	more := st.Next()
	if !more && st.Err() != nil {
		err := st.Err()
		st.Close()
		return nil, false, err
	}
	return events{st}, more, nil
}

// events shows a Messages stream as the lifecycle's relay reads streams:
// each chunk is one whole SSE event.
type events struct{ provider.MessagesStream }

func (e events) Chunk() []byte { return e.Event() }

// Buffered tells the relay the next event is already here, so it flushes
// once after a burst rather than after every event (provider.Buffered).
func (e events) Buffered() bool {
	b, ok := e.MessagesStream.(provider.Buffered)
	return ok && b.Buffered()
}

// promptCounter counts a Messages request's prompt with the model's
// tokenizer, through its chat translation (what the gateway counts a chat
// prompt by), for the reservation when the cheap bound does not fit and
// for a settlement without the vendor's usage. size is the body's length,
// the count of a request that cannot be translated (every token is at
// least a byte).
func (h *Handler) promptCounter(pm *parsed, upstream string, size int) func() (int64, error) {
	return func() (int64, error) {
		tok := h.tokenizer(pm.Model, upstream)
		body, e := toChat(pm, chatOptions{})
		if tok == nil || e != nil {
			return int64(size), nil
		}
		n, err := tok.ChatPrompt(body)
		return int64(n), err
	}
}

// tokenizer is the tokenizer the catalog names for model (served as
// upstream), nil when billing is off.
func (h *Handler) tokenizer(model, upstream string) *tokenize.Tokenizer {
	if h.Billing == nil || h.Billing.Tokens == nil {
		return nil
	}
	name := ""
	if mp, ok := h.Billing.Prices(model, upstream); ok {
		name = mp.Tokenizer
	}
	return h.Billing.Tokens.For(name)
}

// passEncoder writes a pass-through answer as the vendor sent it.
type passEncoder struct{}

func (passEncoder) Fail(w http.ResponseWriter, info *reqinfo.Info, err error) { fail(w, info, err) }
func (passEncoder) Answer(body []byte, _ *lifecycle.Outcome) ([]byte, error)  { return body, nil }
func (passEncoder) Chunk(sw *sse.Writer, ev []byte) error                     { return sw.Raw(ev) }
func (passEncoder) End(*sse.Writer, provider.Usage) error                     { return nil } // message_stop came from the vendor
func (passEncoder) Broken(sw *sse.Writer, e *apierr.Error) error              { return brokenEvent(sw, e) }

// brokenEvent writes Anthropic's error event for the failure that broke a
// started stream.
func brokenEvent(sw *sse.Writer, e *apierr.Error) error {
	_, b := errorJSON(e, "")
	return sw.Event("error", b)
}

// answer writes a complete Message (its cost in the cost header when
// billed); a client that left while the vendor answered is noted gone.
func answer(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, billed bool, out *lifecycle.Outcome, body []byte) {
	if lifecycle.ClientGone(r) {
		info.Status, info.ErrCode, info.ErrDetail = apierr.StatusClientClosed, apierr.CodeClientClosed, "the client left before the answer"
		return
	}
	if billed {
		w.Header().Set(lifecycle.CostHeader, out.Charged().String())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	info.Status = http.StatusOK
	if _, err := w.Write(body); err != nil {
		info.Status, info.ErrCode, info.ErrDetail = apierr.StatusClientClosed, apierr.CodeClientClosed, err.Error()
	}
}
