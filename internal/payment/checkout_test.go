package payment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

const (
	successURL = "https://gw.example/console/topup?done=1"
	cancelURL  = "https://gw.example/console/topup?cancel=1"
)

// TestCheckoutRequestShape checks the form stripe-go sends for a session
// and the pending top-up stored for it.
func TestCheckoutRequestShape(t *testing.T) {
	tests := []struct {
		method   string
		currency string
		amount   money.Micros
		unit     string // line_items[0][price_data][unit_amount]
	}{
		{MethodAlipay, "USD", 10 * money.Unit, "1000"},
		{MethodCard, "USD", 12*money.Unit + money.Unit/2, "1250"},
		{MethodCard, "JPY", 500 * money.Unit, "500"},
	}
	for _, tt := range tests {
		t.Run(tt.method+"-"+tt.currency, func(t *testing.T) {
			ctx := testCtx(t)
			st := testStore(t)
			f := newFakeStripe(t)
			s := newStripe(t, st, f.URL)
			s.Currency = tt.currency

			top, checkoutURL, err := s.Checkout(ctx, testAcct, tt.amount, tt.method, successURL, cancelURL)
			if err != nil {
				t.Fatalf("Checkout: %v", err)
			}
			creates, _ := f.recorded()
			if len(creates) != 1 {
				t.Fatalf("%d session creates, want 1", len(creates))
			}
			form := creates[0]
			want := map[string]string{
				"mode":                                          "payment",
				"payment_method_types[0]":                       tt.method,
				"line_items[0][price_data][currency]":           strings.ToLower(tt.currency),
				"line_items[0][price_data][unit_amount]":        tt.unit,
				"line_items[0][price_data][product_data][name]": ProductName,
				"line_items[0][quantity]":                       "1",
				"client_reference_id":                           testAcct,
				"metadata[account_id]":                          testAcct,
				"metadata[topup_id]":                            top.ID,
				"success_url":                                   successURL,
				"cancel_url":                                    cancelURL,
				"expires_at":                                    fmt.Sprint(fixed.Add(CheckoutTTL).Unix()),
			}
			for k, v := range want {
				if got := form.Get(k); got != v {
					t.Errorf("form %s = %q, want %q", k, got, v)
				}
			}
			for _, k := range []string{"payment_method_types[1]", "line_items[1][quantity]"} {
				if form.Has(k) {
					t.Errorf("form has %s = %q; want one method and one line item", k, form.Get(k))
				}
			}

			if !strings.HasPrefix(top.ID, "top_") || top.ExternalID != "cs_test_1" ||
				checkoutURL != "https://checkout.stripe.com/c/pay/cs_test_1" {
				t.Errorf("top-up %q session %q url %q", top.ID, top.ExternalID, checkoutURL)
			}
			got, err := st.TopUpByExternalID(ctx, Provider, "cs_test_1")
			if err != nil {
				t.Fatalf("TopUpByExternalID: %v", err)
			}
			if got.ID != top.ID || got.AccountID != testAcct || got.Amount != tt.amount ||
				got.Method != tt.method || got.Status != store.TopUpPending || got.Provider != Provider {
				t.Errorf("stored %+v", got)
			}
			if b := balance(t, st); b != 0 {
				t.Errorf("balance %s after checkout, want 0: only a webhook credits", b)
			}
		})
	}
}

func TestCheckoutRefuses(t *testing.T) {
	tests := []struct {
		name    string
		methods []string
		method  string
		amount  money.Micros
		wantErr error
	}{
		{"unknown method", []string{MethodCard}, "paypal", money.Unit, ErrMethod},
		{"method not configured", []string{MethodCard}, MethodAlipay, money.Unit, ErrMethod},
		{"empty method", []string{MethodCard}, "", money.Unit, ErrMethod},
		{"fraction of a cent", []string{MethodCard}, MethodCard, money.Unit + 1, ErrAmount},
		{"zero", []string{MethodCard}, MethodCard, 0, ErrAmount},
		{"negative", []string{MethodCard}, MethodCard, -money.Unit, ErrAmount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := testStore(t)
			f := newFakeStripe(t)
			s := newStripe(t, st, f.URL)
			s.Methods = tt.methods
			_, _, err := s.Checkout(testCtx(t), testAcct, tt.amount, tt.method, successURL, cancelURL)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Checkout error = %v, want %v", err, tt.wantErr)
			}
			if creates, _ := f.recorded(); len(creates) != 0 {
				t.Errorf("%d sessions created for a refused checkout", len(creates))
			}
			if tops, err := st.ListTopUps(testCtx(t), testAcct); err != nil || len(tops) != 0 {
				t.Errorf("top-ups %v, %v; want none", tops, err)
			}
		})
	}
}

