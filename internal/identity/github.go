package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// GitHub's public endpoints; Config.AuthURL, TokenURL and APIURL override
// them (GitHub Enterprise Server: https://HOST/login/oauth/authorize,
// https://HOST/login/oauth/access_token, https://HOST/api/v3).
const (
	githubAuthURL  = "https://github.com/login/oauth/authorize"
	githubTokenURL = "https://github.com/login/oauth/access_token"
	githubAPIURL   = "https://api.github.com"
)

// githubProvider signs in with a GitHub OAuth app. GitHub is plain OAuth 2.0
// (no ID token, no nonce): who signed in comes from the REST API with the
// access token, which is then dropped.
type githubProvider struct {
	cfg    Config
	hc     *http.Client
	oauth  oauth2.Config // RedirectURL is set per call on a copy
	apiURL string
	now    func() time.Time
}

var _ Provider = (*githubProvider)(nil)

func newGitHub(cfg Config, hc *http.Client) *githubProvider {
	p := &githubProvider{cfg: cfg, now: time.Now}
	// GitHub answers the token endpoint form-encoded unless asked for JSON.
	c := *hc
	c.Transport = acceptJSON{next: hc.Transport}
	p.hc = &c
	p.oauth = oauth2.Config{
		ClientID:     cfg.ClientID,
		ClientSecret: cfg.ClientSecret,
		Endpoint: oauth2.Endpoint{
			AuthURL:   orDefault(cfg.AuthURL, githubAuthURL),
			TokenURL:  orDefault(cfg.TokenURL, githubTokenURL),
			AuthStyle: oauth2.AuthStyleInParams,
		},
		Scopes: []string{"read:user", "user:email"},
	}
	p.apiURL = strings.TrimRight(orDefault(cfg.APIURL, githubAPIURL), "/")
	return p
}

func (p *githubProvider) Name() string { return p.cfg.Name }

func (p *githubProvider) config(redirectURL string) *oauth2.Config {
	c := p.oauth
	c.RedirectURL = redirectURL
	return &c
}

// Begin makes no network call; ctx is unused.
func (p *githubProvider) Begin(_ context.Context, redirectURL string) (Flow, string, error) {
	f := newFlow(p.cfg.Name, p.now(), false)
	u := p.config(redirectURL).AuthCodeURL(f.State, oauth2.S256ChallengeOption(f.Verifier))
	return f, u, nil
}

func (p *githubProvider) Finish(ctx context.Context, f Flow, redirectURL, code, state string) (Claims, error) {
	if err := checkFlow(f, p.cfg.Name, state, p.now()); err != nil {
		return Claims{}, err
	}
	xctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	tok, err := p.config(redirectURL).Exchange(
		context.WithValue(xctx, oauth2.HTTPClient, p.hc), code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return Claims{}, wrap(ErrExchange, err)
	}

	var user struct {
		ID    int64   `json:"id"`
		Login string  `json:"login"`
		Name  *string `json:"name"`
		Email *string `json:"email"`
	}
	if err := p.get(ctx, tok.AccessToken, "/user", &user); err != nil {
		return Claims{}, err
	}
	if user.ID <= 0 {
		return Claims{}, wrap(ErrProfile, errors.New("github /user has no id"))
	}
	var emails []struct {
		Email    string `json:"email"`
		Primary  bool   `json:"primary"`
		Verified bool   `json:"verified"`
	}
	if err := p.get(ctx, tok.AccessToken, "/user/emails", &emails); err != nil {
		return Claims{}, err
	}

	out := Claims{
		Provider: p.cfg.Name,
		Subject:  strconv.FormatInt(user.ID, 10),
		Login:    user.Login,
	}
	if user.Name != nil {
		out.Name = *user.Name
	}
	// The profile's public email when GitHub says it is verified, else the
	// primary verified one; never an unverified address.
	if user.Email != nil && *user.Email != "" {
		for _, e := range emails {
			if e.Verified && strings.EqualFold(e.Email, *user.Email) {
				out.Email = e.Email
			}
		}
	}
	if out.Email == "" {
		for _, e := range emails {
			if e.Primary && e.Verified {
				out.Email = e.Email
			}
		}
	}
	out.EmailVerified = out.Email != ""
	return out, nil
}

// get fetches path from the API with the access token and decodes the JSON
// answer into v. Failures are ErrProfile.
func (p *githubProvider) get(ctx context.Context, token, path string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.apiURL+path, nil)
	if err != nil {
		return wrap(ErrProfile, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "modelgate")
	resp, err := p.hc.Do(req)
	if err != nil {
		return wrap(ErrProfile, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return wrap(ErrProfile, fmt.Errorf("github %s: %w", path, err))
	}
	if len(body) > maxBody {
		return wrap(ErrProfile, fmt.Errorf("github %s: response over %d bytes", path, maxBody))
	}
	if resp.StatusCode != http.StatusOK {
		return wrap(ErrProfile, fmt.Errorf("github %s: %s", path, resp.Status))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return wrap(ErrProfile, fmt.Errorf("github %s: %w", path, err))
	}
	return nil
}

// acceptJSON asks for JSON on requests that do not say what they accept (the
// token endpoint: oauth2 sets no Accept header).
type acceptJSON struct{ next http.RoundTripper }

func (t acceptJSON) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Accept") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Accept", "application/json")
	}
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
