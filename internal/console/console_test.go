package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/identity"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/store/sqlstore"
)

// clock is a settable clock for session expiry.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type env struct {
	t     *testing.T
	st    store.Store
	mock  *mockoidc.MockOIDC
	gh    *fakeGitHub
	srv   *httptest.Server
	clock *clock
	c     *Console
}

func startMock(t *testing.T) *mockoidc.MockOIDC {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Keypair.KeyID(); err != nil { // cache the kid before the server goroutine starts
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return m
}

// fakeGitHub is just enough of GitHub's OAuth and user API: the authorize
// endpoint redirects straight back with a code.
type fakeGitHub struct {
	*httptest.Server
	id    atomic.Int64
	login atomic.Value // string
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	g := &fakeGitHub{}
	g.id.Store(42)
	g.login.Store("octocat")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login/oauth/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code=good&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("POST /login/oauth/access_token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.PostFormValue("code") != "good" {
			_, _ = io.WriteString(w, `{"error":"bad_verification_code"}`)
			return
		}
		_, _ = io.WriteString(w, `{"access_token":"gho_good","token_type":"bearer"}`)
	})
	mux.HandleFunc("GET /api/v3/user", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": g.id.Load(), "login": g.login.Load()})
	})
	mux.HandleFunc("GET /api/v3/user/emails", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"email":"octo@example.com","primary":true,"verified":true}]`)
	})
	g.Server = httptest.NewServer(mux)
	t.Cleanup(g.Close)
	return g
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "mg.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	m := startMock(t)
	gh := newFakeGitHub(t)
	sso, err := identity.New(identity.Config{Name: "sso", Type: identity.TypeOIDC, Issuer: m.Issuer(), ClientID: m.ClientID, ClientSecret: m.ClientSecret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ghp, err := identity.New(identity.Config{Name: "github", Type: identity.TypeGitHub, ClientID: "c", ClientSecret: "s",
		AuthURL: gh.URL + "/login/oauth/authorize", TokenURL: gh.URL + "/login/oauth/access_token", APIURL: gh.URL + "/api/v3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now().UTC()}
	c := &Console{Store: st, Providers: map[string]identity.Provider{"sso": sso, "github": ghp},
		Groups: []string{"default", "pro"}, SessionTTL: time.Hour, CookieKey: bytes.Repeat([]byte{7}, 32),
		Admins: []string{"github:42"}, Currency: "USD", Now: clk.Now, Pages: pages(t),
		Labels: []web.Provider{{Name: "github", Label: "GitHub"}, {Name: "sso", Label: "SSO"}}}
	mux := http.NewServeMux()
	c.Routes(mux)
	mux.HandleFunc("/", http.NotFound)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &env{t: t, st: st, mock: m, gh: gh, srv: srv, clock: clk, c: c}
}

// browser is a client with its own cookie jar.
type browser struct {
	e    *env
	c    *http.Client
	csrf string
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, c: &http.Client{Jar: jar}}
}

// noFollow is the same browser, stopping at redirects.
func (b *browser) noFollow() *http.Client {
	return &http.Client{Jar: b.c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
}

func (r response) code() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(r.body, &e)
	return e.Error.Code
}

func (b *browser) do(method, path, body string, header map[string]string) response {
	b.e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, b.e.srv.URL+path, rd)
	if err != nil {
		b.e.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, data}
}

// withCSRF sends the browser's CSRF token.
func (b *browser) withCSRF() map[string]string { return map[string]string{CSRFHeader: b.csrf} }

// signIn runs the whole sign-in through the routes, following redirects,
// and reads the CSRF token from /me.
func (b *browser) signIn(provider string) meJSON {
	t := b.e.t
	t.Helper()
	r := b.do("GET", "/console/login/"+provider, "", nil)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `action="/console/logout"`) {
		t.Fatalf("sign-in ended with %d %s", r.status, r.body)
	}
	me := b.me()
	b.csrf = me.CSRFToken
	return me
}

func (b *browser) me() meJSON {
	b.e.t.Helper()
	r := b.do("GET", "/console/api/me", "", nil)
	if r.status != http.StatusOK {
		b.e.t.Fatalf("/me: %d %s", r.status, r.body)
	}
	var me meJSON
	r.json(b.e.t, &me)
	return me
}

func (b *browser) keys() []keyJSON {
	b.e.t.Helper()
	r := b.do("GET", "/console/api/keys", "", nil)
	if r.status != http.StatusOK {
		b.e.t.Fatalf("list keys: %d %s", r.status, r.body)
	}
	var l struct{ Data []keyJSON }
	r.json(b.e.t, &l)
	return l.Data
}

func TestSignInAndKeys(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b := e.browser()

	// Signed out.
	r := b.do("GET", "/console/", "", nil)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `href="/console/login/github"`) ||
		!strings.Contains(string(r.body), `href="/console/login/sso"`) {
		t.Fatalf("signed-out index: %d %s", r.status, r.body)
	}
	for _, h := range []struct{ k, v string }{
		{"Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'"}, {"Referrer-Policy", "same-origin"},
		{"X-Content-Type-Options", "nosniff"}, {"Cache-Control", "no-store"}} {
		if got := r.header.Get(h.k); got != h.v {
			t.Errorf("%s = %q, want %q", h.k, got, h.v)
		}
	}
	if r := b.do("GET", "/console/api/me", "", nil); r.status != http.StatusUnauthorized || r.code() != CodeNotSignedIn {
		t.Fatalf("/me signed out: %d %s", r.status, r.body)
	}
	if r := b.do("GET", "/console/login/nope", "", nil); r.status != http.StatusNotFound {
		t.Fatalf("unknown provider: %d %s", r.status, r.body)
	}

	// First sign-in creates sso:jane.doe; a second one (new browser) reuses it.
	me := b.signIn("sso")
	if me.Account != "sso:jane.doe" || me.Name != "jane.doe" || me.Role != store.RoleUser || me.Email != "jane.doe@example.com" ||
		me.Balance != "0.000000" || me.Currency != "USD" || me.CSRFToken == "" || strings.Join(me.Groups, ",") != "default,pro" {
		t.Fatalf("me = %+v", me)
	}
	b2 := e.browser()
	if me2 := b2.signIn("sso"); me2.Account != me.Account || me2.CSRFToken == me.CSRFToken {
		t.Fatalf("second sign-in: %+v, first %+v", me2, me)
	}
	accts, _ := e.st.ListAccounts(ctx)
	if len(accts) != 1 || accts[0].Name != me.Account {
		t.Fatalf("accounts after two sign-ins: %+v", accts)
	}
	acctID := accts[0].ID

	// Create a key; HTML in the name is kept and JSON-escaped.
	name := `<script>alert(1)</script>`
	body, _ := json.Marshal(map[string]string{"name": name, "group": "pro", "spend_cap": "2.5", "expires_at": e.clock.Now().Add(48 * time.Hour).Format(time.RFC3339)})
	r = b.do("POST", "/console/api/keys", string(body), b.withCSRF())
	if r.status != http.StatusCreated || bytes.Contains(r.body, []byte("<script>")) || !bytes.Contains(r.body, []byte(`\u003cscript\u003e`)) {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var created keyJSON
	r.json(t, &created)
	if !strings.HasPrefix(created.Key, apikey.Prefix) || created.Name != name || created.Group != "pro" || created.ExpiresAt == nil ||
		created.SpendCap == nil || *created.SpendCap != "2.500000" {
		t.Fatalf("created = %+v", created)
	}
	k, err := e.st.KeyByHash(ctx, apikey.Hash(created.Key))
	if err != nil || k.ID != created.ID || k.AccountID != acctID || k.Name != name || k.SpendCap != money.Micros(2_500_000) {
		t.Fatalf("stored key %+v, %v", k, err)
	}
	if ks := b2.keys(); len(ks) != 1 || ks[0].ID != created.ID || ks[0].Status != "active" || ks[0].Key != "" {
		t.Fatalf("list = %+v", ks)
	}

	// Another account (GitHub, an admin) sees none of them and cannot revoke them.
	o := e.browser()
	if me := o.signIn("github"); me.Account != "github:octocat" || me.Name != "octocat" || me.Role != store.RoleAdmin || me.Email != "octo@example.com" {
		t.Fatalf("github me = %+v", me)
	}
	if ks := o.keys(); len(ks) != 0 {
		t.Fatalf("other account lists %+v", ks)
	}
	if r := o.do("DELETE", "/console/api/keys/"+created.ID, "", o.withCSRF()); r.status != http.StatusNotFound {
		t.Fatalf("revoke another's key: %d %s", r.status, r.body)
	}

	// Revoke without or with a forged CSRF token: 403 and nothing changes.
	for _, h := range []map[string]string{nil, {CSRFHeader: ""}, {CSRFHeader: o.csrf}, {CSRFHeader: b.csrf + "x"}} {
		if r := b.do("DELETE", "/console/api/keys/"+created.ID, "", h); r.status != http.StatusForbidden || r.code() != CodeCSRFFailed {
			t.Fatalf("revoke with %v: %d %s", h, r.status, r.body)
		}
	}
	if k, _ := e.st.KeyByID(ctx, created.ID); k.Revoked() {
		t.Fatal("key revoked without a CSRF token")
	}
	if r := b.do("DELETE", "/console/api/keys/"+created.ID, "", b.withCSRF()); r.status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	if ks := b.keys(); len(ks) != 1 || ks[0].Status != "revoked" {
		t.Fatalf("after revoke: %+v", ks)
	}
	if r := b.do("DELETE", "/console/api/keys/key_missing", "", b.withCSRF()); r.status != http.StatusNotFound {
		t.Fatalf("revoke missing: %d %s", r.status, r.body)
	}

	// Logout needs the token too, then the session is gone.
	if r := b.do("POST", "/console/logout", "", nil); r.status != http.StatusForbidden {
		t.Fatalf("logout without CSRF: %d", r.status)
	}
	if r := b.do("POST", "/console/logout", "", b.withCSRF()); r.status != http.StatusNoContent {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	if r := b.do("GET", "/console/api/me", "", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("/me after logout: %d", r.status)
	}
	if r := b2.do("GET", "/console/api/me", "", nil); r.status != http.StatusOK {
		t.Fatalf("other session after logout: %d", r.status)
	}

	// Sessions expire.
	e.clock.Add(time.Hour)
	if r := b2.do("GET", "/console/api/me", "", nil); r.status != http.StatusUnauthorized || r.code() != CodeNotSignedIn {
		t.Fatalf("expired session: %d %s", r.status, r.body)
	}
}

func TestCreateKeyRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b := e.browser()
	me := b.signIn("sso")
	future := e.clock.Now().Add(time.Hour).Format(time.RFC3339)
	tests := []struct {
		name   string
		body   string
		csrf   bool
		status int
		code   string
	}{
		{"no csrf", `{"name":"a","group":"default"}`, false, 403, CodeCSRFFailed},
		{"10 KB name", `{"name":"` + strings.Repeat("x", 10<<10) + `","group":"default"}`, true, 400, "invalid_request_error"},
		{"101 characters", `{"name":"` + strings.Repeat("é", 101) + `","group":"default"}`, true, 400, "invalid_request_error"},
		{"unknown group", `{"name":"a","group":"gold"}`, true, 400, "invalid_request_error"},
		{"no group", `{"name":"a"}`, true, 400, "invalid_request_error"},
		{"negative cap", `{"name":"a","group":"default","spend_cap":"-1"}`, true, 400, "invalid_request_error"},
		{"cap with 7 decimals", `{"name":"a","group":"default","spend_cap":"0.0000001"}`, true, 400, "invalid_request_error"},
		{"cap as number", `{"name":"a","group":"default","spend_cap":5}`, true, 400, "invalid_request_error"},
		{"past expiry", `{"name":"a","group":"default","expires_at":"2001-01-01T00:00:00Z"}`, true, 400, "invalid_request_error"},
		{"bad expiry", `{"name":"a","group":"default","expires_at":"tomorrow"}`, true, 400, "invalid_request_error"},
		{"unknown member", `{"name":"a","group":"default","account":"acct_x"}`, true, 400, "invalid_request_error"},
		{"not json", `name=a`, true, 400, "invalid_request_error"},
		{"too large", `{"name":"` + strings.Repeat("x", maxBody) + `"}`, true, 413, "request_too_large"},
		{"100 characters", `{"name":"` + strings.Repeat("é", 100) + `","group":"default","spend_cap":"0","expires_at":"` + future + `"}`, true, 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h map[string]string
			if tt.csrf {
				h = b.withCSRF()
			}
			r := b.do("POST", "/console/api/keys", tt.body, h)
			if r.status != tt.status || r.code() != tt.code {
				t.Fatalf("%d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
		})
	}
	ks, _ := e.st.ListKeys(ctx)
	acct, err := e.st.AccountByName(ctx, me.Account)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 1 || ks[0].AccountID != acct.ID || ks[0].SpendCap != 0 {
		t.Fatalf("keys stored: %+v", ks)
	}
}

// The sign-in refusals: each is a 400 sign_in_failed and leaves no session.
func TestCallbackRefused(t *testing.T) {
	tests := []struct {
		name   string
		cookie func(v string) string         // the flow cookie the callback gets; nil: none
		query  func(q url.Values) url.Values // the callback's query
	}{
		{name: "no cookie"},
		{name: "forged signature", cookie: func(v string) string { return v[:len(v)-2] + "AA" }},
		{name: "edited flow", cookie: func(v string) string {
			raw, _ := base64.RawURLEncoding.DecodeString(v)
			raw[len(raw)/2] ^= 1 // one bit of the ciphertext
			return base64.RawURLEncoding.EncodeToString(raw)
		}},
		{name: "sealed under another key", cookie: func(v string) string {
			other := &Console{CookieKey: bytes.Repeat([]byte{8}, 32)}
			sealed, _ := other.seal([]byte(`{"state":"x"}`))
			return sealed
		}},
		{name: "garbage cookie", cookie: func(string) string { return "not-a-cookie" }},
		{name: "wrong state", cookie: func(v string) string { return v }, query: func(q url.Values) url.Values { q.Set("state", "wrong"); return q }},
		{name: "bad code", cookie: func(v string) string { return v }, query: func(q url.Values) url.Values { q.Set("code", "wrong"); return q }},
		{name: "provider error", cookie: func(v string) string { return v }, query: func(q url.Values) url.Values {
			return url.Values{"error": {"access_denied"}, "state": q["state"]}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			b := e.browser()
			nf := b.noFollow()
			// Begin: the flow cookie and the provider URL.
			resp, err := nf.Get(e.srv.URL + "/console/login/sso")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			var flow *http.Cookie
			for _, c := range resp.Cookies() {
				if c.Name == FlowCookie {
					flow = c
				}
			}
			if resp.StatusCode != http.StatusFound || flow == nil || !flow.HttpOnly || flow.Secure || flow.Path != "/console/callback/" ||
				flow.SameSite != http.SameSiteLaxMode || flow.MaxAge != int(identity.FlowTTL/time.Second) {
				t.Fatalf("login: %d, flow cookie %+v", resp.StatusCode, flow)
			}
			// The IdP answers with code and state.
			resp, err = nf.Get(resp.Header.Get("Location"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			cb, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || cb.Path != "/console/callback/sso" {
				t.Fatalf("IdP redirect %q: %v", resp.Header.Get("Location"), err)
			}
			q := cb.Query()
			if tt.query != nil {
				q = tt.query(q)
			}
			req, _ := http.NewRequest("GET", e.srv.URL+"/console/callback/sso?"+q.Encode(), nil)
			if tt.cookie != nil {
				req.AddCookie(&http.Cookie{Name: FlowCookie, Value: tt.cookie(flow.Value)})
			}
			resp, err = (&http.Client{}).Do(req) // no jar: only the cookie set above
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			r := response{resp.StatusCode, resp.Header, body}
			if r.status != http.StatusBadRequest || r.code() != CodeSignInFailed || strings.Contains(string(body), "state") {
				t.Fatalf("callback: %d %s", r.status, body)
			}
			for _, c := range resp.Cookies() {
				if c.Name == SessionCookie {
					t.Errorf("a session cookie was set: %+v", c)
				}
				if c.Name == FlowCookie && c.MaxAge >= 0 {
					t.Errorf("flow cookie not deleted: %+v", c)
				}
			}
			if accts, _ := e.st.ListAccounts(context.Background()); len(accts) != 0 {
				t.Errorf("accounts created: %+v", accts)
			}
		})
	}
}

// A taken account name gets a suffix; the session cookie is what the doc says.
func TestSignUpNameTaken(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, n := range []string{"sso:jane.doe", "sso:jane.doe-2"} {
		if err := e.st.CreateAccount(ctx, store.Account{ID: newID("acct_"), Name: n, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	b := e.browser()
	if me := b.signIn("sso"); me.Account != "sso:jane.doe-3" {
		t.Fatalf("name = %q", me.Name)
	}
	u, _ := url.Parse(e.srv.URL + "/console/")
	var sess *http.Cookie
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == SessionCookie {
			sess = c
		}
	}
	if sess == nil {
		t.Fatal("no session cookie")
	}
	// Only the hash is stored.
	sum := sha256.Sum256([]byte(sess.Value))
	s, err := e.st.SessionByHash(ctx, sum[:])
	if err != nil || s.CSRF == "" || bytes.Contains(s.Hash, []byte(sess.Value)) {
		t.Fatalf("session %+v, %v", s, err)
	}
	if raw, _ := base64.RawURLEncoding.DecodeString(sess.Value); len(raw) != 32 {
		t.Fatalf("session secret is %d bytes", len(raw))
	}
}

// pages parses the console's templates once per test.
func pages(t *testing.T) *web.Pages {
	t.Helper()
	p, err := web.New()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The flow cookie is encrypted: the browser cannot read the state, the
// PKCE verifier or the nonce from it (the signed cookie of old carried
// them as base64 JSON), and the sign-in still completes.
func TestFlowCookieSealed(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	resp, err := b.noFollow().Get(e.srv.URL + "/console/login/sso")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	auth, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	state := auth.Query().Get("state")
	var flow string
	for _, c := range resp.Cookies() {
		if c.Name == FlowCookie {
			flow = c.Value
		}
	}
	if state == "" || flow == "" {
		t.Fatalf("state %q, flow cookie %q", state, flow)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(strings.ReplaceAll(flow, ".", ""))
	for _, leak := range []string{state, `"verifier"`, `"state"`, `"nonce"`, "sso"} {
		if strings.Contains(flow, leak) || bytes.Contains(raw, []byte(leak)) {
			t.Errorf("the flow cookie shows %q", leak)
		}
	}
	// The same flow, carried by the browser, finishes the sign-in.
	resp, err = b.c.Get(auth.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if me := b.me(); me.Account != "sso:jane.doe" {
		t.Fatalf("after the sealed flow: %+v", me)
	}
}
