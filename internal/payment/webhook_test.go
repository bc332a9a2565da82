package payment

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

const (
	completed = "checkout.session.completed"
	succeeded = "checkout.session.async_payment_succeeded"
	failed    = "checkout.session.async_payment_failed"
	expired   = "checkout.session.expired"
)

// How a step's delivery is signed.
const (
	signOK = iota
	signTampered
	signWrongSecret
	signOld
	signNone
)

type step struct {
	ev      event // ev.session "": the session Checkout created
	sig     int
	wantErr error
}

func paid(id, typ string) step {
	return step{ev: event{id: id, typ: typ, paymentStatus: "paid", amountTotal: 1000}}
}

func TestHandleWebhook(t *testing.T) {
	tests := []struct {
		name        string
		steps       []step
		wantStatus  store.TopUpStatus
		wantBalance money.Micros
	}{
		{"paid once", []step{paid("evt_1", completed)}, store.TopUpPaid, 10 * money.Unit},
		{"same event replayed", []step{paid("evt_1", completed), paid("evt_1", completed), paid("evt_1", completed)},
			store.TopUpPaid, 10 * money.Unit},
		{"completed and async succeeded for one session", []step{paid("evt_1", completed), paid("evt_2", succeeded)},
			store.TopUpPaid, 10 * money.Unit},
		{"unpaid completed then async succeeded", []step{
			{ev: event{id: "evt_1", typ: completed, paymentStatus: "unpaid", amountTotal: 1000}},
			paid("evt_2", succeeded), paid("evt_2", succeeded), paid("evt_3", succeeded),
		}, store.TopUpPaid, 10 * money.Unit},
		{"unpaid completed only", []step{
			{ev: event{id: "evt_1", typ: completed, paymentStatus: "unpaid", amountTotal: 1000}},
		}, store.TopUpPending, 0},
		{"tampered payload", []step{{ev: paid("evt_1", completed).ev, sig: signTampered, wantErr: ErrSignature}},
			store.TopUpPending, 0},
		{"wrong secret", []step{{ev: paid("evt_1", completed).ev, sig: signWrongSecret, wantErr: ErrSignature}},
			store.TopUpPending, 0},
		{"old timestamp", []step{{ev: paid("evt_1", completed).ev, sig: signOld, wantErr: ErrSignature}},
			store.TopUpPending, 0},
		{"no signature", []step{{ev: paid("evt_1", completed).ev, sig: signNone, wantErr: ErrSignature}},
			store.TopUpPending, 0},
		{"rejected delivery does not burn the event id", []step{
			{ev: paid("evt_1", completed).ev, sig: signTampered, wantErr: ErrSignature},
			paid("evt_1", completed),
		}, store.TopUpPaid, 10 * money.Unit},
		{"unknown session credits nothing whatever its metadata", []step{{ev: event{
			id: "evt_1", typ: completed, session: "cs_not_ours", paymentStatus: "paid", amountTotal: 1000,
			metadata: map[string]string{"account_id": testAcct, "topup_id": "top_whatever"},
		}}, {ev: event{id: "evt_2", typ: expired, session: "cs_not_ours"}}}, store.TopUpPending, 0},
		{"expired then completed", []step{{ev: event{id: "evt_1", typ: expired, paymentStatus: "unpaid"}}, paid("evt_2", completed)},
			store.TopUpExpired, 0},
		{"failed then async succeeded", []step{{ev: event{id: "evt_1", typ: failed, paymentStatus: "unpaid"}}, paid("evt_2", succeeded)},
			store.TopUpFailed, 0},
		{"paid then expired", []step{paid("evt_1", completed), {ev: event{id: "evt_2", typ: expired, paymentStatus: "paid"}}},
			store.TopUpPaid, 10 * money.Unit},
		{"paid then async failed", []step{paid("evt_1", succeeded), {ev: event{id: "evt_2", typ: failed}}},
			store.TopUpPaid, 10 * money.Unit},
		{"the amount is the session's amount_total, not metadata's", []step{{ev: event{
			id: "evt_1", typ: completed, paymentStatus: "paid", amountTotal: 700,
			metadata: map[string]string{"amount": "1000000", "account_id": "acct_mallory"},
		}}}, store.TopUpPaid, 7 * money.Unit},
		{"another currency is not credited", []step{{ev: event{
			id: "evt_1", typ: completed, paymentStatus: "paid", amountTotal: 1000, currency: "jpy",
		}}}, store.TopUpPending, 0},
		{"other event types are ignored", []step{{ev: event{id: "evt_1", typ: "payment_intent.succeeded", paymentStatus: "paid", amountTotal: 1000}}},
			store.TopUpPending, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			st := testStore(t)
			s := newStripe(t, st, newFakeStripe(t).URL)
			top, _, err := s.Checkout(ctx, testAcct, 10*money.Unit, MethodAlipay, successURL, cancelURL)
			if err != nil {
				t.Fatalf("Checkout: %v", err)
			}
			for i, st := range tt.steps {
				if st.ev.session == "" {
					st.ev.session = top.ExternalID
				}
				payload := st.ev.payload()
				var header string
				switch st.sig {
				case signOK:
					header = sign(payload, testSecret, time.Now())
				case signTampered:
					header = sign(payload, testSecret, time.Now())
					payload = bytes.Replace(payload, []byte(`"amount_total":1000`), []byte(`"amount_total":100000`), 1)
				case signWrongSecret:
					header = sign(payload, "whsec_other", time.Now())
				case signOld:
					header = sign(payload, testSecret, time.Now().Add(-time.Hour))
				}
				if err := s.HandleWebhook(ctx, payload, header); !errors.Is(err, st.wantErr) {
					t.Fatalf("step %d (%s %s): error %v, want %v", i, st.ev.id, st.ev.typ, err, st.wantErr)
				}
			}
			got, err := st.TopUpByExternalID(ctx, Provider, top.ExternalID)
			if err != nil {
				t.Fatalf("TopUpByExternalID: %v", err)
			}
			if got.Status != tt.wantStatus {
				t.Errorf("status %s, want %s", got.Status, tt.wantStatus)
			}
			if got.Status == store.TopUpPaid && got.Credited != tt.wantBalance {
				t.Errorf("credited %s, want %s", got.Credited, tt.wantBalance)
			}
			if b := balance(t, st); b != tt.wantBalance {
				t.Errorf("balance %s, want %s", b, tt.wantBalance)
			}
		})
	}
}

