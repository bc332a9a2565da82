package config

import (
	"testing"
)

func TestPublicURL(t *testing.T) {
	base := "providers:\n  - {name: demo, type: demo}\n" // lines 1-2
	gh := "  oauth:\n    - {name: github, type: github, client_id: id, client_secret: \"${GH_SECRET}\"}\n"
	stripe := "payments:\n  stripe: {secret_key: \"${GH_SECRET}\", webhook_secret: \"${GH_SECRET}\"}\n"
	tests := []struct {
		name, yaml      string
		want            []want
		console, images string // the public URLs after defaults, checked when no error is wanted
	}{
		{name: "loopback listener without public_url", yaml: base + "console:\n" + gh},
		{name: "localhost listener", yaml: base + "listen: localhost:8080\nconsole:\n" + gh},
		{name: "every interface without public_url", yaml: base + "listen: 0.0.0.0:8080\nconsole:\n" + gh,
			want: []want{{4, false, "console: listen 0.0.0.0:8080 is not a loopback address, so set public_url"}}},
		{name: "no host without public_url", yaml: base + "listen: :8080\nconsole:\n" + gh,
			want: []want{{4, false, "set public_url"}}},
		{name: "payments alone on a public listener", yaml: base + "listen: 10.0.0.5:8080\n" + stripe,
			want: []want{{4, true, "no console: section"}, {4, false, "payments: listen 10.0.0.5:8080 is not a loopback address, so set public_url"}}},
		{name: "images alone need no public_url", yaml: base + "listen: :8080\n"},
		{name: "top-level public_url is every section's default", yaml: base + "listen: :8080\npublic_url: https://gw.example.com\nconsole:\n" + gh,
			console: "https://gw.example.com", images: "https://gw.example.com"},
		{name: "section keys still win", yaml: base + "listen: :8080\npublic_url: https://gw.example.com\nimages: {public_url: https://cdn.example.com/gw}\nconsole:\n  public_url: https://console.example.com\n" + gh,
			console: "https://console.example.com", images: "https://cdn.example.com/gw"},
		{name: "console.public_url alone is enough", yaml: base + "listen: :8080\nconsole:\n  public_url: https://gw.example.com\n" + gh,
			console: "https://gw.example.com"},
		{name: "public_url with a path", yaml: base + "public_url: https://gw.example.com/gw\n",
			want: []want{{3, false, "public_url must be an http(s) URL like https://gateway.example.com (no path)"}}},
		{name: "public_url without a scheme", yaml: base + "public_url: gw.example.com\nconsole:\n" + gh,
			want: []want{{3, false, "public_url must be an http(s) URL"}}},
		{name: "trusted proxies", yaml: base + "trusted_proxies: [127.0.0.1, 10.0.0.0/8, \"::1\"]\n"},
		{name: "bad trusted proxy", yaml: base + "trusted_proxies:\n  - 10.0.0.0/8\n  - proxy.internal\n",
			want: []want{{5, false, `trusted_proxies: "proxy.internal" is not an IP address or CIDR prefix`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ps, err := parse([]byte(tt.yaml), envOf(map[string]string{"GH_SECRET": "s3cret"}))
			if err != nil {
				t.Fatal(err)
			}
			checkProblems(t, ps, tt.want)
			if HasErrors(ps) {
				return
			}
			if c.Console != nil && c.Console.PublicURL != tt.console {
				t.Errorf("console.public_url = %q, want %q", c.Console.PublicURL, tt.console)
			}
			if c.Images.PublicURL != tt.images {
				t.Errorf("images.public_url = %q, want %q", c.Images.PublicURL, tt.images)
			}
			if err := c.CheckOrigin(); err != nil {
				t.Errorf("CheckOrigin: %v", err)
			}
		})
	}
}

func TestConsoleAdmins(t *testing.T) {
	base := "providers:\n  - {name: demo, type: demo}\nconsole:\n  oauth:\n" +
		"    - {name: github, type: github, client_id: id, client_secret: \"${GH_SECRET}\"}\n" +
		"    - {name: sso, type: oidc, issuer: https://idp.example.com, client_id: id, client_secret: \"${GH_SECRET}\"}\n" // lines 1-6
	tests := []struct {
		name, admins string
		want         []want
	}{
		{name: "subjects", admins: "[\"github:4242\", \"sso:auth0|5f1e\", \"sso:a:b\"]"},
		{name: "a github login", admins: "[\"github:octocat\"]", want: []want{{7, true, `"github:octocat" matches nobody: a GitHub subject is the user's numeric id`}}},
		{name: "an account name", admins: "[admin]", want: []want{{7, true, `"admin" matches nobody: an entry is provider:subject, where provider names a console.oauth item (github, sso)`}}},
		{name: "an unknown provider", admins: "[\"google:123\"]", want: []want{{7, true, `"google:123" matches nobody`}}},
		{name: "no subject", admins: "[\"sso:\"]", want: []want{{7, true, `"sso:" has no subject`}}},
		{name: "empty", admins: "[\"\"]", want: []want{{7, false, "console.admins: an empty entry"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps, err := parse([]byte(base+"  admins: "+tt.admins+"\n"), envOf(map[string]string{"GH_SECRET": "s3cret"}))
			if err != nil {
				t.Fatal(err)
			}
			checkProblems(t, ps, tt.want)
		})
	}
}
