package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/stripe/stripe-go/v82"

	"github.com/modelgate/modelgate/internal/store"
)

// Money Stripe gives back to the payer: a refund the operator makes
// (charge.refunded, whose charge carries amount_refunded, the running
// total of its refunds) or a dispute the payer opens with their bank
// (charge.dispute.created, whose amount is what the bank holds back).
// Either names the payment (payment_intent), which the top-up stored when
// its session was paid. The store takes back the same share of the top-up
// and of its first-top-up bonus, once, whatever events arrive in whatever
// order; the balance may go below zero, and then billable requests are
// refused until the account is topped up again. A won dispute is not
// credited back by itself: an operator credits it on the accounts page.

// refunded applies charge.refunded.
func (s *Stripe) refunded(ctx context.Context, ev stripe.Event, log *slog.Logger) error {
	var ch stripe.Charge
	if err := json.Unmarshal(ev.Data.Raw, &ch); err != nil || ch.ID == "" {
		log.Error("stripe: refund event without a charge; ignored", "err", err)
		return nil
	}
	return s.reverse(ctx, store.ReversalRefund, ch.PaymentIntent, ch.AmountRefunded, ch.Currency,
		log.With("charge", ch.ID, "amount_refunded", ch.AmountRefunded))
}

// disputed applies charge.dispute.created.
func (s *Stripe) disputed(ctx context.Context, ev stripe.Event, log *slog.Logger) error {
	var d stripe.Dispute
	if err := json.Unmarshal(ev.Data.Raw, &d); err != nil || d.ID == "" {
		log.Error("stripe: dispute event without a dispute; ignored", "err", err)
		return nil
	}
	return s.reverse(ctx, store.ReversalDispute, d.PaymentIntent, d.Amount, d.Currency,
		log.With("dispute", d.ID, "amount", d.Amount, "reason", string(d.Reason)))
}

// reverse records that Stripe took total (minor units, the running total
// of kind for the payment) back from payment pi, and takes its share of
// the top-up back from the account.
func (s *Stripe) reverse(ctx context.Context, kind store.ReversalKind, pi *stripe.PaymentIntent, total int64,
	currency stripe.Currency, log *slog.Logger) error {
	if pi == nil || pi.ID == "" {
		log.Warn("stripe: " + string(kind) + " of a payment without a payment_intent; not one of this gateway's top-ups")
		return nil
	}
	log = log.With("payment_intent", pi.ID)
	if !strings.EqualFold(string(currency), s.Currency) {
		log.Error("stripe: "+string(kind)+" in another currency; nothing taken back, settle it by hand", "currency", string(currency))
		return nil
	}
	amount, err := FromMinor(total, s.Currency)
	if err != nil || amount < 0 {
		log.Error("stripe: "+string(kind)+" with an unusable amount; nothing taken back", "err", err)
		return nil
	}
	t, debited, err := s.Store.ReverseTopUp(ctx, store.TopUpReversal{Provider: Provider, PaymentRef: pi.ID, Kind: kind, Total: amount}, s.now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		// Another product's payment, or a top-up whose completed event
		// has not arrived: kept, and applied if that top-up is paid.
		log.Warn("stripe: " + string(kind) + " of a payment no paid top-up has (yet); kept for when one is paid")
		return nil
	case err != nil:
		return fmt.Errorf("stripe webhook: %s of %s: %w", kind, pi.ID, err)
	case debited == 0:
		log.Debug("stripe: "+string(kind)+" changes nothing (seen before)", "topup", t.ID)
		return nil
	}
	log.Info("stripe: top-up taken back", "kind", string(kind), "topup", t.ID, "account", t.AccountID,
		"debited", debited.String(), "reversed", t.Reversed.String(), "bonus_reversed", t.BonusReversed.String())
	s.changed(t.AccountID)
	return nil
}
