package stripefake_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/modelgate/modelgate/internal/payment/stripefake"
)

const (
	key    = "sk_test_fake"
	secret = "whsec_fake"
)

func client(base, apiKey string) *stripe.Client {
	return stripe.NewClient(apiKey, stripe.WithBackends(stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL: stripe.String(base), EnableTelemetry: stripe.Bool(false), MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})))
}

// receiver is a webhook endpoint that verifies like a real one (strict
// about the API version, as stripe-go's default is).
type receiver struct {
	mu     sync.Mutex
	events []stripe.Event
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	ev, err := webhook.ConstructEvent(body, r.Header.Get("Stripe-Signature"), secret)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.events = append(rc.events, ev)
	rc.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (rc *receiver) got() []stripe.Event {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]stripe.Event(nil), rc.events...)
}

func TestConsoleStripeFake(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fake := stripefake.New(t, key, secret)
	rc := &receiver{}
	hook := httptest.NewServer(rc)
	defer hook.Close()
	fake.SetWebhook(hook.URL + "/hook")

	// A wrong key is refused like Stripe does.
	_, err := client(fake.URL, "sk_test_wrong").V1CheckoutSessions.Create(ctx, &stripe.CheckoutSessionCreateParams{})
	var se *stripe.Error
	if !errors.As(err, &se) || se.HTTPStatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong key: %v, want a 401 *stripe.Error", err)
	}

	params := &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String("payment"),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{Currency: stripe.String("usd"), UnitAmount: stripe.Int64(1250),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("Balance top-up")}},
			Quantity: stripe.Int64(1),
		}},
		PaymentMethodTypes: []*string{stripe.String("alipay")},
		ClientReferenceID:  stripe.String("acct_1"),
		SuccessURL:         stripe.String("http://shop.test/ok?x=1"),
		CancelURL:          stripe.String("http://shop.test/cancel"),
	}
	params.AddMetadata("account_id", "acct_1")
	params.SetIdempotencyKey("idem-1")
	sess, err := client(fake.URL, key).V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if sess.ID != "cs_test_1" || sess.URL != fake.URL+"/pay/cs_test_1" || sess.AmountTotal != 1250 || sess.Currency != "usd" ||
		sess.Status != "open" || sess.PaymentStatus != "unpaid" || sess.Metadata["account_id"] != "acct_1" ||
		len(sess.PaymentMethodTypes) != 1 || sess.PaymentMethodTypes[0] != "alipay" {
		t.Fatalf("session: %+v", sess)
	}
	// The same idempotency key gives the same session.
	again, err := client(fake.URL, key).V1CheckoutSessions.Create(ctx, params)
	if err != nil || again.ID != sess.ID || len(fake.Sessions()) != 1 {
		t.Fatalf("idempotent create: %v %v, %d sessions", again, err, len(fake.Sessions()))
	}

	// The hosted page shows the amount and a Pay button.
	resp, err := http.Get(sess.URL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "12.50 USD") || !strings.Contains(string(page), `action="/pay/cs_test_1"`) {
		t.Fatalf("pay page: %d %s", resp.StatusCode, page)
	}

	// Paying delivers a verifiable checkout.session.completed and redirects.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noFollow.Post(sess.URL, "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "http://shop.test/ok?x=1" {
		t.Fatalf("pay: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	evs := rc.got()
	if len(evs) != 1 || evs[0].Type != stripe.EventTypeCheckoutSessionCompleted || !strings.HasPrefix(evs[0].ID, "evt_") ||
		evs[0].APIVersion != stripe.APIVersion {
		t.Fatalf("events: %+v", evs)
	}
	var paid stripe.CheckoutSession
	if err := json.Unmarshal(evs[0].Data.Raw, &paid); err != nil {
		t.Fatal(err)
	}
	if paid.ID != sess.ID || paid.PaymentStatus != "paid" || paid.AmountTotal != 1250 || paid.Metadata["account_id"] != "acct_1" ||
		paid.PaymentIntent == nil || !strings.HasPrefix(paid.PaymentIntent.ID, "pi_test_") {
		t.Fatalf("paid session: %+v", paid)
	}
	if got, err := client(fake.URL, key).V1CheckoutSessions.Retrieve(ctx, sess.ID, nil); err != nil || got.PaymentIntent == nil ||
		got.PaymentIntent.ID != paid.PaymentIntent.ID {
		t.Fatalf("retrieved paid session: %+v %v", got, err)
	}

	// Refunds carry the charge's running amount_refunded; a dispute its
	// amount; both name the session's payment_intent.
	calls := fake.Calls()
	if st := fake.Refund(sess.ID, 250); st != 200 {
		t.Fatalf("Refund: %d", st)
	}
	if st := fake.Refund(sess.ID, 2000); st != 200 {
		t.Fatalf("Refund: %d", st)
	}
	if st := fake.Dispute(sess.ID, 1250); st != 200 {
		t.Fatalf("Dispute: %d", st)
	}
	evs = rc.got()
	var refunds []int64
	for _, ev := range evs[1:3] {
		var ch stripe.Charge
		if err := json.Unmarshal(ev.Data.Raw, &ch); err != nil || ev.Type != stripe.EventTypeChargeRefunded ||
			ch.PaymentIntent == nil || ch.PaymentIntent.ID != paid.PaymentIntent.ID || ch.Amount != 1250 || ch.Currency != "usd" {
			t.Fatalf("refund event %s: %+v %v", ev.Type, ch, err)
		}
		refunds = append(refunds, ch.AmountRefunded)
	}
	if refunds[0] != 250 || refunds[1] != 1250 {
		t.Errorf("amount_refunded %v, want [250 1250] (the running total, at most the amount)", refunds)
	}
	var dp stripe.Dispute
	if err := json.Unmarshal(evs[3].Data.Raw, &dp); err != nil || evs[3].Type != stripe.EventTypeChargeDisputeCreated ||
		dp.PaymentIntent == nil || dp.PaymentIntent.ID != paid.PaymentIntent.ID || dp.Amount != 1250 {
		t.Fatalf("dispute event: %+v %v", dp, err)
	}
	if fake.Calls() != calls {
		t.Errorf("events counted as API calls")
	}
	rc.mu.Lock()
	rc.events = rc.events[:1]
	rc.mu.Unlock()
	if s, _ := fake.Session(sess.ID); s.Status != "complete" || s.PaymentStatus != "paid" {
		t.Fatalf("fake's session after paying: %+v", s)
	}
	// A paid session cannot be paid again.
	resp, err = noFollow.Post(sess.URL, "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("second pay: %d", resp.StatusCode)
	}

	// Send: arbitrary events, mutable; SendRaw: tampered ones.
	if st := fake.Send("checkout.session.expired", "cs_other", func(ev map[string]any) {
		ev["id"] = "evt_fixed"
		stripefake.Object(ev)["metadata"] = map[string]any{"k": "v"}
	}); st != 200 {
		t.Fatalf("Send: %d", st)
	}
	evs = rc.got()
	if last := evs[len(evs)-1]; last.ID != "evt_fixed" || last.Type != "checkout.session.expired" ||
		!strings.Contains(string(last.Data.Raw), `"cs_other"`) {
		t.Fatalf("sent event: %+v", last)
	}
	payload := fake.Event("checkout.session.completed", sess.ID, nil)
	sig := fake.Sign(payload)
	tampered := []byte(strings.Replace(string(payload), `"amount_total":1250`, `"amount_total":999999`, 1))
	if st := fake.SendRaw(tampered, sig); st != http.StatusBadRequest {
		t.Fatalf("tampered: %d", st)
	}
	if st := fake.SendRaw(payload, stripefake.SignAt(payload, "whsec_other", time.Now())); st != http.StatusBadRequest {
		t.Fatalf("wrong secret: %d", st)
	}
	if st := fake.SendRaw(payload, sig); st != 200 {
		t.Fatalf("untampered: %d", st)
	}

	// Expire: only open sessions.
	open, err := client(fake.URL, key).V1CheckoutSessions.Create(ctx, &stripe.CheckoutSessionCreateParams{
		LineItems: params.LineItems, SuccessURL: params.SuccessURL})
	if err != nil {
		t.Fatal(err)
	}
	if x, err := client(fake.URL, key).V1CheckoutSessions.Expire(ctx, open.ID, nil); err != nil || x.Status != "expired" {
		t.Fatalf("expire: %+v %v", x, err)
	}
	if _, err := client(fake.URL, key).V1CheckoutSessions.Expire(ctx, sess.ID, nil); err == nil {
		t.Fatal("expiring a paid session succeeded")
	}
}
