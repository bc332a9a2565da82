// Package console is the web console's core: sign-in through the configured
// OAuth/OIDC providers, cookie sessions, and a small JSON API under
// /console/api/ with which a signed-in user sees their account and manages
// their own API keys. HTML pages come later; everything here is JSON.
//
// Security model: the sign-in flow (state, PKCE verifier, nonce) travels in
// an encrypted (AES-256-GCM), HttpOnly cookie scoped to /console/callback/; a session
// is a random 32-byte secret in an HttpOnly cookie of which only the SHA-256
// is stored; every state-changing call must echo the session's CSRF token in
// the X-CSRF-Token header (a custom header also forces a CORS preflight on
// cross-origin requests). Every response carries a strict CSP, no-store and
// nosniff.
package console

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/identity"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/server"
	"github.com/modelgate/modelgate/internal/store"
)

// Cookie names and paths.
const (
	FlowCookie    = "mg_flow"
	SessionCookie = "mg_session"
	flowPath      = "/console/callback/"
	sessionPath   = "/console/"
	// CSRFHeader must carry the session's CSRF token on every state-changing call.
	CSRFHeader = "X-CSRF-Token"
)

// Error codes the console answers with besides apierr's.
const (
	CodeNotSignedIn  = "not_signed_in"
	CodeCSRFFailed   = "csrf_failed"
	CodeSignInFailed = "sign_in_failed"
	CodeDisabled     = "account_disabled"
)

// maxBody bounds a JSON request body.
const maxBody = 64 << 10

// Console serves /console/. Store, Providers, Groups, SessionTTL and
// CookieKey are required; the rest have defaults.
type Console struct {
	Store     store.Store
	Providers map[string]identity.Provider // by name, as in /console/login/{name}
	// Groups are the model groups a console user may bind keys to
	// (console.signup_groups).
	Groups []string
	// Origin makes the console's absolute URLs (OAuth redirect URIs,
	// payment return URLs) and tells whether its cookies are Secure; never
	// from the request's Host. The zero Origin: the listener's address.
	Origin     server.Origin
	SessionTTL time.Duration
	// CookieKey is the secret the sign-in flow cookie's encryption key is
	// derived from; at least 32 bytes.
	CookieKey []byte
	// Admins are console.admins: provider:subject entries whose accounts'
	// sessions get store.RoleAdmin (see roles.go).
	Admins []string
	// Currency is billing.currency, shown next to the balance.
	Currency string
	// Pages renders the HTML pages (web.New()); required.
	Pages *web.Pages
	// Labels are the sign-in buttons in order: Name as in Providers, Label
	// shown ("GitHub").
	Labels []web.Provider

	// Payments takes top-ups; nil: top-ups are off (codes still work).
	Payments Payments
	// Methods are the payment methods offered ("card", "alipay").
	Methods []string
	// MinTopUp and MaxTopUp bound a top-up's amount.
	MinTopUp, MaxTopUp money.Micros
	// Bonus is the first-top-up bonus, shown on the overview (payments
	// applies it).
	Bonus store.BonusRule

	// OnCredit, when set, is told of every credit the console posts (a
	// redeemed code, an admin's adjustment), so the gateway's balance copy
	// is refreshed at once.
	OnCredit func(accountID string)

	// Operator answers the admin pages' questions about the configuration;
	// nil: those sections are empty.
	Operator Operator

	// Prices is the price list of the Models page and /console/api/models;
	// nil: the page lists no model.
	Prices PriceList
	// PublicModels (console.public_models) lets anyone read the Models
	// page and /console/api/models without signing in, at the signup
	// groups' prices.
	PublicModels bool
	// Playground runs the playground's chat turns as the user's keys;
	// nil: the playground is off.
	Playground Playground

	Now func() time.Time // nil: time.Now
	Log *slog.Logger     // nil: discard

}

func (c *Console) now() time.Time {
	if c.Now != nil {
		return c.Now().UTC()
	}
	return time.Now().UTC()
}

func (c *Console) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Routes mounts the console on mux under /console/.
func (c *Console) Routes(mux *http.ServeMux) {
	mux.Handle("/console/", c.Handler())
}

