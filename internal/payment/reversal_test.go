package payment

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

const (
	refundedEvent = "charge.refunded"
	disputedEvent = "charge.dispute.created"
)

// chargeObject is a Charge as Stripe sends it in charge.refunded:
// amount_refunded is the running total of the charge's refunds.
func chargeObject(pi string, amount, refunded int64) map[string]any {
	var intent any
	if pi != "" {
		intent = pi
	}
	return map[string]any{"id": "ch_1", "object": "charge", "amount": amount, "amount_captured": amount, "amount_refunded": refunded,
		"captured": true, "currency": "usd", "paid": true, "payment_intent": intent, "refunded": refunded >= amount,
		"status": "succeeded", "livemode": false, "created": fixed.Unix(), "metadata": map[string]any{}}
}

// disputeObject is a Dispute as Stripe sends it in charge.dispute.created.
func disputeObject(pi string, amount int64) map[string]any {
	return map[string]any{"id": "dp_1", "object": "dispute", "amount": amount, "charge": "ch_1", "currency": "usd",
		"payment_intent": pi, "reason": "fraudulent", "status": "needs_response", "is_charge_refundable": false,
		"livemode": false, "created": fixed.Unix(), "metadata": map[string]any{}}
}

// objectEvent wraps obj in a signed-ready event of type typ.
func objectEvent(t *testing.T, id, typ string, obj map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"id": id, "object": "event", "api_version": "2025-06-30.basil", "type": typ,
		"created": fixed.Unix(), "livemode": false, "data": map[string]any{"object": obj}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHandleWebhookReversals: refunds and disputes take back the same
// share of the top-up and of its first-top-up bonus, once, whatever
// events arrive in whatever order.
func TestHandleWebhookReversals(t *testing.T) {
	u := money.Unit
	type delivery struct {
		id, typ string
		obj     map[string]any
		tamper  bool
	}
	refund := func(id string, refunded int64) delivery {
		return delivery{id: id, typ: refundedEvent, obj: chargeObject("pi_1", 1000, refunded)}
	}
	paidEvent := delivery{id: "evt_paid", typ: completed}
	tests := []struct {
		name    string
		spent   money.Micros // charged before the events
		steps   []delivery
		balance money.Micros // after everything
	}{
		{"paid only", 0, []delivery{paidEvent}, 11 * u},
		{"full refund, bonus too", 0, []delivery{paidEvent, refund("evt_r1", 1000)}, 0},
		{"partial refunds by their running total", 0, []delivery{paidEvent, refund("evt_r1", 300), refund("evt_r2", 1000)}, 0},
		{"a partial refund", 0, []delivery{paidEvent, refund("evt_r1", 300)}, 11*u - 3*u - 3*u/10},
		{"a replayed refund", 0, []delivery{paidEvent, refund("evt_r1", 300), refund("evt_r1", 300)}, 11*u - 33*u/10},
		{"the same refund in two events", 0, []delivery{paidEvent, refund("evt_r1", 300), refund("evt_r2", 300)}, 11*u - 33*u/10},
		{"out of order", 0, []delivery{paidEvent, refund("evt_r2", 1000), refund("evt_r1", 300)}, 0},
		{"a dispute", 0, []delivery{paidEvent, {id: "evt_d1", typ: disputedEvent, obj: disputeObject("pi_1", 1000)}}, 0},
		{"a refund, then a dispute of the rest", 0, []delivery{paidEvent, refund("evt_r1", 400),
			{id: "evt_d1", typ: disputedEvent, obj: disputeObject("pi_1", 600)}}, 0},
		{"spent first: below zero", 8 * u, []delivery{paidEvent, refund("evt_r1", 1000)}, -8 * u},
		{"the refund before the payment", 0, []delivery{refund("evt_r1", 500), paidEvent}, 11*u - 55*u/10},
		{"another payment", 0, []delivery{paidEvent, {id: "evt_r1", typ: refundedEvent, obj: chargeObject("pi_other", 1000, 1000)}}, 11 * u},
		{"no payment intent", 0, []delivery{paidEvent, {id: "evt_r1", typ: refundedEvent, obj: chargeObject("", 1000, 1000)}}, 11 * u},
		{"another currency", 0, []delivery{paidEvent, {id: "evt_r1", typ: refundedEvent,
			obj: func() map[string]any { o := chargeObject("pi_1", 1000, 1000); o["currency"] = "jpy"; return o }()}}, 11 * u},
		{"a tampered refund", 0, []delivery{paidEvent, {id: "evt_r1", typ: refundedEvent, obj: chargeObject("pi_1", 1000, 1000), tamper: true}}, 11 * u},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			st := testStore(t)
			s := newStripe(t, st, newFakeStripe(t).URL)
			s.Bonus = store.BonusRule{PercentPPM: 100_000}
			var told int
			s.OnCredit = func(string) { told++ }
			top, _, err := s.Checkout(ctx, testAcct, 10*u, MethodCard, successURL, cancelURL)
			if err != nil {
				t.Fatal(err)
			}
			if tt.spent > 0 {
				if _, err := st.Post(ctx, store.LedgerEntry{AccountID: testAcct, Kind: store.KindCharge, Amount: -tt.spent, Time: fixed}); err != nil {
					t.Fatal(err)
				}
			}
			for _, d := range tt.steps {
				var payload []byte
				if d.typ == completed {
					payload = event{id: d.id, typ: completed, session: top.ExternalID, paymentStatus: "paid", amountTotal: 1000,
						paymentIntent: "pi_1"}.payload()
				} else {
					payload = objectEvent(t, d.id, d.typ, maps.Clone(d.obj))
				}
				header := sign(payload, testSecret, time.Now())
				var want error
				if d.tamper {
					payload = objectEvent(t, d.id, d.typ, chargeObject("pi_1", 1000, 999))
					want = ErrSignature
				}
				if err := s.HandleWebhook(ctx, payload, header); !errors.Is(err, want) {
					t.Fatalf("%s %s: %v, want %v", d.id, d.typ, err, want)
				}
			}
			if b := balance(t, st); b != tt.balance {
				t.Errorf("balance %s, want %s", b, tt.balance)
			}
			if told == 0 {
				t.Error("OnCredit was never told")
			}
		})
	}
}

