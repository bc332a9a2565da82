package lifecycle

import (
	"context"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/sse"
)

// Outcome is what the usage record needs beyond reqinfo.Info.
type Outcome struct {
	Usage     provider.Usage
	TTFT      time.Duration
	Cost      money.Micros
	Estimated bool // token counts are the gateway's, not the vendor's
	// Carried is what tries before the one that answered cost (the
	// prompt a vendor had before it failed to answer in time).
	Carried money.Micros
}

// Charged is what the request costs in all: its answer's charge and what
// the tries before it owed. The usage record and X-Modelgate-Cost show it.
func (o *Outcome) Charged() money.Micros { return o.Cost + o.Carried }

// CostHeader carries the charged cost, in currency units, on every
// response (a trailer on streams, whose cost is known only at the end).
const CostHeader = "X-Modelgate-Cost"

// ChatEncoder is how a front door speaks the chat exchange's answers in
// its wire format. The OpenAI door's is a zero-size value: converting it
// to the interface allocates nothing.
type ChatEncoder interface {
	// Fail answers err, an error before anything was written, and notes
	// it on info (see Note).
	Fail(w http.ResponseWriter, info *reqinfo.Info, err error)
	// Answer turns a complete chat.completion (the vendor's, as the
	// adapter returns it) into the bytes to send, JSON; out is settled.
	Answer(body []byte, out *Outcome) ([]byte, error)
	// Chunk sends one relayed chunk (a chat.completion.chunk for chat).
	Chunk(sw *sse.Writer, chunk []byte) error
	// End sends a complete stream's end (OpenAI: data: [DONE]); u is the
	// settled usage.
	End(sw *sse.Writer, u provider.Usage) error
	// Broken sends the error that broke a started stream.
	Broken(sw *sse.Writer, e *apierr.Error) error
}

// Chat runs the chat exchange every door shares, from the model check
// (404 model_not_found when the router has no deployment of the model or
// p's group may not use it) to the outcome the usage record shows: route,
// admit (AdmitChat), call with failover, answer or relay, settle. The
// door has authenticated, parsed req's body (req.Body, PublicModel,
// Stream, IncludeUsage and the adapter's spans) and set info.Endpoint,
// Model and Stream; it defers Record itself. Errors before anything was
// written go to enc.Fail.
func (h *Core) Chat(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, p gate.Principal,
	req *provider.ChatRequest, params ChatParams, enc ChatEncoder, out *Outcome) {
	t := h.NewTries(info, params.Model, nil)
	defer t.Release()
	if !t.Has() || !h.Policy.Allows(p.Group, params.Model) {
		enc.Fail(w, info, apierr.ModelNotFound(params.Model))
		return
	}
	d, ch, err := t.Next(r)
	if err != nil {
		enc.Fail(w, info, err)
		return
	}
	req.UpstreamModel = d.Upstream
	c, err := h.AdmitChat(r.Context(), info, p, d, req, params)
	LimitTokenHeaders(w, info)
	if err != nil {
		enc.Fail(w, info, err)
		return
	}
	var u *Upstream // the try in flight's call, ended when the request is over
	defer func() { u.End() }()
	for {
		u = t.Call(r, c)
		var (
			res  *provider.ChatResponse
			st   provider.ChatStream
			more bool
		)
		if params.Stream {
			st, more, err = openStream(u.Ctx(r), ch, req)
		} else {
			res, err = ch.Chat(u.Ctx(r), req)
		}
		if err == nil {
			if params.Stream {
				t.Opened()
				upErr, done := h.Relay(w, r, info, st, more, StreamBill{Charge: c, Up: u, Delivered: c.Delivered(nil), Out: out}, enc)
				t.StreamEnded(upErr, done)
				return
			}
			t.Answered()
			out.Usage = res.Usage
			out.Cost = c.Settle(&out.Usage, c.AnswerTokens(res.Body), out)
			body, err := enc.Answer(res.Body, out)
			if err != nil {
				enc.Fail(w, info, err)
				return
			}
			AnswerJSON(w, r, info, c != nil, out, body)
			return
		}
		nd, nch, owed, err := t.Failover(r, err, u, c, c.PromptCount, out)
		u = nil
		if err != nil {
			enc.Fail(w, info, err)
			return
		}
		if owed != OwesNothing || nd.PriceKey != d.PriceKey {
			// The try owes its prompt, or the next deployment is priced
			// otherwise: settle this charge and admit the request again.
			c.Carry(owed, c.PromptCount, out)
			req.UpstreamModel = nd.Upstream
			if c, err = h.AdmitChat(r.Context(), info, p, nd, req, params); err != nil {
				enc.Fail(w, info, err)
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

// AnswerJSON is WriteJSON for an answer the vendor gave: a client that
// left while the gateway waited for it (a drained call) is recorded as
// gone, and nothing is written.
func AnswerJSON(w http.ResponseWriter, r *http.Request, info *reqinfo.Info, billed bool, out *Outcome, body []byte) {
	if ClientGone(r) {
		info.Status, info.ErrCode, info.ErrDetail = apierr.StatusClientClosed, apierr.CodeClientClosed, "the client left before the answer"
		return
	}
	WriteJSON(w, info, billed, out, body)
}

// WriteJSON answers 200 with body and the cost header (when billing is on).
func WriteJSON(w http.ResponseWriter, info *reqinfo.Info, billed bool, out *Outcome, body []byte) {
	if billed {
		w.Header().Set(CostHeader, out.Charged().String())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	info.Status = http.StatusOK
	if _, err := w.Write(body); err != nil {
		info.Status, info.ErrCode, info.ErrDetail = apierr.StatusClientClosed, apierr.CodeClientClosed, err.Error()
	}
}
