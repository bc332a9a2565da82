package openai

import (
	"context"
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
)

// imageGenerations serves POST /v1/images/generations.
func (h *Handler) imageGenerations(w http.ResponseWriter, r *http.Request) {
	info := reqinfo.From(r.Context())
	info.Endpoint = "images.generations"
	var out lifecycle.Outcome
	defer h.Record(info, &out)

	p, body, ok := h.authJSON(w, r, info)
	if !ok {
		return
	}
	params, perr := parseImageGen(body)
	if perr != nil {
		h.fail(w, info, perr)
		return
	}
	info.Model = params.Model
	t, d, ch, err := h.pickFor(r, info, p, params.Model, "image generation", func(c provider.Chatter) bool {
		_, ok := c.(provider.ImageGenerator)
		return ok
	})
	if err != nil {
		h.fail(w, info, err)
		return
	}
	defer t.Release()
	bill, err := h.startImages(r.Context(), p, d, &params, "image generation")
	if err != nil {
		h.fail(w, info, err)
		return
	}
	req := &provider.ImageRequest{PublicModel: params.Model, UpstreamModel: d.Upstream, Body: body, Prompt: params.Prompt,
		N: params.N, Size: params.Size, Quality: params.Quality, Style: params.Style, User: params.User,
		ResponseFormat: params.ResponseFormat}
	var res *provider.ImageResponse
	u, _, err := h.Each(r, t, bill.c, d, ch, func(u *lifecycle.Upstream, d route.Deployment, ch provider.Chatter) error {
		req.UpstreamModel = d.Upstream
		var err error
		res, err = ch.(provider.ImageGenerator).GenerateImages(u.Ctx(r), req)
		return err
	})
	defer u.End()
	if err != nil {
		bill.unanswered(u, err, &out)
		h.fail(w, info, err)
		return
	}
	h.answerImages(w, r, info, &params, res, bill, &out)
}

// imageBill is the billing of one image request: the charge, and what it
// reserved for: the price of one image, or for a model billed by token the
// bound of the usage of the n images asked for.
type imageBill struct {
	c      *lifecycle.Charge
	unit   money.Micros        // per image
	tokens bool                // billed by token, from the vendor's usage
	bound  billing.ImageTokens // for n images
}

// startImages checks the request against the model's catalog entry (an
// image model, its sizes and qualities), prices it (by token where the
// catalog has image token prices, else per image) and reserves the most n
// images can cost. A model without a price for the size and quality is
// refused with model_not_priced unless it is free.
func (h *Handler) startImages(ctx context.Context, p gate.Principal, d route.Deployment, params *imageParams, what string) (*imageBill, error) {
	var mp billing.ModelPrice
	if h.Billing != nil {
		var known bool
		if mp, known = h.Billing.Prices(d.Model, d.Upstream); known && mp.Modality != "" && mp.Modality != "image" {
			return nil, apierr.Invalid("model", "The model '%s' does not support %s.", d.Model, what)
		}
	}
	if e := params.checkForModel(d.Model, d.Upstream, mp); e != nil {
		return nil, e
	}
	c, err := h.StartCharge(p, d.Model, d.Upstream, func(mp billing.ModelPrice) bool {
		_, ok := reserveUnit(mp, params)
		return ok || mp.ImageTokens.Priced()
	})
	if err != nil {
		return nil, err
	}
	b := &imageBill{c: c}
	if c == nil || c.Price.Free {
		return b, nil
	}
	var amount money.Micros
	if b.tokens = c.Price.ImageTokens.Priced(); b.tokens {
		b.bound = imageTokenBound(c.Price, params, params.N)
		amount, err = billing.ImageCost(c.Price.ImageTokens, b.bound, c.Ratio)
	} else {
		b.unit, _ = reserveUnit(c.Price, params)
		amount, err = c.FlatCost(b.unit, int64(params.N))
	}
	if err != nil {
		return nil, lifecycle.ReserveError(err, 0, "n")
	}
	if err := c.Reserve(ctx, amount, "n"); err != nil {
		return nil, err
	}
	return b, nil
}

// settle charges the answer and returns the cost. Per image: the images
// actually returned (never more than were reserved for). By token: the
// vendor's reported usage; without a report, what was reserved for the
// images returned (never nothing for images made). An answer without
// images and without usage costs nothing.
func (b *imageBill) settle(params *imageParams, res *provider.ImageResponse) money.Micros {
	if b == nil || b.c == nil || b.c.Price.Free {
		return 0
	}
	n := min(len(res.Images), params.N)
	if b.tokens {
		return b.settleTokens(params, res, n)
	}
	if n == 0 {
		b.c.Release()
		return 0
	}
	cost, err := b.c.FlatCost(settleUnit(b.c.Price, params, res, b.unit), int64(n))
	if err != nil {
		cost = b.c.Held() // unreachable: the reservation was computed the same way
	}
	return b.c.SettleCost(cost)
}

// settleTokens charges a model billed by token: the usage the vendor
// reported, else the reservation's bound for the n images returned.
func (b *imageBill) settleTokens(params *imageParams, res *provider.ImageResponse, n int) money.Micros {
	u, reported := reportedUsage(res)
	var t billing.ImageTokens
	switch {
	case reported:
		t = u.tokens()
	case n == 0:
		b.c.Release()
		return 0
	default:
		t = b.boundFor(params, n)
	}
	cost, err := billing.ImageCost(b.c.Price.ImageTokens, t, b.c.Ratio)
	if err != nil {
		cost = b.c.Held() // a usage too large to price: the reservation
	}
	return b.c.SettleCost(cost)
}

// boundFor is the reserved bound of the usage of n of the images asked
// for: the whole input, and the output of n images.
func (b *imageBill) boundFor(p *imageParams, n int) billing.ImageTokens {
	t := b.bound
	t.Output = t.Output / int64(max(p.N, 1)) * int64(n)
	return t
}

// release gives the reservation back.
func (b *imageBill) release() {
	if b != nil {
		b.c.Release()
	}
}

// unanswered settles an image request whose upstream call failed with
// err: once the vendor had it, it makes (and bills) the images it was asked
// for whether or not the client waits, so the reservation is charged.
func (b *imageBill) unanswered(u *lifecycle.Upstream, err error, out *lifecycle.Outcome) {
	out.Cost = b.c.SettleHeld(u.Owed(err, false))
}