// Handler is the console's handler for everything under /console/.
func (c *Console) Handler() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /console/login/{name}", c.login)
	m.HandleFunc("GET /console/callback/{name}", c.callback)
	m.HandleFunc("POST /console/logout", c.logout)
	m.HandleFunc("GET /console/api/me", c.user(false, c.me))
	m.HandleFunc("GET /console/api/keys", c.user(false, c.listKeys))
	m.HandleFunc("POST /console/api/keys", c.user(true, c.enabled(c.createKey)))
	m.HandleFunc("DELETE /console/api/keys/{id}", c.user(true, c.revokeKey))
	m.HandleFunc("PATCH /console/api/keys/{id}", c.user(true, c.patchKey))
	m.HandleFunc("POST /console/api/topups", c.user(true, c.enabled(c.createTopUp)))
	m.HandleFunc("GET /console/api/topups", c.user(false, c.listTopUps))
	m.HandleFunc("POST /console/api/redeem", c.user(true, c.enabled(c.redeem)))
	m.HandleFunc("GET /console/api/usage", c.user(false, c.usage))
	m.HandleFunc("GET /console/api/usage.csv", c.user(false, c.usageCSV))
	m.HandleFunc("GET /console/api/refusals", c.user(false, c.refusals))
	m.HandleFunc("GET /console/api/stats", c.user(false, c.stats))
	m.HandleFunc("GET /console/api/models", c.models)
	m.HandleFunc("POST /console/api/playground", c.user(true, c.playgroundTurn))
	m.HandleFunc("POST /console/webhooks/stripe", c.webhook)
	c.pageRoutes(m)
	m.HandleFunc("/console/", c.notFoundPage)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		m.ServeHTTP(w, c.withLang(w, r))
	})
}

// base is the console's external origin, without a trailing slash.
func (c *Console) base(r *http.Request) string { return c.Origin.Base(r) }

func (c *Console) secure(r *http.Request) bool { return strings.HasPrefix(c.base(r), "https://") }

// --- errors and JSON ---

func fail(w http.ResponseWriter, e *apierr.Error) { apierr.Write(w, e) }

func notFound(msg string) *apierr.Error {
	return &apierr.Error{Status: http.StatusNotFound, Type: apierr.TypeInvalidRequest, Code: apierr.CodeNotFound, Message: msg}
}

func notSignedIn() *apierr.Error {
	return &apierr.Error{Status: http.StatusUnauthorized, Type: apierr.TypeInvalidRequest, Code: CodeNotSignedIn,
		Message: "Sign in to the console first."}
}

func csrfFailed() *apierr.Error {
	return &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypeInvalidRequest, Code: CodeCSRFFailed,
		Message: "Missing or wrong " + CSRFHeader + " header; reload the console and retry."}
}

// disabledMessage tells a disabled account's owner why an action was
// refused, in the JSON API and on the forms' error page alike.
const disabledMessage = "This account is disabled: it cannot be topped up or get new keys. Contact the operator of this gateway."

func accountDisabled() *apierr.Error {
	return &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypeInvalidRequest, Code: CodeDisabled,
		Message: disabledMessage}
}

// enabled refuses, for a disabled account, what would add money or keys to
// it (top-ups, redemptions, new keys) with 403 account_disabled; reading,
// revoking and signing out still work. Payments already started are still
// credited when their webhook arrives.
func (c *Console) enabled(h userHandler) userHandler {
	return func(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
		if a.Disabled() {
			fail(w, accountDisabled())
			return
		}
		h(w, r, s, a)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// --- random values ---

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// --- the sealed flow cookie ---

// flowKeyLabel derives the flow cookie's AES key from CookieKey, so the
// key is used for nothing else.
const flowKeyLabel = "modelgate console flow cookie AES-256-GCM key"

// flowAEAD is AES-256-GCM under a key derived from CookieKey
// (HMAC-SHA256 with flowKeyLabel).
func (c *Console) flowAEAD() (cipher.AEAD, error) { return c.derivedAEAD(flowKeyLabel) }

// derivedAEAD is AES-256-GCM under the key HMAC-SHA256(CookieKey, label):
// each use of CookieKey gets a key of its own.
func (c *Console) derivedAEAD(label string) (cipher.AEAD, error) {
	m := hmac.New(sha256.New, c.CookieKey)
	m.Write([]byte(label))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("console key %q: %w", label, err)
	}
	return cipher.NewGCM(block)
}

// seal encrypts and authenticates payload for the flow cookie:
// base64url(nonce || ciphertext), bound to the cookie's name. The browser
// carries the PKCE verifier and the nonce without being able to read or
// change them.
func (c *Console) seal(payload []byte) (string, error) {
	aead, err := c.flowAEAD()
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(payload)+aead.Overhead())
	_, _ = rand.Read(nonce) // never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, payload, []byte(FlowCookie))), nil
}

// open returns the payload of a value made by seal; any change to the
// value, or a value sealed under another key, fails.
func (c *Console) open(v string) ([]byte, error) {
	aead, err := c.flowAEAD()
	if err != nil {
		return nil, err
	}
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, errors.New("flow cookie: malformed")
	}
	n := aead.NonceSize()
	payload, err := aead.Open(nil, raw[:n], raw[n:], []byte(FlowCookie))
	if err != nil {
		return nil, errors.New("flow cookie: does not decrypt")
	}
	return payload, nil
}

// --- sessions ---

