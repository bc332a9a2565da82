package config

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/identity"
)

// Defaults and bounds of the console section.
const (
	defaultSessionTTL = Duration(168 * time.Hour) // a week
	minSessionTTL     = Duration(5 * time.Minute)
	maxSessionTTL     = Duration(90 * 24 * time.Hour)
)

// Console configures the web console served under /console/ on the
// gateway's listener. It is off unless the file has a console: mapping
// (write `console: {}` for the defaults).
type Console struct {
	// PublicURL is the console's external base URL (like
	// https://gateway.example.com), used for the OAuth redirect URLs,
	// payment return URLs and Secure cookies; it defaults to the top-level
	// public_url (see publicurl.go for what applies without either).
	PublicURL string `yaml:"public_url"`
	// SessionTTL is how long a console sign-in lasts (default 168h; from
	// 5m to 2160h).
	SessionTTL Duration `yaml:"session_ttl"`
	// SignupGroups are the model groups console users may bind their keys
	// to (default [default]); each must be a configured group.
	SignupGroups []string `yaml:"signup_groups"`
	// OAuth lists the sign-in providers, shown in this order.
	OAuth []OAuthProvider `yaml:"oauth"`
	// Admins grant the admin role to the accounts of these sign-ins, each
	// written provider:subject: the console.oauth item's name and the
	// provider's stable user id (GitHub's numeric id, the OIDC sub), never
	// a login or an account name, which a stranger could sign up with.
	Admins []string `yaml:"admins"`
	// PublicModels lets anyone read the Models page and
	// /console/api/models without signing in, at the signup groups'
	// prices (default false: signed-in users only).
	PublicModels bool `yaml:"public_models"`
}

// OAuthProvider is one console sign-in provider (identity.Config in YAML).
type OAuthProvider struct {
	Name         string `yaml:"name"`
	Type         string `yaml:"type"` // github, google or oidc
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	Issuer       string `yaml:"issuer"`
	AuthURL      string `yaml:"auth_url"`
	TokenURL     string `yaml:"token_url"`
	APIURL       string `yaml:"api_url"`
}

// Identity returns the provider's identity.Config.
func (p OAuthProvider) Identity() identity.Config {
	return identity.Config{Name: p.Name, Type: p.Type, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
		Issuer: p.Issuer, AuthURL: p.AuthURL, TokenURL: p.TokenURL, APIURL: p.APIURL}
}

func (c *Config) applyConsoleDefaults() {
	s := c.Console
	if s == nil {
		return
	}
	defaultDuration(&s.SessionTTL, defaultSessionTTL, c.given("console.session_ttl"))
	if len(s.SignupGroups) == 0 && !c.given("console.signup_groups") {
		s.SignupGroups = []string{defaultGroup}
	}
}

// consoleSettings checks the console section.
func (v *validator) consoleSettings() {
	c := v.c
	s := c.Console
	if s == nil {
		return
	}
	at := func(key string) int { return c.line("console."+key, c.line("console", 0)) }
	if p := s.PublicURL; p != "" {
		u, err := url.Parse(p)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" ||
			(u.Path != "" && u.Path != "/") {
			v.errorf(at("public_url"), "console.public_url must be an http(s) URL like https://gateway.example.com, got %q", p)
		}
	}
	if s.SessionTTL < minSessionTTL || s.SessionTTL > maxSessionTTL {
		v.errorf(at("session_ttl"), "console.session_ttl must be from %s to %s, got %s", minSessionTTL, maxSessionTTL, s.SessionTTL)
	}
	if len(s.SignupGroups) == 0 {
		v.errorf(at("signup_groups"), "console.signup_groups must name at least one group")
	}
	seenGroup := map[string]bool{}
	for i, g := range s.SignupGroups {
		line := c.line(fmt.Sprintf("console.signup_groups.%d", i), at("signup_groups"))
		if _, ok := c.Groups[g]; !ok {
			v.errorf(line, "console.signup_groups: unknown group %q", g)
		} else if seenGroup[g] {
			v.errorf(line, "console.signup_groups: group %q is listed twice", g)
		}
		seenGroup[g] = true
	}
	// Without a config file the operator's link is the way in (ZeroConfig).
	if len(s.OAuth) == 0 && !c.Zero {
		v.warnf(at("oauth"), "console.oauth lists no sign-in provider, so users cannot sign in to the console; only an operator can, with a link from `modelgate admin login-link`")
	}
	names := map[string]bool{}
	for i, p := range s.OAuth {
		base := fmt.Sprintf("console.oauth.%d", i)
		item := c.line(base, at("oauth"))
		fieldAt := func(key string) int { return c.line(base+"."+key, item) }
		if err := p.Identity().Validate(); err != nil {
			v.errorf(item, "console.oauth[%d]: %s", i, strings.TrimPrefix(err.Error(), "identity: "))
		}
		if p.Name != "" {
			if names[p.Name] {
				v.errorf(fieldAt("name"), "console.oauth[%d]: name %q is used twice", i, p.Name)
			}
			names[p.Name] = true
		}
		if p.ClientSecret != "" && c.given(base+".client_secret") && !c.fromEnv(base+".client_secret") {
			v.warnf(fieldAt("client_secret"), "console.oauth[%d]: client_secret is written literally in the file; secrets should come from the environment (client_secret: ${VAR})", i)
		}
	}
	v.consoleAdmins(at)
}

// consoleAdmins checks console.admins: each entry is provider:subject, the
// stable id of one sign-in (github:4242 is the GitHub user whose numeric
// id is 4242). An entry that cannot be one is a warning: it matches
// nobody, and an account name or a login ("github:octocat") in its place
// would be a name anyone could sign up under.
func (v *validator) consoleAdmins(at func(string) int) {
	c := v.c
	types := map[string]string{}
	for _, p := range c.Console.OAuth {
		types[p.Name] = p.Type
	}
	for i, a := range c.Console.Admins {
		line := c.line(fmt.Sprintf("console.admins.%d", i), at("admins"))
		if strings.TrimSpace(a) == "" {
			v.errorf(line, "console.admins: an empty entry")
			continue
		}
		provider, subject, ok := strings.Cut(a, ":")
		typ, known := types[provider]
		switch {
		case !ok || !known:
			v.warnf(line, "console.admins: %q matches nobody: an entry is provider:subject, where provider names a console.oauth item (%s) and subject is its stable user id, like github:4242",
				a, strings.Join(slices.Sorted(maps.Keys(types)), ", "))
		case subject == "":
			v.warnf(line, "console.admins: %q has no subject: write the provider's stable user id after the colon, like %s:4242", a, provider)
		case typ == identity.TypeGitHub && strings.Trim(subject, "0123456789") != "":
			v.warnf(line, "console.admins: %q matches nobody: a GitHub subject is the user's numeric id (https://api.github.com/users/LOGIN shows it as \"id\"), not the login", a)
		}
	}
}
