// Package charge is the charge lifecycle every front door and background
// worker shares: price a request's model, reserve the most it can cost on
// the payer's balance, then settle what it did cost or release the
// reservation. It holds no HTTP types: handlers map its errors to their
// wire format, and the video poller settles outside any request.
//
//	c, err := b.Start(payer, group, model, upstream, usable) // ErrNotPriced
//	err = c.Reserve(ctx, amount, "max_tokens")              // *RefusedError
//	... the upstream call ...
//	charged := c.SettleCost(cost)  // or c.Release(), or c.Persist() for a task
//
// A nil *Charge (billing off, used by tests of other parts) accepts every
// call and charges nothing.
package charge

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// Billing is what charging needs: prices, group ratios, the reserver and
// the tokenizers. A nil *Billing charges nothing.
type Billing struct {
	// Prices finds a model's price by its public id, falling back to the
	// upstream id; ok is false when the catalog knows neither.
	Prices   func(public, upstream string) (billing.ModelPrice, bool)
	Ratio    func(group string) int64 // the group's price ratio in ppm
	Reserver *billing.Reserver
	Tokens   *tokenize.Set
}

// ErrNotPriced means the catalog has no usable price for the model: it is
// refused, never served free by accident.
var ErrNotPriced = errors.New("charge: the model has no price")

// NotPricedError names the model that has no price.
type NotPricedError struct{ Model, Upstream string }

func (e *NotPricedError) Error() string {
	return fmt.Sprintf("charge: model %q (upstream %q) has no price", e.Model, e.Upstream)
}

// Is makes errors.Is(err, ErrNotPriced) true.
func (e *NotPricedError) Is(target error) bool { return target == ErrNotPriced }

// RefusedError is a reservation the payer cannot cover. Err is
// billing.ErrInsufficient, billing.ErrKeyCap or billing.ErrOverflow; Param
// names what the client can lower.
type RefusedError struct {
	Err    error
	Amount money.Micros
	Param  string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("charge: reservation of %s refused: %v", e.Amount, e.Err)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Charge is one request's (or task's) billing state, from admission to
// settlement.
type Charge struct {
	Price billing.ModelPrice
	Ratio int64 // the group's price ratio in ppm
	Payer billing.Payer
	Tok   *tokenize.Tokenizer // the model's tokenizer (approximate when the catalog names none)

	r    *billing.Reserver
	hold *billing.Hold
}

// Start prices a request for model (served as upstream) charged to p in
// group. usable reports whether the model's price covers the endpoint (a
// token price for embeddings, a per-second price for video, ...); a model
// neither free nor usable fails with a *NotPricedError. A nil b returns a
// nil Charge.
func (b *Billing) Start(p billing.Payer, group, model, upstream string, usable func(billing.ModelPrice) bool) (*Charge, error) {
	if b == nil {
		return nil, nil
	}
	mp, ok := b.Prices(model, upstream)
	if !ok || (!mp.Free && !usable(mp)) {
		return nil, &NotPricedError{Model: model, Upstream: upstream}
	}
	return &Charge{Price: mp, Ratio: b.Ratio(group), Payer: p, Tok: b.Tokens.For(mp.Tokenizer), r: b.Reserver}, nil
}

// Free reports whether nothing is charged (a free model, or billing off).
func (c *Charge) Free() bool { return c == nil || c.Price.Free }

// TryReserve holds amount (at least 1, so only a payer with something left
// is admitted) and returns the reserver's error as is, for callers that
// retry with a tighter amount. Free models hold nothing.
func (c *Charge) TryReserve(ctx context.Context, amount money.Micros) error {
	if c.Free() {
		return nil
	}
	h, err := c.r.Reserve(ctx, c.Payer, max(amount, 1))
	if err != nil {
		return err
	}
	c.hold = h
	return nil
}

// Reserve holds amount, the most the request can cost with the group's
// ratio applied; a payer that cannot cover it gets a *RefusedError naming
// param.
func (c *Charge) Reserve(ctx context.Context, amount money.Micros, param string) error {
	return Refused(c.TryReserve(ctx, amount), max(amount, 1), param)
}

// Refused wraps a reserver's refusal of amount in a *RefusedError naming
// param; other errors (and nil) pass unchanged.
func Refused(err error, amount money.Micros, param string) error {
	if errors.Is(err, billing.ErrInsufficient) || errors.Is(err, billing.ErrKeyCap) || errors.Is(err, billing.ErrOverflow) {
		return &RefusedError{Err: err, Amount: amount, Param: param}
	}
	return err
}

// Held is what the reservation holds; 0 without one.
func (c *Charge) Held() money.Micros {
	if c == nil || c.hold == nil {
		return 0
	}
	return c.hold.Amount()
}

// TokenCost is what t costs at the model's token price and the group's
// ratio; free models cost nothing.
func (c *Charge) TokenCost(t billing.Tokens) (money.Micros, error) {
	if c.Free() {
		return 0, nil
	}
	return billing.Cost(c.Price.Price, t, c.Ratio)
}

// FlatCost is count units at unit price (per image, per second) with the
// group's ratio applied; free models cost nothing.
func (c *Charge) FlatCost(unit money.Micros, count int64) (money.Micros, error) {
	if c.Free() {
		return 0, nil
	}
	return billing.Scale(unit, count, c.Ratio)
}

// SettleCost charges cost against the reservation and returns what was
// charged (never more than the payer can pay: see billing.Hold.Settle);
// with no reservation (free model, billing off) it charges nothing.
func (c *Charge) SettleCost(cost money.Micros) money.Micros {
	if c == nil || c.hold == nil {
		return 0
	}
	return c.hold.Settle(cost)
}

// Release gives the reservation back (nothing billable was used).
func (c *Charge) Release() {
	if c != nil && c.hold != nil {
		c.hold.Release()
	}
}

// Persist hands the reservation over to the store: call it once a record
// that holds the same amount (an open video task) is stored, so the
// reservation is counted once, from the store, until the task settles.
func (c *Charge) Persist() {
	if c != nil && c.hold != nil {
		c.hold.Persisted()
	}
}
