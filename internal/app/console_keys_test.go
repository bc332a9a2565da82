package app_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// A key created with the console's form (303, the secret shown once on
// the page it redirects to), then disabled through PATCH
// /console/api/keys/{id}, is refused by the gateway with 401
// invalid_api_key through the official SDK; enabled again, it works.
func TestConsoleKeyDisableEnable(t *testing.T) {
	e := startConsole(t)
	u := e.signIn(ghUser{ID: 4711, Login: "keyholder", Email: "k@example.com"})
	status, location, _ := u.form("/console/keys", url.Values{"name": {"laptop"}, "group": {"default"}}, true)
	if status != http.StatusSeeOther || location != "/console/keys" {
		t.Fatalf("create key form: %d %q", status, location)
	}
	_, page, _ := u.get("/console/keys")
	secret := regexp.MustCompile(`sk-[A-Za-z0-9_-]{20,}`).FindString(page)
	if secret == "" {
		t.Fatal("the secret is not on the page after the redirect")
	}
	if _, again, _ := u.get("/console/keys"); strings.Contains(again, secret) {
		t.Error("the secret is shown again on reload")
	}
	id := u.keys()[0].ID
	list := func() error {
		c := e.g.client(secret)
		_, err := c.Models.List(context.Background())
		return err
	}
	if err := list(); err != nil {
		t.Fatalf("new key: %v", err)
	}
	u.wantJSON("PATCH", "/console/api/keys/"+id, map[string]any{"disabled": true}, http.StatusOK, nil)
	apiError(t, list(), http.StatusUnauthorized, "invalid_api_key")
	u.wantJSON("PATCH", "/console/api/keys/"+id, map[string]any{"disabled": false}, http.StatusOK, nil)
	if err := list(); err != nil {
		t.Fatalf("enabled again: %v", err)
	}
}