// failingCreate is a store whose CreateTopUp fails.
type failingCreate struct{ Store }

func (failingCreate) CreateTopUp(context.Context, store.TopUp, store.TopUpLimits) error {
	return errors.New("disk full")
}

func TestCheckoutExpiresSessionItCouldNotStore(t *testing.T) {
	f := newFakeStripe(t)
	s := newStripe(t, failingCreate{testStore(t)}, f.URL)
	if _, _, err := s.Checkout(testCtx(t), testAcct, money.Unit, MethodCard, successURL, cancelURL); err == nil {
		t.Fatal("Checkout succeeded with a failing store")
	}
	creates, expired := f.recorded()
	if len(creates) != 1 || len(expired) != 1 || expired[0] != "cs_test_1" {
		t.Errorf("creates %d, expired %v; want the one session expired", len(creates), expired)
	}
}

// An account has at most MaxOpenTopUps checkouts open and starts at most
// MaxTopUpsPerHour an hour; past either, Checkout refuses before Stripe is
// called. The counts come from the store.
func TestCheckoutLimits(t *testing.T) {
	ctx := testCtx(t)
	st := testStore(t)
	if err := st.CreateAccount(ctx, store.Account{ID: "acct_bob", Name: "bob", CreatedAt: fixed}); err != nil {
		t.Fatal(err)
	}
	f := newFakeStripe(t)
	s := newStripe(t, st, f.URL)
	now := fixed
	s.Now = func() time.Time { return now }
	checkout := func(acct string) (store.TopUp, error) {
		top, _, err := s.Checkout(ctx, acct, money.Unit, MethodCard, successURL, cancelURL)
		return top, err
	}
	creates := func() int { c, _ := f.recorded(); return len(c) }
	var open []store.TopUp
	for i := range MaxOpenTopUps {
		top, err := checkout(testAcct)
		if err != nil {
			t.Fatalf("checkout %d: %v", i+1, err)
		}
		open = append(open, top)
		now = now.Add(time.Minute)
	}
	steps := []struct {
		name    string
		before  func()
		acct    string
		wantErr error
	}{
		{"sixth open", nil, testAcct, ErrTooManyTopUps},
		{"another account", nil, "acct_bob", nil},
		{"one expired", func() { endTopUp(t, st, open[0], store.TopUpExpired, now) }, testAcct, nil},
		{"open again", nil, testAcct, ErrTooManyTopUps},
		{"paid and failed ones do not count as open", func() {
			payTopUp(t, st, open[1], now)
			endTopUp(t, st, open[2], store.TopUpFailed, now)
			endTopUp(t, st, open[3], store.TopUpExpired, now)
			endTopUp(t, st, open[4], store.TopUpExpired, now)
		}, testAcct, nil},
		{"eighth", nil, testAcct, nil},
		{"ninth", nil, testAcct, nil},
		{"tenth", nil, testAcct, nil},
		{"eleventh in the hour", nil, testAcct, ErrTooManyTopUps},
		{"an hour later", func() { now = now.Add(time.Hour + time.Second) }, testAcct, nil},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		before := creates()
		_, err := checkout(st.acct)
		if !errors.Is(err, st.wantErr) {
			t.Fatalf("%s: %v, want %v", st.name, err, st.wantErr)
		}
		if made := creates() - before; (st.wantErr == nil) != (made == 1) {
			t.Fatalf("%s: %d sessions created", st.name, made)
		}
	}
	if _, expired := f.recorded(); len(expired) != 0 {
		t.Errorf("sessions expired: %v", expired)
	}
}

