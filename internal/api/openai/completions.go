package openai

import (
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
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
	var out outcome
	defer h.record(info, &out)

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
	cp, passthrough := h.completer(params.Model, d, ch)
	c, err := h.admitCompletion(r.Context(), info, p, params.Model, d.Upstream, body, params, passthrough)
	limitTokenHeaders(w, info)
	if err != nil {
		h.fail(w, info, err)
		return
	}
	req := &provider.CompletionRequest{PublicModel: params.Model, UpstreamModel: d.Upstream, Body: body,
		Stream: params.Stream, IncludeUsage: params.IncludeUsage}
	count := func() provider.Usage {
		n, _ := countPrompts(c.Tok, params.Prompt)
		return provider.Usage{PromptTokens: n}
	}
	var u *upstream // the try in flight's call, ended when the request is over
	defer func() { u.end() }()
	for {
		if c != nil {
			req.MaxOutput = c.Price.MaxOutput
		}
		u = t.call(r, c)
		var (
			res  *provider.ChatResponse
			st   provider.CompletionStream
			more bool
		)
		if params.Stream {
			if st, err = cp.CompleteStream(u.ctx(r), req); err == nil {
				if more = st.Next(); !more && st.Err() != nil {
					err = st.Err()
					st.Close()
				}
			}
		} else {
			res, err = cp.Complete(u.ctx(r), req)
		}
		if err == nil {
			if params.Stream {
				t.opened()
				upErr, done := h.relay(w, r, info, st, more, streamBill{c: c, up: u, delivered: c.completionDelivered(), legacy: true, prompt: params.Prompt, out: &out})
				t.streamEnded(upErr, done)
				return
			}
			t.answered()
			out.usage = res.Usage
			out.cost = c.settleCompletion(&out.usage, params.Prompt, c.completionTokens(res.Body), &out)
			h.answerJSON(w, r, info, c != nil, &out, res.Body)
			return
		}
		nd, nch, owed, err := t.failover(r, err, u, c, count, &out)
		u = nil
		if err != nil {
			h.fail(w, info, err)
			return
		}
		ncp, np := h.completer(params.Model, nd, nch)
		if owed != owesNothing || nd.PriceKey != d.PriceKey || np != passthrough {
			c.carry(owed, count, &out) // see chat
			if c, err = h.admitCompletion(r.Context(), info, p, params.Model, nd.Upstream, body, params, np); err != nil {
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
