package lifecycle

import (
	"context"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/reqinfo"
)

// AdmitBody admits a request whose body is not a chat body (the Anthropic
// door's pass-through of Messages bodies): it prices the model (503
// model_not_priced as for chat), counts the prompt bound and maxOutput
// against the key's token limit, and reserves the most the request can
// cost: the prompt bounded from above by the body (PromptBound) plus
// maxOutput tokens (the model's output ceiling when maxOutput is 0); when
// the balance cannot cover that bound, count's prompt tokens (with
// ImageAllowance, and a quarter more for another vendor's tokenizer) plus
// maxOutput, as AdmitChat does. Free models reserve nothing. The charge's
// Settle and PromptCount count the prompt with count when the vendor
// reports no usage. The charge is nil when billing is off.
func (h *Core) AdmitBody(ctx context.Context, info *reqinfo.Info, p gate.Principal, public, upstream string, body []byte,
	maxOutput int64, count func() (int64, error)) (*Charge, error) {
	c, err := h.StartCharge(p, public, upstream, func(mp billing.ModelPrice) bool { return mp.Priced })
	if c == nil || err != nil {
		return c, err
	}
	c.prompt = func() int64 {
		n, _ := count()
		return n
	}
	if maxOutput <= 0 {
		maxOutput = OutputCeiling(c.Price)
	}
	if err := h.TakeTokens(info, PromptBound(body)+maxOutput); err != nil {
		return nil, err
	}
	if c.Price.Free {
		return c, nil
	}
	price := c.Price.Price
	amount, err := billing.Cost(price, billing.Tokens{Prompt: PromptBound(body), Completion: maxOutput}, c.Ratio)
	if err == nil {
		err = c.TryReserve(ctx, amount)
	}
	if billing.Tighter(err) {
		n, cerr := count()
		if cerr != nil {
			return nil, apierr.Internal(cerr)
		}
		if !c.Tok.Exact() {
			n += n / 4 // another vendor's tokenizer may count more
		}
		amount, err = billing.Cost(price, billing.Tokens{Prompt: n + ImageAllowance(body), Completion: maxOutput}, c.Ratio)
		if err == nil {
			err = c.TryReserve(ctx, amount)
		}
	}
	if err != nil {
		return nil, ReserveError(err, amount, "max_tokens")
	}
	return c, nil
}