// A checkout that loses the race for the last slot (the count before
// Stripe said yes; the store's atomic count says no) expires the session
// it made, and stores nothing.
type staleLimits struct{ Store }

func (staleLimits) CheckTopUpLimits(context.Context, string, store.TopUpLimits) error { return nil }

func TestCheckoutLimitRace(t *testing.T) {
	ctx := testCtx(t)
	st := testStore(t)
	for i := range MaxOpenTopUps {
		if err := st.CreateTopUp(ctx, store.TopUp{ID: fmt.Sprintf("top_%d", i), AccountID: testAcct, Amount: money.Unit,
			Provider: Provider, ExternalID: fmt.Sprintf("cs_earlier_%d", i), CreatedAt: fixed}, store.TopUpLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	f := newFakeStripe(t)
	s := newStripe(t, staleLimits{st}, f.URL)
	if _, _, err := s.Checkout(ctx, testAcct, money.Unit, MethodCard, successURL, cancelURL); !errors.Is(err, ErrTooManyTopUps) {
		t.Fatalf("Checkout: %v, want ErrTooManyTopUps", err)
	}
	if creates, expired := f.recorded(); len(creates) != 1 || len(expired) != 1 || expired[0] != "cs_test_1" {
		t.Errorf("creates %d, expired %v; want the session expired", len(creates), expired)
	}
	if tops, _ := st.ListTopUps(ctx, testAcct); len(tops) != MaxOpenTopUps {
		t.Errorf("%d top-ups stored, want %d", len(tops), MaxOpenTopUps)
	}
}

func endTopUp(t *testing.T, st Store, top store.TopUp, status store.TopUpStatus, at time.Time) {
	t.Helper()
	if err := st.EndTopUp(testCtx(t), Provider, top.ExternalID, status, at); err != nil {
		t.Fatal(err)
	}
}

func payTopUp(t *testing.T, st Store, top store.TopUp, at time.Time) {
	t.Helper()
	if _, _, err := st.PayTopUp(testCtx(t), Provider, top.ExternalID, "pi_"+top.ID, top.Amount, store.BonusRule{}, at); err != nil {
		t.Fatal(err)
	}
}

func TestCheckoutStripeError(t *testing.T) {
	st := testStore(t)
	f := newFakeStripe(t)
	s := newStripe(t, st, f.URL)
	s.SecretKey = "sk_test_wrong"
	if _, _, err := s.Checkout(testCtx(t), testAcct, money.Unit, MethodCard, successURL, cancelURL); err == nil ||
		errors.Is(err, ErrMethod) || errors.Is(err, ErrAmount) {
		t.Fatalf("Checkout error = %v, want Stripe's", err)
	}
	if tops, _ := st.ListTopUps(testCtx(t), testAcct); len(tops) != 0 {
		t.Errorf("top-ups %v stored after Stripe refused", tops)
	}
}

// TestCheckoutStripeMock runs Checkout against stripe-mock, which checks
// the request against Stripe's OpenAPI spec and answers with a session.
func TestCheckoutStripeMock(t *testing.T) {
	base := stripeMock(t)
	for _, method := range []string{MethodCard, MethodAlipay} {
		t.Run(method, func(t *testing.T) {
			ctx := testCtx(t)
			st := testStore(t)
			s := newStripe(t, st, base)
			top, checkoutURL, err := s.Checkout(ctx, testAcct, 10*money.Unit, method, successURL, cancelURL)
			if err != nil {
				t.Fatalf("Checkout: %v", err)
			}
			if !strings.HasPrefix(top.ExternalID, "cs_") || checkoutURL == "" {
				t.Errorf("session %q url %q", top.ExternalID, checkoutURL)
			}
			got, err := st.TopUpByExternalID(ctx, Provider, top.ExternalID)
			if err != nil || got.ID != top.ID || got.Status != store.TopUpPending || got.Amount != 10*money.Unit {
				t.Errorf("stored %+v, %v", got, err)
			}
		})
	}
}
