package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
)

// embeddings serves POST /v1/embeddings.
func (h *Handler) embeddings(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "embeddings"
	var out lifecycle.Outcome
	defer h.Record(info, &out)

	p, body, ok := h.authJSON(w, r, info)
	if !ok {
		return
	}
	params, perr := parseEmbeddings(body)
	if perr != nil {
		h.fail(w, info, perr)
		return
	}
	info.Model = params.Model
	t, d, ch, err := h.pickFor(r, info, p, params.Model, "embeddings", func(c provider.Chatter) bool { _, ok := c.(provider.Embedder); return ok })
	if err != nil {
		h.fail(w, info, err)
		return
	}
	defer t.Release()
	c, err := h.StartCharge(p, params.Model, d.Upstream, func(mp billing.ModelPrice) bool { return mp.Priced && mp.Price.Input > 0 })
	if err != nil {
		h.fail(w, info, err)
		return
	}
	if err := checkEmbedContext(c, &params); err != nil {
		h.fail(w, info, err)
		return
	}
	if err := reserveEmbeddings(c, r.Context(), &params); err != nil {
		h.fail(w, info, err)
		return
	}
	req := &provider.EmbedRequest{PublicModel: params.Model, UpstreamModel: d.Upstream, Body: body,
		Texts: params.Texts, Tokens: params.Tokens, Base64: params.Base64, Dimensions: params.Dimensions}
	count := func() provider.Usage { return provider.Usage{PromptTokens: embedTokens(c, &params)} }
	var res *provider.EmbedResponse
	u, d, err := h.Each(r, t, c, d, ch, func(u *lifecycle.Upstream, d route.Deployment, ch provider.Chatter) error {
		req.UpstreamModel = d.Upstream
		var err error
		res, err = ch.(provider.Embedder).Embed(u.Ctx(r), req)
		return err
	})
	defer u.End()
	if err != nil {
		c.SettleOwed(u.Owed(err, false), count, &out)
		h.fail(w, info, err)
		return
	}
	answer := res.Body
	out.Usage = res.Usage
	if !res.HasUsage {
		// The vendor counted nothing: the gateway counts and says so.
		n := embedTokens(c, &params)
		out.Usage, out.Estimated = provider.Usage{PromptTokens: n, TotalTokens: n}, true
		if answer, err = jsonx.Set(answer, "usage", fmt.Appendf(nil, `{"prompt_tokens":%d,"total_tokens":%d}`, n, n)); err != nil {
			err = provider.BadResponse(d.Provider, fmt.Errorf("embeddings answer: %w", err))
			c.SettleOwed(u.Owed(err, false), count, &out)
			h.fail(w, info, err)
			return
		}
	}
	cost, err := c.TokenCost(billing.Tokens{Prompt: out.Usage.PromptTokens})
	if err != nil {
		cost = c.Held() // absurd counts: charge the reservation, never nothing
	}
	out.Cost = c.SettleCost(cost)
	lifecycle.AnswerJSON(w, r, info, c != nil, &out, answer)
}

// checkEmbedContext refuses an input longer than the model's context
// window before anything is reserved or sent. Texts no longer in bytes than
// the window certainly fit; longer ones are counted (and, with another
// vendor's tokenizer, refused only when they certainly do not fit).
func checkEmbedContext(c *lifecycle.Charge, p *embedParams) error {
	if c == nil || c.Price.ContextWindow <= 0 {
		return nil
	}
	w := c.Price.ContextWindow
	tooLong := func(i int, n int64) error {
		return &apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest, Code: apierr.CodeContextLength,
			Param: "input", Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, input[%d] resulted in %d tokens. Please reduce the length of the input.", w, i, n)}
	}
	for i, ids := range p.Tokens {
		if int64(len(ids)) > w {
			return tooLong(i, int64(len(ids)))
		}
	}
	counter := c.Tok.AtMost(int(min(2*w, 1<<30)))
	for i, s := range p.Texts {
		if int64(len(s)) <= w {
			continue
		}
		n := int64(counter.Count([]byte(s)))
		if !c.Tok.Exact() {
			n = n * 9 / 10
		}
		if n > w {
			return tooLong(i, n)
		}
	}
	return nil
}

// reserveEmbeddings holds the most the inputs can cost: first the cheap
// bound (bytes of text, or the exact number of token ids); when the balance
// cannot cover that, the texts are counted.
func reserveEmbeddings(c *lifecycle.Charge, ctx context.Context, p *embedParams) error {
	if c == nil || c.Price.Free {
		return nil
	}
	bound := p.inputBound()
	err := reserveTokens(c, ctx, bound)
	var e *apierr.Error
	if err == nil || p.Texts == nil || !errors.As(err, &e) || e.Type != apierr.TypeInsufficientQuota {
		return err
	}
	n := embedTokens(c, p)
	if !c.Tok.Exact() {
		n += n / 4 // another vendor's tokenizer may count more
	}
	if n >= bound {
		return err
	}
	return reserveTokens(c, ctx, n)
}

// reserveTokens reserves the price of n input tokens.
func reserveTokens(c *lifecycle.Charge, ctx context.Context, n int64) error {
	amount, err := c.TokenCost(billing.Tokens{Prompt: n})
	if err != nil {
		return lifecycle.ReserveError(err, amount, "input")
	}
	return c.Reserve(ctx, amount, "input")
}

// embedTokens counts the input tokens with the model's tokenizer (token
// arrays exactly); without billing there is no tokenizer and it is 0.
func embedTokens(c *lifecycle.Charge, p *embedParams) int64 {
	if c == nil || c.Tok == nil {
		return 0
	}
	var n int64
	for _, ids := range p.Tokens {
		n += int64(len(ids))
	}
	for _, s := range p.Texts {
		n += int64(c.Tok.Count([]byte(s)))
	}
	return n
}
