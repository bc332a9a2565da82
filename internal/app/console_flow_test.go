package app_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/console"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/payment/stripefake"
	"github.com/modelgate/modelgate/internal/store"
)

// End-to-end tests of the web console through the real routes of a running
// gateway: sign-in through a fake GitHub, top-ups through a fake Stripe
// Checkout (stripefake) whose signed webhooks reach the gateway, keys used
// with the official SDK, usage, statistics, redemption codes and the admin
// pages. console_browser_test.go drives the same journey in Chromium.

const (
	conStripeKey     = "sk_test_console_e2e"
	conWebhookSecret = "whsec_console_e2e"
)

// ghUser is who the fake GitHub says signed in.
type ghUser struct {
	ID    int64
	Login string
	Email string
}

// ghFake is enough of GitHub's OAuth and user API: the authorize endpoint
// redirects straight back with a code bound to the user set by as (so the
// identity is fixed when the browser is sent back, whatever happens later).
type ghFake struct {
	*httptest.Server
	mu     sync.Mutex
	next   ghUser
	codes  map[string]ghUser
	tokens map[string]ghUser
	n      int
}

func newGHFake(t *testing.T) *ghFake {
	f := &ghFake{next: ghUser{ID: 1, Login: "octocat", Email: "octocat@example.com"}, codes: map[string]ghUser{}, tokens: map[string]ghUser{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login/oauth/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != "gh-client" || q.Get("redirect_uri") == "" {
			http.Error(w, "bad authorize request", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.n++
		code := fmt.Sprintf("code-%d", f.n)
		f.codes[code] = f.next
		f.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("POST /login/oauth/access_token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		code := r.PostFormValue("code")
		f.mu.Lock()
		u, ok := f.codes[code]
		delete(f.codes, code) // single use
		tok := "gho_" + code
		if ok {
			f.tokens[tok] = u
		}
		f.mu.Unlock()
		if !ok {
			_, _ = io.WriteString(w, `{"error":"bad_verification_code"}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"access_token": tok, "token_type": "bearer", "scope": "read:user,user:email"})
	})
	user := func(r *http.Request) (ghUser, bool) {
		h := r.Header.Get("Authorization")
		tok := strings.TrimSpace(h[strings.IndexByte(h, ' ')+1:])
		f.mu.Lock()
		defer f.mu.Unlock()
		u, ok := f.tokens[tok]
		return u, ok
	}
	mux.HandleFunc("GET /api/v3/user", func(w http.ResponseWriter, r *http.Request) {
		u, ok := user(r)
		if !ok {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": u.ID, "login": u.Login, "name": u.Login})
	})
	mux.HandleFunc("GET /api/v3/user/emails", func(w http.ResponseWriter, r *http.Request) {
		u, ok := user(r)
		if !ok {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode([]map[string]any{{"email": u.Email, "primary": true, "verified": true}})
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// as makes the next sign-in that user.
func (f *ghFake) as(u ghUser) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next = u
}

// consoleEnv is a gateway with the console on, a fake GitHub and a fake
// Stripe whose webhooks go to the gateway.
type consoleEnv struct {
	t   *testing.T
	g   *gateway
	gh  *ghFake
	pay *stripefake.Server
}

// withConsole turns the console and Stripe payments on: $1..$10,000
// top-ups, a 10% first-top-up bonus of at most $20, card and Alipay;
// demo-chat is priced.
func withConsole(t *testing.T, gh *ghFake, pay *stripefake.Server) func(*config.Config) {
	return func(c *config.Config) {
		c.Console = &config.Console{SessionTTL: config.Duration(time.Hour), SignupGroups: []string{"default", "basic"},
			OAuth: []config.OAuthProvider{{Name: "github", Type: "github", ClientID: "gh-client", ClientSecret: "gh-secret",
				AuthURL: gh.URL + "/login/oauth/authorize", TokenURL: gh.URL + "/login/oauth/access_token", APIURL: gh.URL + "/api/v3"}}}
		c.Payments = &config.Payments{MinTopUp: config.Amount(money.Unit), MaxTopUp: config.Amount(10_000 * money.Unit),
			FirstTopUpBonus: config.TopUpBonus{Percent: config.Amount(10 * money.Unit), Max: config.Amount(20 * money.Unit)},
			Stripe: &config.StripeConf{SecretKey: conStripeKey, WebhookSecret: conWebhookSecret,
				Methods: []string{"card", "alipay"}, APIBase: pay.URL}}
		// The demo models are free; price demo-chat so requests cost
		// something ($10 in, $30 out per million tokens).
		in, out, free := config.Amount(10*money.Unit), config.Amount(30*money.Unit), false
		c.Models = append(c.Models, config.ModelConfig{ID: "demo-chat", Input: &in, Output: &out, Free: &free})
		if ps := c.Validate(); config.HasErrors(ps) {
			t.Fatalf("console config: %v", ps)
		}
	}
}

func startConsole(t *testing.T) *consoleEnv {
	t.Helper()
	gh := newGHFake(t)
	pay := stripefake.New(t, conStripeKey, conWebhookSecret)
	g := startGateway(t, withConsole(t, gh, pay))
	pay.SetWebhook(g.URL + "/console/webhooks/stripe")
	return &consoleEnv{t: t, g: g, gh: gh, pay: pay}
}

// account reads an account by name from the store.
func (e *consoleEnv) account(name string) store.Account {
	e.t.Helper()
	a, err := e.g.app.Store().AccountByName(context.Background(), name)
	if err != nil {
		e.t.Fatalf("account %q: %v", name, err)
	}
	return a
}

// conUser is one browser: a cookie jar and the session's CSRF token.
type conUser struct {
	e       *consoleEnv
	t       *testing.T
	c       *http.Client // follows redirects
	nf      *http.Client // same jar, stops at redirects
	csrf    string
	account string // the account's name
	id      string // the account's id
}

func (e *consoleEnv) newBrowser() *conUser {
	jar, _ := cookiejar.New(nil)
	return &conUser{e: e, t: e.t, c: &http.Client{Jar: jar, Timeout: 30 * time.Second},
		nf: &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// meJSON is /console/api/me.
type conMe struct {
	Account   string   `json:"account"`
	Name      string   `json:"name"`
	Email     string   `json:"email"`
	Role      string   `json:"role"`
	Balance   string   `json:"balance"`
	Currency  string   `json:"currency"`
	CSRFToken string   `json:"csrf_token"`
	Groups    []string `json:"groups"`
}

// signIn signs in through the fake GitHub as u, following the redirects
// like a browser, and reads the session's CSRF token.
func (e *consoleEnv) signIn(u ghUser) *conUser {
	e.t.Helper()
	b := e.newBrowser()
	e.gh.as(u)
	resp, err := b.c.Get(e.g.URL + "/console/login/github")
	if err != nil {
		e.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/console/" || !strings.Contains(string(body), `action="/console/topups"`) {
		e.t.Fatalf("sign-in as %s ended at %s with %d: %.300s", u.Login, resp.Request.URL, resp.StatusCode, body)
	}
	b.loadMe()
	return b
}

// adminSignIn signs a fresh browser in with a new admin login link.
func (e *consoleEnv) adminSignIn() *conUser {
	e.t.Helper()
	b := e.newBrowser()
	status, body, final := b.get("/console/admin-link?token=" + e.adminLink("admin", time.Now()))
	if status != http.StatusOK || final != "/console/admin" {
		e.t.Fatalf("admin link: %d at %s: %.300s", status, final, body)
	}
	b.loadMe()
	if me := b.me(); me.Role != "admin" {
		e.t.Fatalf("admin link session role %q", me.Role)
	}
	return b
}

// adminLink stores a login link for account made at now and returns its
// token.
func (e *consoleEnv) adminLink(account string, now time.Time) string {
	e.t.Helper()
	secret, l := console.NewLoginLink(account, now)
	if err := e.g.app.Store().CreateLoginLink(context.Background(), l); err != nil {
		e.t.Fatal(err)
	}
	return secret
}

func (b *conUser) loadMe() {
	b.t.Helper()
	me := b.me()
	if me.CSRFToken == "" || me.Account == "" {
		b.t.Fatalf("me: %+v", me)
	}
	b.csrf, b.account = me.CSRFToken, me.Account
	b.id = b.e.account(me.Account).ID
}

func (b *conUser) me() conMe {
	b.t.Helper()
	var me conMe
	b.wantJSON("GET", "/console/api/me", nil, http.StatusOK, &me)
	return me
}

// do sends a request with the browser's cookies; body is JSON-encoded
// unless it is a string or nil.
func (b *conUser) do(method, path string, body any, header map[string]string) (int, []byte) {
	b.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	default:
		j, err := json.Marshal(v)
		if err != nil {
			b.t.Fatal(err)
		}
		rd = strings.NewReader(string(j))
	}
	req, err := http.NewRequest(method, b.e.g.URL+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.nf.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// api is do with the session's CSRF header.
func (b *conUser) api(method, path string, body any) (int, []byte) {
	b.t.Helper()
	return b.do(method, path, body, map[string]string{console.CSRFHeader: b.csrf})
}

// wantJSON calls the API (with CSRF on state-changing methods), checks the
// status and decodes the answer into v (when not nil).
func (b *conUser) wantJSON(method, path string, body any, status int, v any) []byte {
	b.t.Helper()
	var got int
	var data []byte
	if method == http.MethodGet {
		got, data = b.do(method, path, body, nil)
	} else {
		got, data = b.api(method, path, body)
	}
	if got != status {
		b.t.Fatalf("%s %s: %d %s, want %d", method, path, got, data, status)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			b.t.Fatalf("%s %s: %s: %v", method, path, data, err)
		}
	}
	return data
}

// get fetches a page following redirects; it returns the status, the body
// and the final path.
func (b *conUser) get(path string) (int, string, string) {
	b.t.Helper()
	resp, err := b.c.Get(b.e.g.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), resp.Request.URL.Path
}

// form posts an HTML form without following the redirect; csrf adds the
// session's csrf_token field.
func (b *conUser) form(path string, v url.Values, csrf bool) (status int, location, body string) {
	b.t.Helper()
	if v == nil {
		v = url.Values{}
	}
	if csrf {
		v.Set("csrf_token", b.csrf)
	}
	resp, err := b.nf.PostForm(b.e.g.URL+path, v)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(data)
}

func errCode(body []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error.Code
}

// conKey is a key as /console/api/keys shows it.
type conKey struct {
	ID         string     `json:"id"`
	Key        string     `json:"key"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	Group      string     `json:"group"`
	LastUsedAt *time.Time `json:"last_used_at"`
	Status     string     `json:"status"`
}

func (b *conUser) createKey(name, group string) conKey {
	b.t.Helper()
	var k conKey
	b.wantJSON("POST", "/console/api/keys", map[string]string{"name": name, "group": group}, http.StatusCreated, &k)
	if k.ID == "" || !strings.HasPrefix(k.Key, "sk-") && len(k.Key) < 20 {
		b.t.Fatalf("created key: %+v", k)
	}
	return k
}

func (b *conUser) keys() []conKey {
	b.t.Helper()
	var l struct{ Data []conKey }
	b.wantJSON("GET", "/console/api/keys", nil, http.StatusOK, &l)
	return l.Data
}

// conTopUp is a top-up as the API shows it.
type conTopUp struct {
	ID          string `json:"id"`
	Amount      string `json:"amount"`
	Bonus       string `json:"bonus"`
	Method      string `json:"method"`
	Status      string `json:"status"`
	CheckoutURL string `json:"checkout_url"`
}

// topUp starts a top-up through the API and returns it.
func (b *conUser) topUp(amount any, method string) conTopUp {
	b.t.Helper()
	var tu conTopUp
	b.wantJSON("POST", "/console/api/topups", map[string]any{"amount": amount, "method": method}, http.StatusCreated, &tu)
	if tu.Status != "pending" || !strings.HasPrefix(tu.CheckoutURL, b.e.pay.URL+"/pay/cs_test_") {
		b.t.Fatalf("top-up: %+v", tu)
	}
	return tu
}

func (b *conUser) topUps() []conTopUp {
	b.t.Helper()
	var l struct{ Data []conTopUp }
	b.wantJSON("GET", "/console/api/topups", nil, http.StatusOK, &l)
	return l.Data
}

// payAt presses Pay on the fake's hosted page: the webhook is delivered
// before the answer, which sends the browser back to the console.
func (e *consoleEnv) payAt(checkoutURL string) {
	e.t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.PostForm(checkoutURL, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != e.g.URL+"/console/?topup=done" {
		e.t.Fatalf("pay %s: %d to %q: %s", checkoutURL, resp.StatusCode, resp.Header.Get("Location"), body)
	}
}

func sessionID(checkoutURL string) string {
	return checkoutURL[strings.LastIndexByte(checkoutURL, '/')+1:]
}

func (e *consoleEnv) balance(name string) money.Micros { e.t.Helper(); return e.account(name).Balance }

func units(v float64) money.Micros { return money.Micros(v * float64(money.Unit)) }

// chat sends one small chat completion with key through the SDK.
func (e *consoleEnv) chat(key string) (*oai.ChatCompletion, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := e.g.client(key)
	return c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{
		Model:    "demo-chat",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Say hello to the console test.")},
	})
}

// eventually retries check every 20 ms for up to 5 s.
func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// conUsage is a usage record as the API shows it.
type conUsage struct {
	RequestID        string    `json:"request_id"`
	CreatedAt        time.Time `json:"created_at"`
	Model            string    `json:"model"`
	Endpoint         string    `json:"endpoint"`
	KeyID            string    `json:"key_id"`
	PromptTokens     int64     `json:"prompt_tokens"`
	CompletionTokens int64     `json:"completion_tokens"`
	Cost             string    `json:"cost"`
	Status           int       `json:"status"`
	ErrorCode        string    `json:"error_code"`
}

func (b *conUser) usage(query string) []conUsage {
	b.t.Helper()
	var l struct {
		Data []conUsage `json:"data"`
	}
	b.wantJSON("GET", "/console/api/usage"+query, nil, http.StatusOK, &l)
	return l.Data
}

func mustMoney(t *testing.T, s string) money.Micros {
	t.Helper()
	m, err := money.Parse(s)
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	return m
}

// The whole user journey over HTTP: sign-in, key, top-ups with the bonus,
// requests, usage, CSV and statistics agreeing to the micro-unit.
func TestConsoleFlowJourney(t *testing.T) {
	e := startConsole(t)
	u := e.signIn(ghUser{ID: 583231, Login: "octocat", Email: "octocat@example.com"})

	acct := e.account("github:octocat")
	me := u.me()
	if me.Account != "github:octocat" || me.Name != "octocat" || me.Email != "octocat@example.com" || me.Role != "user" ||
		me.Currency != "USD" || mustMoney(t, me.Balance) != 0 || !slices.Equal(me.Groups, []string{"default", "basic"}) {
		t.Fatalf("me = %+v", me)
	}
	if acct.Balance != 0 || acct.Admin {
		t.Fatalf("new account = %+v", acct)
	}
	// Signing in again is the same account.
	again := e.signIn(ghUser{ID: 583231, Login: "octocat", Email: "octocat@example.com"})
	if again.id != acct.ID {
		t.Fatalf("second sign-in made account %s, want %s", again.id, acct.ID)
	}

	key := u.createKey("laptop", "default")
	if ks := u.keys(); len(ks) != 1 || ks[0].ID != key.ID || ks[0].Status != "active" || ks[0].LastUsedAt != nil || ks[0].Key != "" {
		t.Fatalf("keys = %+v", ks)
	}

	// No balance yet: the key is refused for quota.
	_, err := e.chat(key.Key)
	apiError(t, err, http.StatusTooManyRequests, "insufficient_quota")

	// First top-up: 10 + 10% bonus.
	first := u.topUp("10", "card")
	if mustMoney(t, first.Amount) != units(10) || first.Method != "card" {
		t.Fatalf("top-up = %+v", first)
	}
	sess, ok := e.pay.Session(sessionID(first.CheckoutURL))
	if !ok || sess.AmountTotal != 1000 || sess.Currency != "usd" || !slices.Equal(sess.PaymentMethodTypes, []string{"card"}) ||
		sess.Metadata["account_id"] != acct.ID || sess.SuccessURL != e.g.URL+"/console/?topup=done" ||
		sess.CancelURL != e.g.URL+"/console/?topup=cancelled" {
		t.Fatalf("fake session = %+v", sess)
	}
	if got := e.balance(acct.Name); got != 0 {
		t.Fatalf("balance before paying = %s", got)
	}
	e.payAt(first.CheckoutURL)
	if got := e.balance(acct.Name); got != units(11) {
		t.Fatalf("balance after the first top-up = %s, want 11", got)
	}
	// The overview the browser lands on shows it.
	if st, page, _ := u.get("/console/?topup=done"); st != 200 || !strings.Contains(page, "$11.00") {
		t.Fatalf("overview after paying: %d, no $11.00", st)
	}

	// A second top-up, as a JSON number and by Alipay: no second bonus.
	second := u.topUp(300, "alipay")
	e.payAt(second.CheckoutURL)
	if got := e.balance(acct.Name); got != units(311) {
		t.Fatalf("balance after the second top-up = %s, want 311", got)
	}
	tus := u.topUps()
	if len(tus) != 2 || tus[0].ID != second.ID || tus[0].Status != "paid" || mustMoney(t, tus[0].Amount) != units(300) ||
		mustMoney(t, tus[0].Bonus) != 0 || tus[1].ID != first.ID || tus[1].Status != "paid" || mustMoney(t, tus[1].Bonus) != units(1) ||
		tus[1].CheckoutURL != "" {
		t.Fatalf("top-ups = %+v", tus)
	}

	// Requests: the credit is spendable at once, although the refused
	// request above left a copy of the zero balance in the reserver.
	const n = 3
	for i := range n {
		c, err := e.chat(key.Key)
		if err != nil {
			var ae *oai.Error
			if errors.As(err, &ae) {
				t.Fatalf("chat %d: %v: %s", i, err, ae.RawJSON())
			}
			t.Fatalf("chat %d: %v", i, err)
		}
		if len(c.Choices) == 0 || c.Choices[0].Message.Content == "" {
			t.Fatalf("chat %d: %+v", i, c)
		}
	}
	// n answered requests and the one refused for quota above.
	var recs []conUsage
	eventually(t, "usage records", func() bool { recs = u.usage(""); return len(recs) == n+1 })
	var total money.Micros
	for i, r := range recs {
		if i == n { // oldest first at the end: the refused request
			if r.Status != 429 || r.ErrorCode != "insufficient_quota" || mustMoney(t, r.Cost) != 0 || r.KeyID != key.ID {
				t.Fatalf("refused request's record %+v", r)
			}
			continue
		}
		if r.Model != "demo-chat" || r.KeyID != key.ID || r.Status != 200 || r.PromptTokens <= 0 || r.CompletionTokens <= 0 ||
			r.Endpoint == "" || r.RequestID == "" || mustMoney(t, r.Cost) <= 0 {
			t.Fatalf("usage record %+v", r)
		}
		total += mustMoney(t, r.Cost)
	}
	if got := e.balance(acct.Name); got != units(311)-total {
		t.Fatalf("balance %s after spending %s of 311", got, total)
	}
	// Filters: by key, by model, status.
	if got := u.usage("?key=" + key.ID + "&model=demo-chat&status=ok"); len(got) != n {
		t.Fatalf("filtered usage: %d records", len(got))
	}
	if got := u.usage("?status=error"); len(got) != 1 || got[0].Status != 429 {
		t.Fatalf("error records: %+v", got)
	}
	if got := u.usage("?key=key_other"); len(got) != 0 {
		t.Fatalf("another key's records: %+v", got)
	}
	if got := u.usage("?limit=2"); len(got) != 2 {
		t.Fatalf("limit=2: %d records", len(got))
	}

	// usage.csv has the same rows.
	st, body := u.do("GET", "/console/api/usage.csv", nil, nil)
	if st != 200 {
		t.Fatalf("usage.csv: %d %s", st, body)
	}
	rows, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil {
		t.Fatalf("usage.csv: %v\n%s", err, body)
	}
	wantHeader := []string{"request_id", "created_at", "model", "endpoint", "key_id", "prompt_tokens", "completion_tokens", "cost", "status", "error_code"}
	if len(rows) != len(recs)+1 || !slices.Equal(rows[0], wantHeader) {
		t.Fatalf("usage.csv rows:\n%s", body)
	}
	for i, r := range recs {
		row := rows[i+1]
		at, err := time.Parse(time.RFC3339Nano, row[1])
		want := []string{r.RequestID, row[1], r.Model, r.Endpoint, r.KeyID, fmt.Sprint(r.PromptTokens), fmt.Sprint(r.CompletionTokens),
			r.Cost, fmt.Sprint(r.Status), r.ErrorCode}
		if err != nil || !at.Equal(r.CreatedAt) || !slices.Equal(row, want) {
			t.Fatalf("csv row %d = %q, want %q (time %v)", i, row, want, r.CreatedAt)
		}
	}

	// Statistics: daily totals equal the records, to the micro-unit.
	var stats struct {
		Days  int
		From  string
		To    string
		Daily []struct {
			Date             string
			Requests         int64
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
			Cost             string
		}
		ByModel []struct {
			Model    string
			Requests int64
			Cost     string
		} `json:"by_model"`
		ByKey []struct {
			KeyID    string `json:"key_id"`
			Name     string
			Requests int64
			Cost     string
		} `json:"by_key"`
	}
	u.wantJSON("GET", "/console/api/stats?days=7", nil, 200, &stats)
	type tot struct {
		req, in, out int64
		cost         money.Micros
	}
	want := map[string]tot{}
	for _, r := range recs {
		d := r.CreatedAt.UTC().Format(time.DateOnly)
		x := want[d]
		x.req++
		x.in += r.PromptTokens
		x.out += r.CompletionTokens
		x.cost += mustMoney(t, r.Cost)
		want[d] = x
	}
	if stats.Days != 7 || len(stats.Daily) != 7 || stats.To != time.Now().UTC().Format(time.DateOnly) {
		t.Fatalf("stats range: %d days, %d entries, to %s", stats.Days, len(stats.Daily), stats.To)
	}
	var seen int64
	for _, d := range stats.Daily {
		w := want[d.Date]
		if d.Requests != w.req || d.PromptTokens != w.in || d.CompletionTokens != w.out || mustMoney(t, d.Cost) != w.cost {
			t.Fatalf("stats for %s = %+v, records say %+v", d.Date, d, w)
		}
		seen += d.Requests
	}
	if seen != int64(len(recs)) || len(stats.ByModel) != 1 || stats.ByModel[0].Model != "demo-chat" || mustMoney(t, stats.ByModel[0].Cost) != total ||
		len(stats.ByKey) != 1 || stats.ByKey[0].KeyID != key.ID || stats.ByKey[0].Name != "laptop" || stats.ByKey[0].Requests != int64(len(recs)) {
		t.Fatalf("stats = %+v", stats)
	}
	for _, q := range []string{"?days=0", "?days=367", "?days=x"} {
		if st, body := u.do("GET", "/console/api/stats"+q, nil, nil); st != 400 {
			t.Errorf("stats%s: %d %s", q, st, body)
		}
	}

	// The key's last use is recorded.
	eventually(t, "last_used_at", func() bool { ks := u.keys(); return len(ks) == 1 && ks[0].LastUsedAt != nil })
	if lu := *u.keys()[0].LastUsedAt; time.Since(lu) > time.Minute || time.Until(lu) > time.Second {
		t.Fatalf("last_used_at = %v", lu)
	}

	// The HTML pages agree.
	if st, page, _ := u.get("/console/usage"); st != 200 || strings.Count(page, "demo-chat") < n {
		t.Fatalf("usage page: %d, %d mentions of demo-chat", st, strings.Count(page, "demo-chat"))
	}
	if st, page, _ := u.get("/console/stats"); st != 200 || !strings.Contains(page, "<svg") {
		t.Fatalf("stats page: %d", st)
	}
	if st, page, _ := u.get("/console/keys"); st != 200 || !strings.Contains(page, "laptop") || !strings.Contains(page, key.Prefix) ||
		strings.Contains(page, key.Key) {
		t.Fatalf("keys page: %d (must list the key by prefix, never the secret)", st)
	}

	// Signing out ends the session.
	if st, loc, _ := u.form("/console/logout", nil, true); st != http.StatusSeeOther || loc != "/console/" {
		t.Fatalf("logout: %d to %q", st, loc)
	}
	if st, body := u.do("GET", "/console/api/me", nil, nil); st != 401 || errCode(body) != "not_signed_in" {
		t.Fatalf("me after logout: %d %s", st, body)
	}
}

// Bad input is refused with nothing changed: amounts, methods, key names,
// CSRF, and webhooks that are forged, unknown, replayed or out of order.
func TestConsoleFlowRefusals(t *testing.T) {
	e := startConsole(t)
	u := e.signIn(ghUser{ID: 7, Login: "mallory", Email: "m@example.com"})
	key := u.createKey("k1", "default")

	t.Run("top-up input", func(t *testing.T) {
		tests := []struct {
			amount any
			method string
			code   string
		}{
			{"0.5", "card", "invalid_amount"},
			{0.5, "card", "invalid_amount"},
			{"0", "card", "invalid_amount"},
			{"10000000", "card", "invalid_amount"},
			{"10000.01", "card", "invalid_amount"},
			{"-5", "card", "invalid_amount"},
			{-5, "card", "invalid_amount"},
			{"abc", "card", "invalid_amount"},
			{"", "card", "invalid_amount"},
			{"1e3", "card", "invalid_amount"},
			{"10.001", "card", "invalid_amount"}, // not whole cents
			{true, "card", "invalid_amount"},
			{nil, "card", "invalid_amount"},
			{"10", "paypal", "invalid_method"},
			{"10", "", "invalid_method"},
			{"10", "CARD", "invalid_method"},
		}
		for _, tt := range tests {
			before := len(e.pay.Sessions())
			st, body := u.api("POST", "/console/api/topups", map[string]any{"amount": tt.amount, "method": tt.method})
			if st != 400 || errCode(body) != tt.code {
				t.Errorf("top-up %#v by %q: %d %s, want 400 %s", tt.amount, tt.method, st, body, tt.code)
			}
			if after := len(e.pay.Sessions()); after != before {
				t.Errorf("top-up %#v by %q created a Stripe session", tt.amount, tt.method)
			}
		}
		// Not JSON, or with unknown members.
		for _, body := range []string{`{"amount":"10","method":"card","bonus":"100"}`, `amount=10`, `{"amount":"10"} {}`} {
			if st, b := u.api("POST", "/console/api/topups", body); st != 400 {
				t.Errorf("top-up body %s: %d %s", body, st, b)
			}
		}
		// The form says why on the overview page.
		st, _, page := u.form("/console/topups", url.Values{"amount": {"0.5"}, "method": {"card"}}, true)
		if st != 400 || !strings.Contains(page, "amount must be a number from 1.000000 to 10000.000000") && !strings.Contains(page, "amount must be") {
			t.Errorf("top-up form 0.5: %d", st)
		}
		if len(e.pay.Sessions()) != 0 || len(u.topUps()) != 0 {
			t.Fatalf("refused top-ups left %d sessions, %d top-ups", len(e.pay.Sessions()), len(u.topUps()))
		}
	})

	t.Run("key names", func(t *testing.T) {
		long := strings.Repeat("x", 10<<10)
		if st, body := u.api("POST", "/console/api/keys", map[string]string{"name": long, "group": "default"}); st != 400 {
			t.Errorf("10 KB name: %d %s", st, body)
		}
		if st, body := u.api("POST", "/console/api/keys", map[string]string{"name": strings.Repeat("é", 101), "group": "default"}); st != 400 {
			t.Errorf("101-character name: %d %s", st, body)
		}
		if st, _, _ := u.form("/console/keys", url.Values{"name": {long}, "group": {"default"}}, true); st != 400 {
			t.Errorf("10 KB name by form: %d", st)
		}
		if st, body := u.api("POST", "/console/api/keys", map[string]string{"name": "k", "group": "admins"}); st != 400 {
			t.Errorf("unknown group: %d %s", st, body)
		}
		if st, body := u.api("POST", "/console/api/keys", `{"name":"`+strings.Repeat("y", 70<<10)+`","group":"default"}`); st != 413 {
			t.Errorf("70 KB body: %d %.200s", st, body)
		}
		if ks := u.keys(); len(ks) != 1 {
			t.Fatalf("refused names created keys: %+v", ks)
		}
		// Exactly 100 characters is fine.
		u.createKey(strings.Repeat("é", 100), "basic")
	})

	t.Run("csrf", func(t *testing.T) {
		other := e.signIn(ghUser{ID: 8, Login: "eve", Email: "eve@example.com"})
		keysBefore := u.keys()
		calls := []struct {
			name        string
			method      string
			path        string
			body        string
			contentType string
		}{
			{"api create key", "POST", "/console/api/keys", `{"name":"x","group":"default"}`, "application/json"},
			{"api revoke key", "DELETE", "/console/api/keys/" + key.ID, "", ""},
			{"api top-up", "POST", "/console/api/topups", `{"amount":"10","method":"card"}`, "application/json"},
			{"api redeem", "POST", "/console/api/redeem", `{"code":"MG-AAAA-AAAA-AAAA-AAAA-AAAA"}`, "application/json"},
			{"form create key", "POST", "/console/keys", "name=x&group=default", "application/x-www-form-urlencoded"},
			{"form revoke key", "POST", "/console/keys/" + key.ID + "/revoke", "", "application/x-www-form-urlencoded"},
			{"form top-up", "POST", "/console/topups", "amount=10&method=card", "application/x-www-form-urlencoded"},
			{"form redeem", "POST", "/console/redeem", "code=MG-AAAA", "application/x-www-form-urlencoded"},
			{"logout", "POST", "/console/logout", "", "application/x-www-form-urlencoded"},
		}
		for _, c := range calls {
			for _, forge := range []struct {
				name   string
				header string // X-CSRF-Token
				field  string // csrf_token
			}{
				{"missing", "", ""},
				{"forged header", "forged-token", ""},
				{"forged field", "", "forged-token"},
				{"another session's token", other.csrf, ""},
				{"another session's token in the field", "", other.csrf},
			} {
				body := c.body
				if forge.field != "" {
					if body != "" {
						body += "&"
					}
					body += "csrf_token=" + url.QueryEscape(forge.field)
				}
				h := map[string]string{"Origin": "http://evil.example"}
				if c.contentType != "" {
					h["Content-Type"] = c.contentType
				}
				if forge.header != "" {
					h[console.CSRFHeader] = forge.header
				}
				var rb any
				if body != "" {
					rb = body
				}
				st, b := u.do(c.method, c.path, rb, h)
				if st != http.StatusForbidden {
					t.Errorf("%s, %s: %d %.200s, want 403", c.name, forge.name, st, b)
				}
			}
		}
		if ks := u.keys(); !slices.EqualFunc(ks, keysBefore, func(a, b conKey) bool { return a.ID == b.ID && a.Status == b.Status }) {
			t.Errorf("keys changed by refused requests: %+v, was %+v", ks, keysBefore)
		}
		if len(e.pay.Sessions()) != 0 || len(u.topUps()) != 0 {
			t.Errorf("refused requests started top-ups")
		}
		u.me()                    // still signed in
		_, err := e.chat(key.Key) // alive, only short of quota
		apiError(t, err, http.StatusTooManyRequests, "insufficient_quota")
	})

	t.Run("webhooks", func(t *testing.T) {
		acct := u.id
		pending := u.topUp("10", "card")
		sid := sessionID(pending.CheckoutURL)
		payload := e.pay.Event("checkout.session.completed", sid, nil)
		good := e.pay.Sign(payload)
		tampered := []byte(strings.Replace(string(payload), `"amount_total":1000`, `"amount_total":1000000`, 1))
		if string(tampered) == string(payload) {
			t.Fatal("could not tamper with the payload")
		}
		bad := []struct {
			name    string
			payload []byte
			sig     string
		}{
			{"no signature", payload, ""},
			{"wrong secret", payload, stripefake.SignAt(payload, "whsec_wrong", time.Now())},
			{"tampered amount", tampered, good},
			{"stale timestamp", payload, stripefake.SignAt(payload, conWebhookSecret, time.Now().Add(-time.Hour))},
			{"garbage header", payload, "t=1,v1=00"},
			{"signed non-event", []byte(`not json`), e.pay.Sign([]byte(`not json`))},
		}
		for _, b := range bad {
			if st := e.pay.SendRaw(b.payload, b.sig); st != 400 {
				t.Errorf("%s: %d, want 400", b.name, st)
			}
		}
		if got := e.balance(u.account); got != 0 {
			t.Fatalf("balance after refused webhooks: %s", got)
		}
		if tus := u.topUps(); len(tus) != 1 || tus[0].Status != "pending" {
			t.Fatalf("top-ups after refused webhooks: %+v", tus)
		}

		// A signed event for a session the gateway did not create, even
		// naming this account, credits nothing.
		st := e.pay.Send("checkout.session.completed", "cs_unknown", func(ev map[string]any) {
			o := stripefake.Object(ev)
			o["payment_status"], o["amount_total"], o["currency"] = "paid", 500000, "usd"
			o["client_reference_id"] = acct
			o["metadata"] = map[string]any{"account_id": acct, "topup_id": pending.ID}
		})
		if st != 200 {
			t.Fatalf("unknown session: %d", st)
		}
		if got := e.balance(u.account); got != 0 {
			t.Fatalf("balance after an unknown session's event: %s", got)
		}

		// The same event delivered twice (each delivery freshly signed):
		// credited once, with the first-top-up bonus.
		for i := range 2 {
			if st := e.pay.SendRaw(payload, e.pay.Sign(payload)); st != 200 {
				t.Fatalf("delivery %d: %d", i, st)
			}
		}
		if got := e.balance(u.account); got != units(11) {
			t.Fatalf("balance after a replayed event: %s, want 11", got)
		}
		// Another event id for the same paid session changes nothing.
		if st := e.pay.Send("checkout.session.async_payment_succeeded", sid, nil); st != 200 {
			t.Fatalf("late async event: %d", st)
		}
		if got := e.balance(u.account); got != units(11) {
			t.Fatalf("balance after a second event for a paid session: %s", got)
		}

		// Out of order: async_payment_succeeded before completed.
		later := u.topUp("20", "alipay")
		lsid := sessionID(later.CheckoutURL)
		if st := e.pay.Send("checkout.session.async_payment_succeeded", lsid, nil); st != 200 {
			t.Fatalf("async succeeded: %d", st)
		}
		if st := e.pay.Send("checkout.session.completed", lsid, nil); st != 200 {
			t.Fatalf("completed: %d", st)
		}
		if got := e.balance(u.account); got != units(31) {
			t.Fatalf("balance after out-of-order events: %s, want 31", got)
		}
		// Expired after paid: still paid; the fake refuses to pay it again.
		if st := e.pay.Send("checkout.session.expired", lsid, nil); st != 200 {
			t.Fatalf("expired: %d", st)
		}
		tus := u.topUps()
		if len(tus) != 2 || tus[0].Status != "paid" || mustMoney(t, tus[0].Bonus) != 0 || tus[1].Status != "paid" ||
			mustMoney(t, tus[1].Bonus) != units(1) {
			t.Fatalf("top-ups = %+v", tus)
		}
		// An unpaid session that expires never credits, even if a paid
		// event arrives afterwards.
		gone := u.topUp("50", "card")
		gsid := sessionID(gone.CheckoutURL)
		if st := e.pay.Send("checkout.session.expired", gsid, nil); st != 200 {
			t.Fatalf("expired: %d", st)
		}
		if st := e.pay.Send("checkout.session.completed", gsid, nil); st != 200 {
			t.Fatalf("completed after expiry: %d", st)
		}
		if got := e.balance(u.account); got != units(31) {
			t.Fatalf("balance after paying an expired session: %s, want 31", got)
		}
		if tus := u.topUps(); tus[0].Status != "expired" {
			t.Fatalf("expired top-up shows %+v", tus[0])
		}
		// The ledger agrees with the balance.
		sum, err := e.g.app.Store().LedgerSum(context.Background(), acct)
		if err != nil || sum != units(31) {
			t.Fatalf("ledger sum %s, %v", sum, err)
		}
	})
}

// One user cannot touch or see another's keys, usage or top-ups; a revoked
// key stops working at once (auth cache TTL 1 ns in tests).
func TestConsoleFlowIsolationAndRevoke(t *testing.T) {
	e := startConsole(t)
	alice := e.signIn(ghUser{ID: 100, Login: "alice", Email: "alice@example.com"})
	bob := e.signIn(ghUser{ID: 200, Login: "bob", Email: "bob@example.com"})
	if alice.id == bob.id || bob.account != "github:bob" {
		t.Fatalf("accounts %s and %s", alice.account, bob.account)
	}
	key := alice.createKey("alice-key", "default")
	e.payAt(alice.topUp("10", "card").CheckoutURL)
	if _, err := e.chat(key.Key); err != nil {
		t.Fatal(err)
	}
	eventually(t, "alice's usage", func() bool { return len(alice.usage("")) == 1 })

	// Bob cannot revoke Alice's key, by API or form, nor learn it exists.
	st, body := bob.api("DELETE", "/console/api/keys/"+key.ID, nil)
	if st != 404 || errCode(body) != "not_found" {
		t.Fatalf("bob revokes alice's key: %d %s", st, body)
	}
	if st, body := bob.api("DELETE", "/console/api/keys/key_doesnotexist", nil); st != 404 || errCode(body) != "not_found" {
		t.Fatalf("bob revokes a missing key: %d %s", st, body)
	}
	if st, _, _ := bob.form("/console/keys/"+key.ID+"/revoke", nil, true); st != 404 {
		t.Fatalf("bob revokes alice's key by form: %d", st)
	}
	if _, err := e.chat(key.Key); err != nil {
		t.Fatalf("alice's key after bob's attempts: %v", err)
	}
	// Bob sees nothing of Alice's.
	if ks := bob.keys(); len(ks) != 0 {
		t.Fatalf("bob's keys: %+v", ks)
	}
	for _, q := range []string{"", "?key=" + key.ID, "?model=demo-chat"} {
		if got := bob.usage(q); len(got) != 0 {
			t.Fatalf("bob's usage%s: %+v", q, got)
		}
	}
	if tus := bob.topUps(); len(tus) != 0 {
		t.Fatalf("bob's top-ups: %+v", tus)
	}
	if st, body := bob.do("GET", "/console/api/usage.csv?key="+key.ID, nil, nil); st != 200 || strings.Count(string(body), "\n") != 1 {
		t.Fatalf("bob's usage.csv: %d %s", st, body)
	}
	var stats struct {
		ByKey []any `json:"by_key"`
	}
	bob.wantJSON("GET", "/console/api/stats", nil, 200, &stats)
	if len(stats.ByKey) != 0 {
		t.Fatalf("bob's stats: %+v", stats)
	}
	for _, p := range []string{"/console/usage", "/console/keys", "/console/", "/console/stats"} {
		if st, page, _ := bob.get(p); st != 200 || strings.Contains(page, "alice-key") || strings.Contains(page, key.Prefix) {
			t.Fatalf("bob's %s shows alice's key (%d)", p, st)
		}
	}
	// Signed out, nothing.
	anon := e.newBrowser()
	for _, p := range []string{"/console/api/keys", "/console/api/usage", "/console/api/topups", "/console/api/stats", "/console/api/usage.csv"} {
		if st, body := anon.do("GET", p, nil, nil); st != 401 {
			t.Fatalf("signed out %s: %d %s", p, st, body)
		}
	}
	if st, _, final := anon.get("/console/keys"); st != 200 || final != "/console/" {
		t.Fatalf("signed out /console/keys: %d at %s", st, final)
	}

	// Alice revokes by API: the next request fails.
	if st, body := alice.api("DELETE", "/console/api/keys/"+key.ID, nil); st != 204 {
		t.Fatalf("revoke: %d %s", st, body)
	}
	_, err := e.chat(key.Key)
	apiError(t, err, 401, "invalid_api_key")
	if ks := alice.keys(); len(ks) != 1 || ks[0].Status != "revoked" {
		t.Fatalf("keys after revoking: %+v", ks)
	}
	// And by form.
	k2 := alice.createKey("second", "basic")
	if _, err := e.chat(k2.Key); err != nil {
		t.Fatal(err)
	}
	if st, loc, _ := alice.form("/console/keys/"+k2.ID+"/revoke", nil, true); st != http.StatusSeeOther || loc != "/console/keys?done=revoked" {
		t.Fatalf("revoke by form: %d to %q", st, loc)
	}
	_, err = e.chat(k2.Key)
	apiError(t, err, 401, "invalid_api_key")
}

var codeRE = regexp.MustCompile(`MG-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}`)

// createCodes makes a batch through the admin form and returns the codes
// parsed from the page.
func (b *conUser) createCodes(batch string, count int, amount string) []string {
	b.t.Helper()
	st, _, page := b.form("/console/admin/codes", url.Values{"batch": {batch}, "count": {fmt.Sprint(count)}, "amount": {amount}}, true)
	if st != http.StatusCreated {
		b.t.Fatalf("create codes: %d %.500s", st, page)
	}
	codes := slices.Compact(slices.Sorted(slices.Values(codeRE.FindAllString(page, -1))))
	if len(codes) != count {
		b.t.Fatalf("codes on the page: %q, want %d", codes, count)
	}
	return codes
}

// The admin sign-in link, redemption codes (once, even when raced), admin
// disabling an account and adjusting a balance.
func TestConsoleFlowAdminAndCodes(t *testing.T) {
	e := startConsole(t)
	user := e.signIn(ghUser{ID: 300, Login: "carol", Email: "carol@example.com"})

	// A non-admin gets 404 for the admin pages and forms.
	for _, s := range []string{"", "?section=accounts", "?section=codes"} {
		if st, page, _ := user.get("/console/admin" + s); st != 404 || strings.Contains(page, "Create redeem codes") {
			t.Fatalf("non-admin /console/admin%s: %d", s, st)
		}
	}
	if st, _, _ := user.form("/console/admin/codes", url.Values{"batch": {"x"}, "count": {"1"}, "amount": {"100"}}, true); st != 404 {
		t.Fatalf("non-admin creates codes: %d", st)
	}
	if st, _, _ := user.form("/console/admin/accounts/"+user.id+"/adjust", url.Values{"amount": {"100"}, "reason": {"me"}}, true); st != 404 {
		t.Fatalf("non-admin adjusts own balance: %d", st)
	}
	if got := e.balance(user.account); got != 0 {
		t.Fatalf("non-admin forms moved money: %s", got)
	}

	// Admin links: once, unexpired, whole.
	admin := e.adminSignIn()
	if admin.account != "admin" || !e.account("admin").Admin {
		t.Fatalf("admin account %q", admin.account)
	}
	used := e.adminLink("admin", time.Now())
	if st, _, final := e.newBrowser().get("/console/admin-link?token=" + used); st != 200 || final != "/console/admin" {
		t.Fatalf("fresh link: %d at %s", st, final)
	}
	links := []struct {
		name, token, want string
	}{
		{"used", used, "used already"},
		{"expired", e.adminLink("admin", time.Now().Add(-time.Hour)), "expired"},
		{"unknown", "not-a-real-token", "unknown"},
		{"empty", "", "incomplete"},
		{"too long", strings.Repeat("a", 200), "incomplete"},
	}
	for _, l := range links {
		b := e.newBrowser()
		st, page, _ := b.get("/console/admin-link?token=" + url.QueryEscape(l.token))
		if st != 400 || !strings.Contains(page, l.want) {
			t.Errorf("%s link: %d, want 400 with %q: %.300s", l.name, st, l.want, page)
		}
		if st, _ := b.do("GET", "/console/api/me", nil, nil); st != 401 {
			t.Errorf("%s link signed the browser in", l.name)
		}
	}
	for _, s := range []string{"providers", "models", "groups", "accounts", "codes", "errors"} {
		if st, page, _ := admin.get("/console/admin?section=" + s); st != 200 || !strings.Contains(page, `aria-current="page">`+strings.ToUpper(s[:1])+s[1:]) {
			t.Errorf("admin section %s: %d", s, st)
		}
	}

	// Codes.
	codes := admin.createCodes("launch-promo", 4, "5")
	for _, bad := range []url.Values{
		{"batch": {""}, "count": {"1"}, "amount": {"5"}},
		{"batch": {"b"}, "count": {"0"}, "amount": {"5"}},
		{"batch": {"b"}, "count": {"1001"}, "amount": {"5"}},
		{"batch": {"b"}, "count": {"1"}, "amount": {"-5"}},
		{"batch": {"b"}, "count": {"1"}, "amount": {"5"}, "expires": {"2001-01-01"}},
	} {
		if st, _, _ := admin.form("/console/admin/codes", bad, true); st != 400 {
			t.Errorf("codes %v: %d, want 400", bad, st)
		}
	}
	var red struct{ Credited, Balance string }
	user.wantJSON("POST", "/console/api/redeem", map[string]string{"code": codes[0]}, 200, &red)
	if mustMoney(t, red.Credited) != units(5) || mustMoney(t, red.Balance) != units(5) || e.balance(user.account) != units(5) {
		t.Fatalf("redeem: %+v, balance %s", red, e.balance(user.account))
	}
	// Used: 409 however it is typed.
	for _, c := range []string{codes[0], strings.ToLower(codes[0]), " " + strings.ReplaceAll(codes[0], "-", " ") + " "} {
		if st, body := user.api("POST", "/console/api/redeem", map[string]string{"code": c}); st != 409 || errCode(body) != "code_already_used" {
			t.Errorf("second use as %q: %d %s", c, st, body)
		}
	}
	if st, body := admin.api("POST", "/console/api/redeem", map[string]string{"code": codes[0]}); st != 409 {
		t.Errorf("another account uses a used code: %d %s", st, body)
	}
	for _, c := range []string{"MG-AAAA-AAAA-AAAA-AAAA-AAAA", "", strings.Repeat("A", 65)} {
		if st, body := user.api("POST", "/console/api/redeem", map[string]string{"code": c}); st != 400 || errCode(body) != "invalid_code" {
			t.Errorf("code %q: %d %s", c, st, body)
		}
	}
	// Raced: 8 goroutines, one code, one winner.
	var wg sync.WaitGroup
	results := make([]int, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", e.g.URL+"/console/api/redeem", strings.NewReader(`{"code":"`+codes[1]+`"}`))
			req.Header.Set(console.CSRFHeader, user.csrf)
			req.Header.Set("Content-Type", "application/json")
			resp, err := user.nf.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			results[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	slices.Sort(results)
	if !slices.Equal(results, []int{200, 409, 409, 409, 409, 409, 409, 409}) {
		t.Fatalf("raced redemptions: %v, want one 200 and seven 409", results)
	}
	if got := e.balance(user.account); got != units(10) {
		t.Fatalf("balance after the race: %s, want 10", got)
	}
	// By form.
	if st, loc, _ := user.form("/console/redeem", url.Values{"code": {codes[2]}}, true); st != http.StatusSeeOther || loc != "/console/?done=redeemed" {
		t.Fatalf("redeem by form: %d to %q", st, loc)
	}
	if st, _, page := user.form("/console/redeem", url.Values{"code": {codes[2]}}, true); st != 400 && st != 409 || !strings.Contains(page, "already been used") {
		t.Fatalf("reuse by form: %d", st)
	}
	if got := e.balance(user.account); got != units(15) {
		t.Fatalf("balance after the form: %s, want 15", got)
	}
	if st, page, _ := admin.get("/console/admin?section=codes"); st != 200 || !strings.Contains(page, "launch-promo") {
		t.Fatalf("codes section: %d", st)
	} else if !regexp.MustCompile(`3\s*/\s*4`).MatchString(page) {
		t.Errorf("codes section does not show 3 / 4 redeemed")
	}
	if codeRE.MatchString(mustGet(t, admin, "/console/admin?section=codes")) {
		t.Errorf("codes are shown again after their creation")
	}

	// Disable: the account's key stops working; enable: it works again.
	key := user.createKey("work", "default")
	if _, err := e.chat(key.Key); err != nil {
		t.Fatal(err)
	}
	if st, loc, _ := admin.form("/console/admin/accounts/"+user.id+"/disable", nil, true); st != http.StatusSeeOther ||
		loc != "/console/admin?section=accounts&done=disabled" {
		t.Fatalf("disable: %d to %q", st, loc)
	}
	_, err := e.chat(key.Key)
	apiError(t, err, 401, "invalid_api_key")
	if !e.account(user.account).Disabled() {
		t.Fatal("account not disabled")
	}
	if st, _, _ := admin.form("/console/admin/accounts/acct_nope/disable", nil, true); st != 404 {
		t.Errorf("disable a missing account: %d", st)
	}
	if st, _, _ := admin.form("/console/admin/accounts/"+user.id+"/enable", nil, true); st != http.StatusSeeOther {
		t.Fatalf("enable: %d", st)
	}
	if _, err := e.chat(key.Key); err != nil {
		t.Fatalf("key after enabling: %v", err)
	}

	// Adjust with a reason: credited, and the reason is in the ledger.
	// (The chats' charges reach the ledger with their usage records.)
	eventually(t, "usage records", func() bool { return len(user.usage("?status=ok")) == 2 })
	before := e.balance(user.account)
	if st, loc, _ := admin.form("/console/admin/accounts/"+user.id+"/adjust", url.Values{"amount": {"+2.50"}, "reason": {"goodwill for ticket 42"}}, true); st != http.StatusSeeOther || loc != "/console/admin?section=accounts&done=adjusted" {
		t.Fatalf("adjust: %d to %q", st, loc)
	}
	if got := e.balance(user.account); got != before+units(2.5) {
		t.Fatalf("balance after adjusting: %s, want %s", got, before+units(2.5))
	}
	led, err := e.g.app.Store().ListLedger(context.Background(), user.id)
	if err != nil {
		t.Fatal(err)
	}
	last := led[len(led)-1]
	if last.Kind != store.KindAdjustment || last.Amount != units(2.5) || !strings.Contains(last.Note, "goodwill for ticket 42") ||
		!strings.Contains(last.Note, "admin") {
		t.Fatalf("ledger entry: %+v", last)
	}
	for _, bad := range []url.Values{
		{"amount": {"5"}, "reason": {""}},
		{"amount": {"5"}, "reason": {strings.Repeat("r", 201)}},
		{"amount": {"0"}, "reason": {"zero"}},
		{"amount": {"abc"}, "reason": {"nan"}},
		{"amount": {"-1000000"}, "reason": {"below zero"}},
	} {
		if st, _, _ := admin.form("/console/admin/accounts/"+user.id+"/adjust", bad, true); st != 400 {
			t.Errorf("adjust %v: %d, want 400", bad, st)
		}
	}
	if st, _, _ := admin.form("/console/admin/accounts/"+user.id+"/adjust", url.Values{"amount": {"5"}, "reason": {"no csrf"}}, false); st != 403 {
		t.Errorf("adjust without csrf: %d", st)
	}
	if got := e.balance(user.account); got != before+units(2.5) {
		t.Fatalf("refused adjustments moved the balance to %s", got)
	}
}

func mustGet(t *testing.T, b *conUser, path string) string {
	t.Helper()
	st, page, _ := b.get(path)
	if st != 200 {
		t.Fatalf("GET %s: %d", path, st)
	}
	return page
}
