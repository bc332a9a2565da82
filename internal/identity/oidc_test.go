package identity

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
)

const testRedirect = "http://127.0.0.1:8080/console/callback/sso"

// startMock starts a mockoidc server (key nil: the package's default key)
// with the given middleware and stops it at the end of the test.
func startMock(t *testing.T, key *rsa.PrivateKey, mws ...func(*mockoidc.MockOIDC) func(http.Handler) http.Handler) *mockoidc.MockOIDC {
	t.Helper()
	m, err := mockoidc.NewServer(key)
	if err != nil {
		t.Fatal(err)
	}
	for _, mw := range mws {
		if err := m.AddMiddleware(mw(m)); err != nil {
			t.Fatal(err)
		}
	}
	// KeyID caches the kid on first use; compute it before the server
	// goroutine exists so later signing only reads it.
	if _, err := m.Keypair.KeyID(); err != nil {
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

// recorder counts the provider's outgoing requests and can replace the
// id_token in token responses.
type recorder struct {
	calls atomic.Int64
	mu    sync.Mutex
	forge func() string // non-nil: the id_token to put in the next token responses
}

func (r *recorder) setForge(f func() string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forge = f
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.calls.Add(1)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.URL.Path != mockoidc.TokenEndpoint || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	r.mu.Lock()
	forge := r.forge
	r.mu.Unlock()
	if forge == nil {
		return resp, nil
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	body["id_token"] = forge()
	b, _ := json.Marshal(body)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Del("Content-Length")
	return resp, nil
}

func newMockProvider(t *testing.T, m *mockoidc.MockOIDC, clientID string) (*oidcProvider, *recorder) {
	t.Helper()
	rec := &recorder{}
	p, err := New(Config{Name: "sso", Type: TypeOIDC, Issuer: m.Issuer(), ClientID: clientID, ClientSecret: m.ClientSecret},
		&http.Client{Transport: rec})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*oidcProvider), rec
}

// authorize plays the browser: it fetches the authorization URL without
// following the redirect and returns the callback's code and state.
func authorize(t *testing.T, authURL string) (code, state string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("authorize: %s: %s", resp.Status, b)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != testRedirect {
		t.Fatalf("redirected to %s, want %s", got, testRedirect)
	}
	return loc.Query().Get("code"), loc.Query().Get("state")
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func TestOIDCSignIn(t *testing.T) {
	m := startMock(t, nil)
	p, _ := newMockProvider(t, m, m.ClientID)
	ctx := context.Background()

	f, authURL, err := p.Begin(ctx, testRedirect)
	if err != nil {
		t.Fatal(err)
	}
	q := mustQuery(t, authURL)
	for k, want := range map[string]string{
		"state":                 f.State,
		"nonce":                 f.Nonce,
		"code_challenge":        s256(f.Verifier),
		"code_challenge_method": "S256",
		"client_id":             m.ClientID,
		"redirect_uri":          testRedirect,
		"response_type":         "code",
		"scope":                 "openid email profile",
	} {
		if got := q.Get(k); got != want {
			t.Errorf("authorization URL %s = %q, want %q", k, got, want)
		}
	}
	if f.Provider != "sso" || f.Created.IsZero() || f.Expired(f.Created.Add(time.Minute)) {
		t.Errorf("flow = %+v", f)
	}

	code, state := authorize(t, authURL)
	got, err := p.Finish(ctx, f, testRedirect, code, state)
	if err != nil {
		t.Fatal(err)
	}
	want := Claims{Provider: "sso", Subject: "1234567890", Login: "jane.doe", Email: "jane.doe@example.com", EmailVerified: true}
	if got != want {
		t.Errorf("claims = %+v, want %+v", got, want)
	}

	// The same code a second time is refused by the IdP.
	if _, err := p.Finish(ctx, f, testRedirect, code, state); !errors.Is(err, ErrExchange) {
		t.Errorf("replayed code: err = %v, want ErrExchange", err)
	}
}

func TestOIDCUnverifiedEmailDropped(t *testing.T) {
	m := startMock(t, nil)
	m.QueueUser(&mockoidc.MockUser{Subject: "u-2", Email: "x@example.com", EmailVerified: false})
	p, _ := newMockProvider(t, m, m.ClientID)
	f, authURL, err := p.Begin(context.Background(), testRedirect)
	if err != nil {
		t.Fatal(err)
	}
	code, state := authorize(t, authURL)
	got, err := p.Finish(context.Background(), f, testRedirect, code, state)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Claims{Provider: "sso", Subject: "u-2"}); got != want {
		t.Errorf("claims = %+v, want %+v", got, want)
	}
}

// Refusals that must happen before any network call.
func TestOIDCRefusedBeforeNetwork(t *testing.T) {
	m := startMock(t, nil)
	p, rec := newMockProvider(t, m, m.ClientID)
	f, authURL, err := p.Begin(context.Background(), testRedirect)
	if err != nil {
		t.Fatal(err)
	}
	code, state := authorize(t, authURL)

	other := f
	other.Provider = "google"
	old := f
	old.Created = f.Created.Add(-FlowTTL - time.Second)
	tests := []struct {
		name  string
		flow  Flow
		state string
		want  error
	}{
		{"wrong state", f, state + "x", ErrState},
		{"empty state", f, "", ErrState},
		{"empty flow", Flow{Provider: "sso"}, "", ErrState},
		{"flow of another provider", other, state, ErrState},
		{"expired flow", old, state, ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := rec.calls.Load()
			_, err := p.Finish(context.Background(), tt.flow, testRedirect, code, tt.state)
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if n := rec.calls.Load() - before; n != 0 {
				t.Errorf("%d network calls, want 0", n)
			}
		})
	}
	// The code is still good: nothing above reached the IdP.
	if _, err := p.Finish(context.Background(), f, testRedirect, code, state); err != nil {
		t.Errorf("valid finish after refusals: %v", err)
	}
}

func TestOIDCRefusals(t *testing.T) {
	foreignKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	a := startMock(t, nil)
	b := startMock(t, foreignKey)

	// mint signs an ID token like the IdP would, with the given issuer
	// config and key.
	mint := func(cfg *mockoidc.Config, kp *mockoidc.Keypair, nonce string, now time.Time) string {
		s := &mockoidc.Session{SessionID: "forged", Scopes: []string{"openid", "email"}, OIDCNonce: nonce, User: mockoidc.DefaultUser()}
		tok, err := s.IDToken(cfg, kp, now)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	with := func(cfg *mockoidc.Config, clientID string) *mockoidc.Config {
		c := *cfg
		c.ClientID = clientID
		return &c
	}
	aCfg, bCfg := a.Config(), with(b.Config(), a.ClientID)

	tests := []struct {
		name  string
		edit  func(*Flow)
		forge func(f Flow) string
		want  error // nil: success
	}{
		{name: "control: genuine token minted here", forge: func(f Flow) string { return mint(aCfg, a.Keypair, f.Nonce, a.Now()) }},
		{name: "wrong nonce in the flow", edit: func(f *Flow) { f.Nonce = randomString() }, want: ErrNonce},
		{name: "wrong nonce in the token", forge: func(f Flow) string { return mint(aCfg, a.Keypair, "other", a.Now()) }, want: ErrNonce},
		{name: "wrong PKCE verifier", edit: func(f *Flow) { f.Verifier = randomString() }, want: ErrExchange},
		{name: "foreign issuer's token", forge: func(f Flow) string { return mint(bCfg, b.Keypair, f.Nonce, b.Now()) }, want: ErrToken},
		{name: "foreign issuer, our key", forge: func(f Flow) string { return mint(bCfg, a.Keypair, f.Nonce, a.Now()) }, want: ErrToken},
		{name: "our issuer, foreign key", forge: func(f Flow) string { return mint(aCfg, b.Keypair, f.Nonce, a.Now()) }, want: ErrToken},
		{name: "other audience", forge: func(f Flow) string { return mint(with(aCfg, "someone-else"), a.Keypair, f.Nonce, a.Now()) }, want: ErrToken},
		{name: "expired token", forge: func(f Flow) string { return mint(aCfg, a.Keypair, f.Nonce, a.Now().Add(-time.Hour)) }, want: ErrToken},
		{name: "garbage token", forge: func(Flow) string { return "not.a.jwt" }, want: ErrToken},
		{name: "no id_token", forge: func(Flow) string { return "" }, want: ErrToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, rec := newMockProvider(t, a, a.ClientID)
			f, authURL, err := p.Begin(context.Background(), testRedirect)
			if err != nil {
				t.Fatal(err)
			}
			code, state := authorize(t, authURL)
			if tt.edit != nil {
				tt.edit(&f)
			}
			if tt.forge != nil {
				ff := f
				rec.setForge(func() string { return tt.forge(ff) })
			}
			got, err := p.Finish(context.Background(), f, testRedirect, code, state)
			if tt.want == nil {
				if err != nil || got.Subject != "1234567890" {
					t.Fatalf("got %+v, %v; want success", got, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if got != (Claims{}) {
				t.Errorf("claims on refusal = %+v", got)
			}
		})
	}
}

// A provider configured with another client id against the same IdP: the
// IdP accepts it (the middleware maps it onto its own client) but issues
// tokens for its own client id, so the audience check refuses them.
func TestOIDCWrongAudience(t *testing.T) {
	const alias = "other-client"
	m := startMock(t, nil, func(m *mockoidc.MockOIDC) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if err := r.ParseForm(); err == nil && r.Form.Get("client_id") == alias {
					r.Form.Set("client_id", m.ClientID)
				}
				next.ServeHTTP(w, r)
			})
		}
	})
	p, _ := newMockProvider(t, m, alias)
	f, authURL, err := p.Begin(context.Background(), testRedirect)
	if err != nil {
		t.Fatal(err)
	}
	code, state := authorize(t, authURL)
	_, err = p.Finish(context.Background(), f, testRedirect, code, state)
	if !errors.Is(err, ErrToken) || !strings.Contains(err.Error(), "audience") {
		t.Fatalf("err = %v, want ErrToken about the audience", err)
	}
}

// Discovery is lazy (New makes no call) and retried after a failure.
func TestOIDCLazyDiscovery(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	m := startMock(t, nil, func(*mockoidc.MockOIDC) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if down.Load() {
					http.Error(w, "down", http.StatusServiceUnavailable)
					return
				}
				next.ServeHTTP(w, r)
			})
		}
	})
	p, rec := newMockProvider(t, m, m.ClientID)
	if n := rec.calls.Load(); n != 0 {
		t.Fatalf("New made %d calls, want 0", n)
	}
	if _, _, err := p.Begin(context.Background(), testRedirect); !errors.Is(err, ErrDiscovery) {
		t.Fatalf("Begin with the IdP down: err = %v, want ErrDiscovery", err)
	}
	down.Store(false)
	f, authURL, err := p.Begin(context.Background(), testRedirect)
	if err != nil {
		t.Fatalf("Begin after the IdP came back: %v", err)
	}
	code, state := authorize(t, authURL)
	if _, err := p.Finish(context.Background(), f, testRedirect, code, state); err != nil {
		t.Fatal(err)
	}
}

func mustQuery(t *testing.T, s string) url.Values {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}
