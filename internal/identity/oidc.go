package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// oidcProvider signs in with OpenID Connect (types "google" and "oidc").
//
// Discovery is lazy and retried: New makes no network call; the first Begin
// or Finish fetches the discovery document (10 s timeout) and caches the
// result for the life of the process. A failure is not cached, so an IdP
// that is down when the gateway starts only fails sign-ins with that
// provider (ErrDiscovery) until it answers again.
type oidcProvider struct {
	cfg Config
	hc  *http.Client
	now func() time.Time

	mu       sync.Mutex
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
}

var _ Provider = (*oidcProvider)(nil)

func newOIDC(cfg Config, hc *http.Client) *oidcProvider {
	return &oidcProvider{cfg: cfg, hc: hc, now: time.Now}
}

func (p *oidcProvider) Name() string { return p.cfg.Name }

// discover returns the provider and its verifier, running discovery if it
// has not succeeded yet. Concurrent callers wait for one attempt.
func (p *oidcProvider) discover(ctx context.Context) (*oidc.Provider, *oidc.IDTokenVerifier, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.provider != nil {
		return p.provider, p.verifier, nil
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	// The client in the context is kept by go-oidc for the JWKS fetches,
	// whose cancellation it ignores; hc carries its own timeout for those.
	prov, err := oidc.NewProvider(oidc.ClientContext(ctx, p.hc), p.cfg.Issuer)
	if err != nil {
		return nil, nil, wrap(ErrDiscovery, err)
	}
	p.provider = prov
	p.verifier = prov.Verifier(&oidc.Config{ClientID: p.cfg.ClientID, Now: func() time.Time { return p.now() }})
	return p.provider, p.verifier, nil
}

func (p *oidcProvider) oauth2Config(prov *oidc.Provider, redirectURL string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     p.cfg.ClientID,
		ClientSecret: p.cfg.ClientSecret,
		Endpoint:     prov.Endpoint(),
		RedirectURL:  redirectURL,
		Scopes:       []string{oidc.ScopeOpenID, "email", "profile"},
	}
}

func (p *oidcProvider) Begin(ctx context.Context, redirectURL string) (Flow, string, error) {
	prov, _, err := p.discover(ctx)
	if err != nil {
		return Flow{}, "", err
	}
	f := newFlow(p.cfg.Name, p.now(), true)
	u := p.oauth2Config(prov, redirectURL).AuthCodeURL(f.State,
		oauth2.S256ChallengeOption(f.Verifier), oidc.Nonce(f.Nonce))
	return f, u, nil
}

func (p *oidcProvider) Finish(ctx context.Context, f Flow, redirectURL, code, state string) (Claims, error) {
	if err := checkFlow(f, p.cfg.Name, state, p.now()); err != nil {
		return Claims{}, err
	}
	prov, verifier, err := p.discover(ctx)
	if err != nil {
		return Claims{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	tok, err := p.oauth2Config(prov, redirectURL).Exchange(
		context.WithValue(ctx, oauth2.HTTPClient, p.hc), code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return Claims{}, wrap(ErrExchange, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Claims{}, wrap(ErrToken, errors.New("token response has no id_token"))
	}
	idt, err := verifier.Verify(ctx, raw)
	if err != nil {
		return Claims{}, wrap(ErrToken, err)
	}
	if !equalSecret(f.Nonce, idt.Nonce) {
		return Claims{}, ErrNonce
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return Claims{}, wrap(ErrToken, err)
		}
	}
	var c struct {
		Email             string       `json:"email"`
		EmailVerified     flexibleBool `json:"email_verified"`
		Name              string       `json:"name"`
		PreferredUsername string       `json:"preferred_username"`
	}
	if err := idt.Claims(&c); err != nil {
		return Claims{}, wrap(ErrToken, err)
	}
	if idt.Subject == "" {
		return Claims{}, wrap(ErrToken, errors.New("id token has no sub"))
	}
	out := Claims{
		Provider: p.cfg.Name,
		Subject:  idt.Subject,
		Login:    c.PreferredUsername,
		Name:     c.Name,
	}
	if c.Email != "" && bool(c.EmailVerified) {
		out.Email, out.EmailVerified = c.Email, true
	}
	return out, nil
}

// flexibleBool accepts true/false and "true"/"false" (some IdPs send
// email_verified as a string).
type flexibleBool bool

func (b *flexibleBool) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch t := v.(type) {
	case nil:
		*b = false
	case bool:
		*b = flexibleBool(t)
	case string:
		parsed, err := strconv.ParseBool(t)
		if err != nil {
			return fmt.Errorf("email_verified: %q is not a boolean", t)
		}
		*b = flexibleBool(parsed)
	default:
		return fmt.Errorf("email_verified: %s is not a boolean", data)
	}
	return nil
}