// TestHandleWebhookReversalsStripeMock decodes the Charge and the Dispute
// exactly as stripe-mock serves them (Stripe's own fixtures, every field
// of the current API version), with the fields an event would carry set.
func TestHandleWebhookReversalsStripeMock(t *testing.T) {
	base := stripeMock(t)
	fixture := func(path string) map[string]any {
		t.Helper()
		req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var obj map[string]any
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &obj) != nil {
			t.Fatalf("stripe-mock %s: %d %s", path, resp.StatusCode, body)
		}
		return obj
	}
	charge, dispute := fixture("/v1/charges/ch_1"), fixture("/v1/disputes/dp_1")
	if charge["object"] != "charge" || dispute["object"] != "dispute" {
		t.Fatalf("fixtures: %v, %v", charge["object"], dispute["object"])
	}
	charge["payment_intent"], charge["amount"], charge["amount_refunded"], charge["currency"] = "pi_mock", 2000, 500, "usd"
	dispute["payment_intent"], dispute["amount"], dispute["currency"] = "pi_mock", 1500, "usd"

	ctx := testCtx(t)
	st := testStore(t)
	s := newStripe(t, st, newFakeStripe(t).URL)
	top, _, err := s.Checkout(ctx, testAcct, 20*money.Unit, MethodCard, successURL, cancelURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, payload := range [][]byte{
		event{id: "evt_1", typ: completed, session: top.ExternalID, paymentStatus: "paid", amountTotal: 2000, paymentIntent: "pi_mock"}.payload(),
		objectEvent(t, "evt_2", refundedEvent, charge),
		objectEvent(t, "evt_3", disputedEvent, dispute),
	} {
		if err := s.HandleWebhook(ctx, payload, sign(payload, testSecret, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.TopUpByExternalID(ctx, Provider, top.ExternalID)
	if err != nil || got.PaymentRef != "pi_mock" || got.Reversed != 20*money.Unit {
		t.Fatalf("top-up %+v, %v", got, err)
	}
	if b := balance(t, st); b != 0 {
		t.Errorf("balance %s, want 0 (5 refunded and 15 disputed of 20)", b)
	}
}
