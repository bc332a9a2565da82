package config

import (
	"reflect"
	"testing"
	"time"
)

func TestConsoleSection(t *testing.T) {
	base := "providers:\n  - {name: demo, type: demo}\n" // lines 1-2; console: is line 3
	gh := "    - {name: github, type: github, client_id: id, client_secret: \"${GH_SECRET}\"}\n"
	tests := []struct {
		name, yaml string
		want       []want   // every problem, in order
		console    *Console // checked when no error is wanted
	}{
		{name: "absent", yaml: base, console: nil},
		{name: "empty mapping", yaml: base + "console: {}\n",
			want:    []want{{3, true, "console.oauth lists no sign-in provider"}},
			console: &Console{SessionTTL: Duration(168 * time.Hour), SignupGroups: []string{"default"}}},
		{name: "all set", yaml: base + "groups:\n  default: {models: ['*']}\n  pro: {models: ['*']}\nconsole:\n  public_url: https://gw.example.com\n  session_ttl: 12h\n  signup_groups: [pro]\n  admins: [\"github:4242\"]\n  oauth:\n" + gh,
			console: &Console{PublicURL: "https://gw.example.com", SessionTTL: Duration(12 * time.Hour), SignupGroups: []string{"pro"},
				Admins: []string{"github:4242"}, OAuth: []OAuthProvider{{Name: "github", Type: "github", ClientID: "id", ClientSecret: "s3cret"}}}},
		{name: "literal secret", yaml: base + "console:\n  oauth:\n    - {name: github, type: github, client_id: id, client_secret: lit}\n",
			want: []want{{5, true, "console.oauth[0]: client_secret is written literally in the file"}}},
		{name: "invalid provider", yaml: base + "console:\n  oauth:\n" + gh + "    - name: sso\n      type: oidc\n      client_id: x\n      client_secret: ${GH_SECRET}\n",
			want: []want{{6, false, `console.oauth[1]: oauth provider "sso": issuer is required for type oidc`}}},
		{name: "unknown type", yaml: base + "console:\n  oauth:\n    - {name: x, type: saml, client_id: a, client_secret: \"${GH_SECRET}\"}\n",
			want: []want{{5, false, `unknown type "saml"`}}},
		{name: "duplicate names", yaml: base + "console:\n  oauth:\n" + gh + gh,
			want: []want{{6, false, `console.oauth[1]: name "github" is used twice`}}},
		{name: "unknown signup group", yaml: base + "console:\n  signup_groups: [default, gold]\n  oauth:\n" + gh,
			want: []want{{4, false, `console.signup_groups: unknown group "gold"`}}},
		{name: "empty signup groups", yaml: base + "console:\n  signup_groups: []\n  oauth:\n" + gh,
			want: []want{{4, false, "console.signup_groups must name at least one group"}}},
		{name: "session ttl too short", yaml: base + "console:\n  session_ttl: 1m\n  oauth:\n" + gh,
			want: []want{{4, false, "console.session_ttl must be from 5m0s to 2160h0m0s, got 1m0s"}}},
		{name: "bad public url", yaml: base + "console:\n  public_url: gw.example.com/console\n  oauth:\n" + gh,
			want: []want{{4, false, "console.public_url must be an http(s) URL"}}},
		{name: "empty admin", yaml: base + "console:\n  admins: [\"\"]\n  oauth:\n" + gh,
			want: []want{{4, false, "console.admins: an empty entry"}}},
		{name: "unknown key", yaml: base + "console:\n  sesion_ttl: 1h\n", want: []want{{3, true, "no sign-in provider"}, {4, false, `unknown key "sesion_ttl" in console (did you mean session_ttl?)`}}},
		{name: "unknown oauth key", yaml: base + "console:\n  oauth:\n    - {name: github, type: github, client_id: a, clientsecret: b}\n",
			want: []want{{5, false, `unknown key "clientsecret" in console oauth provider (did you mean client_secret?)`}, {5, false, "client_secret is required"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ps, err := parse([]byte(tt.yaml), envOf(map[string]string{"GH_SECRET": "s3cret"}))
			if err != nil {
				t.Fatal(err)
			}
			checkProblems(t, ps, tt.want)
			if tt.want == nil && !reflect.DeepEqual(c.Console, tt.console) {
				t.Errorf("console = %+v, want %+v", c.Console, tt.console)
			}
		})
	}
	if c := Default(); c.Console != nil {
		t.Errorf("Default().Console = %+v, want nil (console off)", c.Console)
	}
}
