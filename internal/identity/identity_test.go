package identity

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestNewValidation(t *testing.T) {
	ok := Config{Name: "sso", Type: TypeOIDC, Issuer: "https://idp.example.com", ClientID: "id", ClientSecret: "secret"}
	edit := func(f func(*Config)) Config { c := ok; f(&c); return c }
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // "" means valid
	}{
		{"oidc ok", ok, ""},
		{"google without issuer", Config{Name: "google", Type: TypeGoogle, ClientID: "id", ClientSecret: "s"}, ""},
		{"github ok", Config{Name: "github", Type: TypeGitHub, ClientID: "id", ClientSecret: "s"}, ""},
		{"github enterprise", Config{Name: "ghe", Type: TypeGitHub, ClientID: "id", ClientSecret: "s",
			AuthURL: "https://ghe.example.com/login/oauth/authorize", TokenURL: "https://ghe.example.com/login/oauth/access_token", APIURL: "https://ghe.example.com/api/v3"}, ""},
		{"loopback http issuer", edit(func(c *Config) { c.Issuer = "http://127.0.0.1:5556/dex" }), ""},
		{"missing name", edit(func(c *Config) { c.Name = "" }), "name"},
		{"name not URL-safe", edit(func(c *Config) { c.Name = "a/b" }), "name"},
		{"missing type", edit(func(c *Config) { c.Type = "" }), "type"},
		{"unknown type", edit(func(c *Config) { c.Type = "saml" }), `unknown type "saml"`},
		{"missing client id", edit(func(c *Config) { c.ClientID = "" }), "client_id"},
		{"missing client secret", edit(func(c *Config) { c.ClientSecret = "" }), "client_secret"},
		{"oidc without issuer", edit(func(c *Config) { c.Issuer = "" }), "issuer"},
		{"plain http issuer", edit(func(c *Config) { c.Issuer = "http://idp.example.com" }), "issuer"},
		{"relative issuer", edit(func(c *Config) { c.Issuer = "idp.example.com" }), "issuer"},
		{"oidc with token_url", edit(func(c *Config) { c.TokenURL = "https://x.example.com/t" }), "token_url"},
		{"github with issuer", Config{Name: "github", Type: TypeGitHub, ClientID: "id", ClientSecret: "s", Issuer: "https://x"}, "issuer"},
		{"github bad api_url", Config{Name: "github", Type: TypeGitHub, ClientID: "id", ClientSecret: "s", APIURL: "ftp://x"}, "api_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cfg, nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if p.Name() != tt.cfg.Name {
					t.Errorf("Name() = %q", p.Name())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
}

func TestGoogleIssuerPreset(t *testing.T) {
	p, err := New(Config{Name: "google", Type: TypeGoogle, ClientID: "id", ClientSecret: "s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	op := p.(*oidcProvider)
	if op.cfg.Issuer != GoogleIssuer {
		t.Errorf("issuer = %q, want %q", op.cfg.Issuer, GoogleIssuer)
	}
	if op.hc.Timeout != callTimeout {
		t.Errorf("client timeout = %v, want %v", op.hc.Timeout, callTimeout)
	}
}

func TestFlowExpired(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		created time.Time
		now     time.Time
		want    bool
	}{
		{"fresh", created, created.Add(time.Second), false},
		{"at the limit", created, created.Add(FlowTTL), false},
		{"past the limit", created, created.Add(FlowTTL + time.Second), true},
		{"zero creation time", time.Time{}, created, true},
		{"slight clock skew", created, created.Add(-30 * time.Second), false},
		{"from the future", created, created.Add(-2 * time.Minute), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Flow{Created: tt.created}).Expired(tt.now); got != tt.want {
				t.Errorf("Expired = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFlowRandomValues(t *testing.T) {
	seen := map[string]bool{}
	for range 20 {
		f := newFlow("sso", time.Now(), true)
		for _, v := range []string{f.State, f.Verifier, f.Nonce} {
			b, err := base64.RawURLEncoding.DecodeString(v)
			if err != nil || len(b) != 32 {
				t.Fatalf("%q: not 32 bytes of base64url (%v)", v, err)
			}
			if seen[v] {
				t.Fatalf("%q repeated", v)
			}
			seen[v] = true
		}
	}
}

func TestFlowJSONRoundTrip(t *testing.T) {
	f := newFlow("sso", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), true)
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var g Flow
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if g != f {
		t.Errorf("round trip: %+v, want %+v", g, f)
	}
}

func TestFlexibleBool(t *testing.T) {
	tests := []struct {
		in      string
		want    bool
		wantErr bool
	}{
		{`true`, true, false}, {`false`, false, false}, {`"true"`, true, false},
		{`"false"`, false, false}, {`null`, false, false}, {`"yes"`, false, true}, {`1`, false, true},
	}
	for _, tt := range tests {
		var b flexibleBool
		err := json.Unmarshal([]byte(tt.in), &b)
		if (err != nil) != tt.wantErr || bool(b) != tt.want {
			t.Errorf("%s: got %v, %v", tt.in, b, err)
		}
	}
}
