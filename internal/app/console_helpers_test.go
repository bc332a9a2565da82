package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
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

// startConsole starts a gateway withConsole, then mutate.
func startConsole(t *testing.T, mutate ...func(*config.Config)) *consoleEnv {
	t.Helper()
	gh := newGHFake(t)
	pay := stripefake.New(t, conStripeKey, conWebhookSecret)
	g := startGateway(t, append([]func(*config.Config){withConsole(t, gh, pay)}, mutate...)...)
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
	status, body, final := b.useLink(e.adminLink("admin", time.Now()))
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

// useLink opens an admin login link and presses its button, following
// the redirects; it returns what get does.
func (b *conUser) useLink(token string) (int, string, string) {
	b.t.Helper()
	status, page, final := b.get("/console/admin-link?token=" + url.QueryEscape(token))
	if status != http.StatusOK || !strings.Contains(page, `action="/console/admin-link"`) {
		return status, page, final
	}
	resp, err := b.c.PostForm(b.e.g.URL+"/console/admin-link", url.Values{"token": {token}})
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), resp.Request.URL.Path
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

// conRefusal is a row of /console/api/refusals.
type conRefusal struct {
	Minute   time.Time `json:"minute"`
	KeyID    string    `json:"key_id"`
	Endpoint string    `json:"endpoint"`
	Status   int       `json:"status"`
	Code     string    `json:"error_code"`
	Count    int64     `json:"count"`
}

func (b *conUser) refusals(query string) []conRefusal {
	b.t.Helper()
	var l struct {
		Data []conRefusal `json:"data"`
	}
	b.wantJSON("GET", "/console/api/refusals"+query, nil, http.StatusOK, &l)
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
