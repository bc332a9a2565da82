// Package identity signs console users in with OAuth 2.0 (GitHub) and
// OpenID Connect (Google, any generic OIDC provider).
//
// The package has no HTTP handlers: values in, values out. The console keeps
// the Flow returned by Provider.Begin (in a signed, HttpOnly cookie),
// redirects the browser to the authorization URL, and on the callback hands
// the Flow back to Provider.Finish together with the code and state from the
// query string. Finish returns the verified Claims or one of the typed
// errors below.
//
// Every flow uses a random state (CSRF), PKCE with S256, and for OIDC a
// nonce bound into the ID token. All random values are 32 bytes from
// crypto/rand, base64url-encoded without padding.
package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// FlowTTL is how long a sign-in may take between Begin and Finish.
const FlowTTL = 10 * time.Minute

// callTimeout bounds every call to a provider (discovery, token, user API,
// key set).
const callTimeout = 10 * time.Second

// maxBody bounds every response body read by this package.
const maxBody = 1 << 20

// Provider types accepted in Config.Type.
const (
	TypeGitHub = "github"
	TypeGoogle = "google"
	TypeOIDC   = "oidc"
)

// GoogleIssuer is the OIDC issuer used for Type "google".
const GoogleIssuer = "https://accounts.google.com"

// Refusals. Finish wraps them, so test with errors.Is; the wrapped cause (if
// any) is for the log, not for the user.
var (
	// ErrState: the callback's state does not match the flow's, or the flow
	// belongs to another provider. No network call was made.
	ErrState = errors.New("identity: state mismatch")
	// ErrExpired: the flow is older than FlowTTL. No network call was made.
	ErrExpired = errors.New("identity: sign-in flow expired")
	// ErrExchange: the token endpoint refused the code (bad, replayed or
	// expired code, PKCE verifier mismatch, bad client credentials) or could
	// not be reached. The cause is wrapped (often *oauth2.RetrieveError).
	ErrExchange = errors.New("identity: code exchange failed")
	// ErrToken: the ID token is missing or invalid (signature, issuer,
	// audience, expiry, access-token hash).
	ErrToken = errors.New("identity: invalid ID token")
	// ErrNonce: the ID token's nonce is not the flow's nonce.
	ErrNonce = errors.New("identity: nonce mismatch")
	// ErrProfile: the provider's user API (GitHub /user, /user/emails)
	// refused or answered something unusable.
	ErrProfile = errors.New("identity: user profile unavailable")
	// ErrDiscovery: OIDC discovery failed (IdP down or misconfigured). It is
	// retried on the next Begin or Finish.
	ErrDiscovery = errors.New("identity: OIDC discovery failed")
)

// Provider is one configured sign-in provider.
type Provider interface {
	// Name is the configured name, used in /console/login/{name}.
	Name() string
	// Begin starts a sign-in: it returns the Flow the console must keep until
	// the callback and the provider URL to redirect the browser to.
	// redirectURL is the absolute URL of /console/callback/{name}.
	// ctx matters only for OIDC, whose discovery may happen here (lazily).
	Begin(ctx context.Context, redirectURL string) (Flow, string, error)
	// Finish ends a sign-in. redirectURL must be the one given to Begin;
	// code and state are the callback's query parameters.
	Finish(ctx context.Context, f Flow, redirectURL, code, state string) (Claims, error)
}

// Flow is what the console keeps between Begin and Finish, in a cookie that
// is signed (or sealed) by the console, HttpOnly, Secure, SameSite=Lax, Path
// /console/callback/, Max-Age FlowTTL, and deleted on the callback whatever
// the outcome. Verifier and Nonce are secrets: the cookie must not be
// readable by scripts and should be encrypted if the console can.
type Flow struct {
	State    string    `json:"state"`
	Verifier string    `json:"verifier"`        // PKCE code verifier
	Nonce    string    `json:"nonce,omitempty"` // OIDC only
	Provider string    `json:"provider"`        // Provider.Name()
	Created  time.Time `json:"created"`
}

// Expired reports whether the flow is older than FlowTTL at now (a flow
// without a creation time, or created in the future by more than a minute of
// clock skew, is expired too).
func (f Flow) Expired(now time.Time) bool {
	if f.Created.IsZero() || f.Created.After(now.Add(time.Minute)) {
		return true
	}
	return now.Sub(f.Created) > FlowTTL
}

// Claims is who signed in. (Provider, Subject) is the stable identity to key
// accounts on; Login, Email and Name are for display and may change.
type Claims struct {
	Provider string // the configured provider name
	Subject  string // OIDC sub; GitHub's numeric user id as a decimal string
	Login    string // GitHub login; OIDC preferred_username when present
	// Email is set only when the provider says it is verified, so
	// EmailVerified is true whenever Email is non-empty.
	Email         string
	Name          string
	EmailVerified bool
}

