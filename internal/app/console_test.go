package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/config"
)

// /console/ exists only when the config has a console section.
func TestConsoleMounted(t *testing.T) {
	withConsole := func(c *config.Config) {
		c.Console = &config.Console{SessionTTL: config.Duration(time.Hour), SignupGroups: []string{"default"},
			OAuth: []config.OAuthProvider{{Name: "gh", Type: "github", ClientID: "id", ClientSecret: "secret",
				AuthURL: "http://127.0.0.1:1/login/oauth/authorize", TokenURL: "http://127.0.0.1:1/token", APIURL: "http://127.0.0.1:1/api"}}}
	}
	tests := []struct {
		name   string
		mutate func(*config.Config)
		path   string
		status int
		body   string // a substring of the body
	}{
		{"off: index", func(*config.Config) {}, "/console/", 404, `"code":"not_found"`},
		{"off: me", func(*config.Config) {}, "/console/api/me", 404, `"code":"not_found"`},
		{"off: login", func(*config.Config) {}, "/console/login/gh", 404, `"code":"not_found"`},
		{"on: index", withConsole, "/console/", 200, `href="/console/login/gh"`},
		{"on: me", withConsole, "/console/api/me", 401, `"code":"not_signed_in"`},
		{"on: login", withConsole, "/console/login/gh", 302, ""},
		{"on: unknown", withConsole, "/console/nope", 404, `"code":"not_found"`},
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := startGateway(t, tt.mutate)
			resp, err := noFollow.Get(g.URL + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.body) {
				t.Fatalf("GET %s: %d %s, want %d with %s", tt.path, resp.StatusCode, body, tt.status, tt.body)
			}
			on := strings.HasPrefix(tt.name, "on:")
			if got := resp.Header.Get("Content-Security-Policy") != ""; got != on {
				t.Errorf("CSP header present = %v, want %v", got, on)
			}
			if tt.status == http.StatusFound && !strings.HasPrefix(resp.Header.Get("Location"), "http://127.0.0.1:1/login/oauth/authorize?") {
				t.Errorf("login redirects to %q", resp.Header.Get("Location"))
			}
		})
	}
}