var (
	errNoSession = errors.New("console: no session cookie")
	errExpired   = errors.New("console: session expired")
)

// session returns the request's live session and its account.
func (c *Console) session(r *http.Request) (store.Session, store.Account, error) {
	ck, err := r.Cookie(SessionCookie)
	if err != nil || ck.Value == "" {
		return store.Session{}, store.Account{}, errNoSession
	}
	sum := sha256.Sum256([]byte(ck.Value))
	ctx := r.Context()
	s, err := c.Store.SessionByHash(ctx, sum[:])
	if err != nil {
		return store.Session{}, store.Account{}, err
	}
	if !c.now().Before(s.ExpiresAt) {
		return store.Session{}, store.Account{}, errExpired
	}
	a, err := c.Store.AccountByID(ctx, s.AccountID)
	if err != nil {
		return store.Session{}, store.Account{}, err
	}
	// The role follows the account and the configuration as they are
	// now, not as they were at sign-in: an operator who takes the role
	// away (console.admins, or the account's admin flag) takes it from
	// sessions already open too.
	if s.Role, err = c.roleOf(ctx, a); err != nil {
		return store.Session{}, store.Account{}, err
	}
	return s, a, nil
}

type userHandler func(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account)

// user wraps a handler that needs a signed-in user; csrf also requires the
// session's CSRF token in the X-CSRF-Token header.
func (c *Console) user(csrf bool, h userHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, a, err := c.session(r)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, errNoSession) && !errors.Is(err, errExpired) {
				c.log().ErrorContext(r.Context(), "console: session lookup", "err", err)
			}
			fail(w, notSignedIn())
			return
		}
		if csrf && !tokenEqual(r.Header.Get(CSRFHeader), s.CSRF) {
			fail(w, csrfFailed())
			return
		}
		h(w, r, s, a)
	}
}

func (c *Console) startSession(ctx context.Context, w http.ResponseWriter, r *http.Request, a store.Account) error {
	secret := randomToken()
	sum := sha256.Sum256([]byte(secret))
	now := c.now()
	role, err := c.roleOf(ctx, a)
	if err != nil {
		return err
	}
	s := store.Session{ID: newID("sess_"), Hash: sum[:], AccountID: a.ID, Role: role, CSRF: randomToken(),
		CreatedAt: now, ExpiresAt: now.Add(c.SessionTTL)}
	if err := c.Store.CreateSession(ctx, s); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: secret, Path: sessionPath, MaxAge: int(c.SessionTTL / time.Second),
		HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteLaxMode})
	return nil
}

// logout signs the session out: 204 for a script (X-CSRF-Token header),
// a redirect to the sign-in page for the form.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	s, _, err := c.session(r)
	if err != nil {
		fail(w, notSignedIn())
		return
	}
	if !c.csrfOK(r, s) {
		fail(w, csrfFailed())
		return
	}
	if err := c.Store.DeleteSession(r.Context(), s.ID); err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: sessionPath, MaxAge: -1,
		HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteLaxMode})
	if r.Header.Get(CSRFHeader) != "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(w, r, "/console/", http.StatusSeeOther)
}

// sessionPurgeEvery is how often PurgeSessions deletes expired sessions.
const sessionPurgeEvery = time.Hour

// PurgeSessions deletes expired sessions now and then every hour until ctx
// ends (an expired session is refused anyway; this keeps the table small).
func (c *Console) PurgeSessions(ctx context.Context) error {
	t := time.NewTicker(sessionPurgeEvery)
	defer t.Stop()
	for {
		if n, err := c.Store.PurgeSessions(ctx, c.now()); err != nil && ctx.Err() == nil {
			c.log().WarnContext(ctx, "console: purge sessions", "err", err)
		} else if n > 0 {
			c.log().InfoContext(ctx, "console: expired sessions purged", "count", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// credited tells OnCredit of a credit to accountID.
func (c *Console) credited(accountID string) {
	if c.OnCredit != nil {
		c.OnCredit(accountID)
	}
}

// notFoundPage answers a path the console does not have: the HTML error
// page to a browser asking for a page, the /v1 error body to anything else
// (scripts, /console/api/).
func (c *Console) notFoundPage(w http.ResponseWriter, r *http.Request) {
	page := (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		!strings.HasPrefix(r.URL.Path, "/console/api/") && strings.Contains(r.Header.Get("Accept"), "text/html")
	if !page {
		fail(w, notFound(fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)))
		return
	}
	if s, a, err := c.session(r); err == nil {
		c.errorPage(w, http.StatusNotFound, c.layout(r, s, a, "title.not_found", ""), "page.not_found", "page.not_found_msg")
		return
	}
	c.errorPage(w, http.StatusNotFound, c.bare(r), "page.not_found", "page.not_found_msg")
}