// Config configures one provider (console.oauth[] in the YAML).
type Config struct {
	Name         string // URL-safe: letters, digits, '-', '_'
	Type         string // "github", "google" or "oidc"
	ClientID     string
	ClientSecret string
	// Issuer is required for "oidc"; for "google" it defaults to
	// GoogleIssuer. Not used by "github".
	Issuer string
	// AuthURL, TokenURL and APIURL override GitHub's endpoints (GitHub
	// Enterprise, tests). Only for "github".
	AuthURL  string
	TokenURL string
	APIURL   string
}

// New validates cfg and returns its provider. hc is the HTTP client for all
// calls to this provider (nil: a default client); it is copied, and given a
// 10 s timeout if it has none. No network call is made: OIDC discovery is
// lazy (see oidcProvider).
func New(cfg Config, hc *http.Client) (Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var c http.Client
	if hc != nil {
		c = *hc
	}
	if c.Timeout == 0 {
		c.Timeout = callTimeout
	}
	switch cfg.Type {
	case TypeGitHub:
		return newGitHub(cfg, &c), nil
	default: // google, oidc
		if cfg.Issuer == "" {
			cfg.Issuer = GoogleIssuer
		}
		return newOIDC(cfg, &c), nil
	}
}

// Validate reports the first problem in cfg, naming the field.
func (cfg Config) Validate() error {
	if cfg.Name == "" {
		return errors.New("identity: oauth provider: name is required")
	}
	for _, r := range cfg.Name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("identity: oauth provider %q: name may hold only letters, digits, '-' and '_'", cfg.Name)
		}
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("identity: oauth provider %q: "+format, append([]any{cfg.Name}, a...)...)
	}
	switch cfg.Type {
	case TypeGitHub, TypeGoogle, TypeOIDC:
	case "":
		return fail("type is required (github, google or oidc)")
	default:
		return fail("unknown type %q (want github, google or oidc)", cfg.Type)
	}
	if cfg.ClientID == "" {
		return fail("client_id is required")
	}
	if cfg.ClientSecret == "" {
		return fail("client_secret is required")
	}
	if cfg.Type == TypeGitHub {
		if cfg.Issuer != "" {
			return fail("issuer is not used by type github")
		}
		for _, f := range []struct{ field, v string }{{"auth_url", cfg.AuthURL}, {"token_url", cfg.TokenURL}, {"api_url", cfg.APIURL}} {
			if f.v == "" {
				continue
			}
			if err := checkURL(f.v); err != nil {
				return fail("%s: %v", f.field, err)
			}
		}
		return nil
	}
	if cfg.AuthURL != "" || cfg.TokenURL != "" || cfg.APIURL != "" {
		return fail("auth_url, token_url and api_url are only for type github (OIDC endpoints come from discovery)")
	}
	if cfg.Type == TypeOIDC && cfg.Issuer == "" {
		return fail("issuer is required for type oidc")
	}
	if cfg.Issuer != "" {
		if err := checkURL(cfg.Issuer); err != nil {
			return fail("issuer: %v", err)
		}
	}
	return nil
}

// checkURL accepts absolute https URLs, and http ones only for loopback
// hosts (local IdPs, tests).
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", s)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if host == "localhost" {
			return nil
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return nil
		}
		return fmt.Errorf("%q must use https", s)
	default:
		return fmt.Errorf("%q must use https", s)
	}
}

// randomString returns 32 bytes from crypto/rand, base64url without padding.
func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (Go 1.24+: crypto/rand.Read panics rather than err)
	return base64.RawURLEncoding.EncodeToString(b)
}

// newFlow returns a fresh flow for provider name.
func newFlow(name string, now time.Time, nonce bool) Flow {
	f := Flow{State: randomString(), Verifier: randomString(), Provider: name, Created: now}
	if nonce {
		f.Nonce = randomString()
	}
	return f
}

// checkFlow runs the checks Finish makes before any network call.
func checkFlow(f Flow, name, state string, now time.Time) error {
	if f.Provider != name || !equalSecret(f.State, state) {
		return ErrState
	}
	if f.Expired(now) {
		return ErrExpired
	}
	if f.Verifier == "" {
		return ErrState
	}
	return nil
}

// equalSecret compares two secrets in constant time; empty never matches.
func equalSecret(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

func wrap(kind, cause error) error {
	return fmt.Errorf("%w: %w", kind, cause)
}
