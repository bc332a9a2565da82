package console

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/payment"
	"github.com/modelgate/modelgate/internal/store"
)

// fakePayments records checkouts and answers webhooks as told.
type fakePayments struct {
	mu       sync.Mutex
	checkout []money.Micros
	hookErr  error
	st       store.Store
}

func (f *fakePayments) Checkout(ctx context.Context, accountID string, amount money.Micros, method, ok, cancel string) (store.TopUp, string, error) {
	f.mu.Lock()
	f.checkout = append(f.checkout, amount)
	n := len(f.checkout)
	f.mu.Unlock()
	t := store.TopUp{ID: fmt.Sprintf("top_%d", n), AccountID: accountID, Amount: amount, Method: method, Status: store.TopUpPending,
		Provider: "stripe", ExternalID: fmt.Sprintf("cs_%d", n), CreatedAt: time.Now().UTC()}
	if err := f.st.CreateTopUp(ctx, t, store.TopUpLimits{}); err != nil {
		return store.TopUp{}, "", err
	}
	return t, "https://pay.example/" + t.ExternalID, nil
}

func (f *fakePayments) HandleWebhook(context.Context, []byte, string) error { return f.hookErr }

func (f *fakePayments) calls() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.checkout) }

func TestTopUps(t *testing.T) {
	e := newEnv(t)
	pay := &fakePayments{st: e.st}
	e.c.Payments, e.c.Methods = pay, []string{"card", "alipay"}
	e.c.MinTopUp, e.c.MaxTopUp = money.Unit, 10_000*money.Unit
	b := e.browser()
	b.signIn("github")
	tests := []struct {
		name, body string
		status     int
		code       string
	}{
		{"string amount", `{"amount":"10","method":"card"}`, 201, ""},
		{"number amount", `{"amount":25.5,"method":"alipay"}`, 201, ""},
		{"the minimum", `{"amount":"1","method":"card"}`, 201, ""},
		{"the maximum", `{"amount":"10000","method":"card"}`, 201, ""},
		{"below the minimum", `{"amount":"0.5","method":"card"}`, 400, CodeInvalidAmount},
		{"above the maximum", `{"amount":"10000000","method":"card"}`, 400, CodeInvalidAmount},
		{"negative", `{"amount":"-5","method":"card"}`, 400, CodeInvalidAmount},
		{"not a number", `{"amount":"abc","method":"card"}`, 400, CodeInvalidAmount},
		{"an object", `{"amount":{"v":1},"method":"card"}`, 400, CodeInvalidAmount},
		{"exponent", `{"amount":"1e3","method":"card"}`, 400, CodeInvalidAmount},
		{"unknown method", `{"amount":"10","method":"paypal"}`, 400, CodeInvalidMethod},
		{"no method", `{"amount":"10"}`, 400, CodeInvalidMethod},
		{"unknown member", `{"amount":"10","method":"card","account":"x"}`, 400, "invalid_request_error"},
	}
	want := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.do("POST", "/console/api/topups", tt.body, b.withCSRF())
			if r.status != tt.status || (tt.code != "" && r.code() != tt.code) {
				t.Fatalf("%s: %d %s, want %d %s", tt.body, r.status, r.body, tt.status, tt.code)
			}
			if tt.status == 201 {
				want++
				var j topUpJSON
				r.json(t, &j)
				if j.Status != "pending" || !strings.HasPrefix(j.CheckoutURL, "https://pay.example/cs_") {
					t.Errorf("answer %s", r.body)
				}
			}
			if pay.calls() != want {
				t.Errorf("checkouts = %d, want %d (a refused top-up must not start one)", pay.calls(), want)
			}
		})
	}
	r := b.do("GET", "/console/api/topups", "", nil)
	var l struct{ Data []topUpJSON }
	r.json(t, &l)
	if len(l.Data) != want || l.Data[0].Amount != "10000.000000" {
		t.Errorf("top-up list %s", r.body)
	}
	// Without the CSRF header nothing starts.
	if r := b.do("POST", "/console/api/topups", `{"amount":"10","method":"card"}`, nil); r.status != 403 || pay.calls() != want {
		t.Errorf("no CSRF: %d, %d checkouts", r.status, pay.calls())
	}
	// Another user does not see them.
	other := e.browser()
	other.signIn("sso")
	r = other.do("GET", "/console/api/topups", "", nil)
	if !strings.Contains(string(r.body), `"data":[]`) {
		t.Errorf("another user's top-ups: %s", r.body)
	}
}

