package openai

import (
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/completechat"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
)

// completions serves POST /v1/completions, OpenAI's legacy text
// completions. Any deployment of the model can serve it: an adapter that
// implements provider.Completer (OpenAI-compatible vendors) gets the body
// passed through, unless the catalog knows the model as a chat model; any
// other gets it translated to chat and back (completechat), which refuses
// what chat models cannot do.
func (h *Handler) completions(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "completions"
	var out lifecycle.Outcome
	defer h.Record(info, &out)

	p, body, ok := h.authJSON(w, r, info)
	if !ok {
		return
	}
	params, perr := parseCompletion(body)
	if perr != nil {
		h.fail(w, info, perr)
		return
	}
	info.Model, info.Stream = params.Model, params.Stream
	t := h.NewTries(info, params.Model, nil)
	defer t.Release()
	if !t.Has() || !h.Policy.Allows(p.Group, params.Model) {
		h.fail(w, info, apierr.ModelNotFound(params.Model))
		return
	}
	d, ch, err := t.Next(r)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	cp, passthrough := h.completer(params.Model, d, ch)
	c, err := h.AdmitCompletion(r.Context(), info, p, params.Model, d.Upstream, body, params.CompletionParams, passthrough)
	lifecycle.LimitTokenHeaders(w, info)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	req := &provider.CompletionRequest{PublicModel: params.Model, UpstreamModel: d.Upstream, Body: body,
		Stream: params.Stream, IncludeUsage: params.IncludeUsage}
	var u *lifecycle.Upstream // the try in flight's call, ended when the request is over
	defer func() { u.End() }()
	for {
		if c != nil {
			req.MaxOutput = c.Price.MaxOutput
		}
		u = t.Call(r, c)
		var (
			res  *provider.ChatResponse
			st   provider.CompletionStream
			more bool
		)
		if params.Stream {
			if st, err = cp.CompleteStream(u.Ctx(r), req); err == nil {
				if more = st.Next(); !more && st.Err() != nil {
					err = st.Err()
					st.Close()
				}
			}
		} else {
			res, err = cp.Complete(u.Ctx(r), req)
		}
		if err == nil {
			if params.Stream {
				t.Opened()
				upErr, done := h.Relay(w, r, info, st, more, lifecycle.StreamBill{Charge: c, Up: u, Delivered: c.Delivered(lifecycle.AddCompletionText), Out: &out}, chatEncoder{})
				t.StreamEnded(upErr, done)
				return
			}
			t.Answered()
			out.Usage = res.Usage
			out.Cost = c.Settle(&out.Usage, c.CompletionTokens(res.Body), &out)
			lifecycle.AnswerJSON(w, r, info, c != nil, &out, res.Body)
			return
		}
		nd, nch, owed, err := t.Failover(r, err, u, c, c.PromptCount, &out)
		u = nil
		if err != nil {
			h.fail(w, info, err)
			return
		}
		ncp, np := h.completer(params.Model, nd, nch)
		if owed != lifecycle.OwesNothing || nd.PriceKey != d.PriceKey || np != passthrough {
			c.Carry(owed, c.PromptCount, &out) // see chat
			if c, err = h.AdmitCompletion(r.Context(), info, p, params.Model, nd.Upstream, body, params.CompletionParams, np); err != nil {
				h.fail(w, info, err)
				return
			}
		}
		d, cp, passthrough, req.UpstreamModel = nd, ncp, np, nd.Upstream
	}
}

// completer is how a deployment serves legacy completions: passed through
// to a vendor that has them, for a model that is no chat model; else
// translated to chat.
func (h *Handler) completer(model string, d route.Deployment, ch provider.Chatter) (provider.Completer, bool) {
	cp, passthrough := ch.(provider.Completer)
	if passthrough && h.chatModel(model, d.Upstream) {
		passthrough = false
	}
	if !passthrough {
		cp = completechat.New(ch)
	}
	return cp, passthrough
}

// chatModel reports whether the catalog knows the model as a chat model
// (the default for models the operator adds). OpenAI and most compatible
// vendors refuse chat models on /completions (OpenAI answers 404), so
// those are translated to chat even where the adapter could pass the
// request through; modality completion (gpt-3.5-turbo-instruct, davinci-002,
// or an operator's base model on vLLM) or an unknown one passes through.
func (h *Handler) chatModel(public, upstream string) bool {
	if h.Billing == nil {
		return false
	}
	mp, ok := h.Billing.Prices(public, upstream)
	return ok && mp.Modality == "chat"
}