func TestHandleWebhookFirstTopUpBonus(t *testing.T) {
	ctx := testCtx(t)
	st := testStore(t)
	s := newStripe(t, st, newFakeStripe(t).URL)
	s.Bonus = store.BonusRule{PercentPPM: 100_000, Max: 5 * money.Unit} // 10%, at most 5

	deliver := func(id, typ, session string, amountTotal int64) {
		t.Helper()
		payload := event{id: id, typ: typ, session: session, paymentStatus: "paid", amountTotal: amountTotal}.payload()
		if err := s.HandleWebhook(ctx, payload, sign(payload, testSecret, time.Now())); err != nil {
			t.Fatalf("HandleWebhook(%s): %v", id, err)
		}
	}
	first, _, err := s.Checkout(ctx, testAcct, 10*money.Unit, MethodCard, successURL, cancelURL)
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := s.Checkout(ctx, testAcct, 100*money.Unit, MethodCard, successURL, cancelURL)
	if err != nil {
		t.Fatal(err)
	}
	deliver("evt_1", completed, first.ExternalID, 1000)
	deliver("evt_1", completed, first.ExternalID, 1000)   // replay
	deliver("evt_2", succeeded, first.ExternalID, 1000)   // second event, same session
	deliver("evt_3", completed, second.ExternalID, 10000) // not the first: no bonus

	if b, want := balance(t, st), 10*money.Unit+money.Unit+100*money.Unit; b != want {
		t.Errorf("balance %s, want %s (10 + 10%% bonus + 100)", b, want)
	}
	entries, err := st.ListLedger(ctx, testAcct)
	if err != nil {
		t.Fatal(err)
	}
	var bonuses int
	for _, e := range entries {
		if e.Kind == store.KindBonus {
			bonuses++
		}
	}
	if bonuses != 1 {
		t.Errorf("%d bonus entries, want 1: %+v", bonuses, entries)
	}
}

func TestHandleWebhookDoesNotCreditBeforeCheckout(t *testing.T) {
	// No Checkout at all: a well-signed paid event for any session is
	// nothing to this gateway.
	ctx := testCtx(t)
	st := testStore(t)
	s := newStripe(t, st, newFakeStripe(t).URL)
	payload := event{id: "evt_1", typ: completed, session: "cs_test_1", paymentStatus: "paid", amountTotal: 1000,
		metadata: map[string]string{"account_id": testAcct}}.payload()
	if err := s.HandleWebhook(ctx, payload, sign(payload, testSecret, time.Now())); err != nil {
		t.Fatalf("HandleWebhook: %v", err)
	}
	if b := balance(t, st); b != 0 {
		t.Errorf("balance %s, want 0", b)
	}
}