func TestTopUpsOff(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn("github")
	r := b.do("POST", "/console/api/topups", `{"amount":"10","method":"card"}`, b.withCSRF())
	if r.status != 400 || r.code() != CodeTopUpOff {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if r := b.do("POST", "/console/webhooks/stripe", `{}`, nil); r.status != 404 {
		t.Errorf("webhook without payments: %d", r.status)
	}
}

func TestWebhookAnswers(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
	}{
		{"applied", nil, 200},
		{"bad signature", fmt.Errorf("stripe: %w", payment.ErrSignature), 400},
		{"store down", fmt.Errorf("database is locked"), 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.c.Payments = &fakePayments{st: e.st, hookErr: tt.err}
			r := e.browser().do("POST", "/console/webhooks/stripe", `{"id":"evt_1"}`, map[string]string{"Stripe-Signature": "t=1,v1=x"})
			if r.status != tt.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tt.status)
			}
		})
	}
}

func TestRedeem(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	code, hash := NewCode()
	expired, ehash := NewCode()
	now := e.clock.Now()
	if err := e.st.CreateCodes(ctx, []store.RedeemCode{
		{ID: "code_1", Hash: hash, Batch: "b", Amount: 5 * money.Unit, CreatedAt: now},
		{ID: "code_2", Hash: ehash, Batch: "b", Amount: 5 * money.Unit, CreatedAt: now, ExpiresAt: now.Add(-time.Minute)},
	}); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.signIn("github")
	tests := []struct {
		name, code string
		status     int
		errCode    string
		balance    string
	}{
		{"lower case with spaces", " " + strings.ToLower(strings.ReplaceAll(code, "-", " ")) + " ", 200, "", "5.000000"},
		{"used", code, 409, CodeCodeUsed, "5.000000"},
		{"expired", expired, 400, CodeInvalidCode, "5.000000"},
		{"unknown", "MG-AAAA-AAAA-AAAA-AAAA-AAAA", 400, CodeInvalidCode, "5.000000"},
		{"empty", "", 400, CodeInvalidCode, "5.000000"},
		{"too long", strings.Repeat("A", 10_000), 400, CodeInvalidCode, "5.000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.do("POST", "/console/api/redeem", fmt.Sprintf(`{"code":%q}`, tt.code), b.withCSRF())
			if r.status != tt.status || (tt.errCode != "" && r.code() != tt.errCode) {
				t.Fatalf("%d %s, want %d %s", r.status, r.body, tt.status, tt.errCode)
			}
			if got := b.me().Balance; got != tt.balance {
				t.Errorf("balance %s, want %s", got, tt.balance)
			}
		})
	}
}

func TestCodeFormat(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		c, h := NewCode()
		if len(c) != len("MG-ABCD-EFGH-JKMN-PQRS-TUVW") || !strings.HasPrefix(c, "MG-") || seen[c] {
			t.Fatalf("code %q (seen %v)", c, seen[c])
		}
		seen[c] = true
		if string(CodeHash(strings.ToLower(c))) != string(h) || string(CodeHash(strings.ReplaceAll(c, "-", ""))) != string(h) {
			t.Fatalf("hash of %q depends on case or dashes", c)
		}
	}
}

func TestPercentText(t *testing.T) {
	for ppm, want := range map[int64]string{100_000: "10", 75_000: "7.5", 1: "0.0001", 1_000_000: "100"} {
		if got := percentText(ppm); got != want {
			t.Errorf("percentText(%d) = %q, want %q", ppm, got, want)
		}
	}
}

// limitedPayments refuses every checkout as over the account's limits.
type limitedPayments struct{ fakePayments }

func (*limitedPayments) Checkout(context.Context, string, money.Micros, string, string, string) (store.TopUp, string, error) {
	return store.TopUp{}, "", fmt.Errorf("%w: 5 open top-ups", payment.ErrTooManyTopUps)
}

// Past the top-up limits: 429 too_many_topups in the /v1 error shape from
// the JSON API, the same reason on the page, and no top-up.
func TestTopUpLimitRefused(t *testing.T) {
	e := newEnv(t)
	e.c.Payments, e.c.Methods = &limitedPayments{}, []string{"card"}
	e.c.MinTopUp, e.c.MaxTopUp = money.Unit, 100*money.Unit
	b := e.browser()
	b.signIn("github")
	r := b.do("POST", "/console/api/topups", `{"amount":"10","method":"card"}`, b.withCSRF())
	var body struct {
		Error struct{ Message, Type, Code string } `json:"error"`
	}
	r.json(t, &body)
	if r.status != 429 || body.Error.Code != CodeTooManyTopUps || body.Error.Type != "rate_limit_error" ||
		!strings.Contains(body.Error.Message, "5 checkouts open and start 10 an hour") {
		t.Fatalf("API: %d %s", r.status, r.body)
	}
	r = b.form("/console/topups", url.Values{"amount": {"10"}, "method": {"card"}}, "")
	if r.status != 429 || !strings.Contains(string(r.body), "Too many top-ups started") {
		t.Fatalf("form: %d %s", r.status, r.body)
	}
	if r := b.do("GET", "/console/api/topups", "", nil); r.status != 200 || !strings.Contains(string(r.body), `"data":[]`) {
		t.Errorf("top-ups after refusals: %d %s", r.status, r.body)
	}
}
