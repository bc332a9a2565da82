package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// A disabled account can still sign in, read its pages and revoke keys,
// with a banner saying it is disabled; what would add money or keys to it
// is refused with 403 account_disabled (JSON) or a 403 page (forms), and
// works again once the account is enabled.
func TestDisabledAccount(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b := e.browser()
	me := b.signIn("sso")
	acct, err := e.st.AccountByName(ctx, me.Account)
	if err != nil {
		t.Fatal(err)
	}
	created := b.do("POST", "/console/api/keys", `{"name":"ci","group":"default"}`, b.withCSRF())
	if created.status != http.StatusCreated {
		t.Fatalf("create key while enabled: %d %s", created.status, created.body)
	}
	var key keyJSON
	created.json(t, &key)
	if err := e.st.SetAccountDisabled(ctx, acct.ID, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if !b.me().Disabled {
		t.Error("/me does not say the account is disabled")
	}

	refused := []struct{ path, body string }{
		{"/console/api/keys", `{"name":"more","group":"default"}`},
		{"/console/api/topups", `{"amount":"10","method":"card"}`},
		{"/console/api/redeem", `{"code":"MG-AAAA-BBBB-CCCC-DDDD-EEEE"}`},
	}
	for _, rq := range refused {
		if r := b.do("POST", rq.path, rq.body, b.withCSRF()); r.status != http.StatusForbidden || r.code() != CodeDisabled {
			t.Errorf("disabled POST %s: %d %s", rq.path, r.status, r.body)
		}
	}
	forms := []struct {
		path   string
		fields url.Values
	}{
		{"/console/keys", url.Values{"name": {"more"}, "group": {"default"}}},
		{"/console/topups", url.Values{"amount": {"10"}, "method": {"card"}}},
		{"/console/redeem", url.Values{"code": {"MG-AAAA-BBBB-CCCC-DDDD-EEEE"}}},
	}
	for _, f := range forms {
		if r := b.form(f.path, f.fields, ""); r.status != http.StatusForbidden || !strings.Contains(string(r.body), "Account disabled") {
			t.Errorf("disabled form %s: %d", f.path, r.status)
		}
	}
	if n := len(b.keys()); n != 1 {
		t.Errorf("%d keys after refused creations, want 1", n)
	}
	if tus, _ := e.st.ListTopUps(ctx, acct.ID); len(tus) != 0 {
		t.Errorf("a disabled account started %d top-ups", len(tus))
	}

	for _, p := range []string{"/console/", "/console/keys", "/console/usage", "/console/stats"} {
		r := b.do("GET", p, "", nil)
		if r.status != http.StatusOK || !strings.Contains(string(r.body), "This account is disabled.") {
			t.Errorf("GET %s while disabled: %d, banner shown %v", p, r.status, strings.Contains(string(r.body), "This account is disabled."))
		}
		for _, form := range []string{`action="/console/keys"`, `action="/console/topups"`, `action="/console/redeem"`} {
			if strings.Contains(string(r.body), form) {
				t.Errorf("GET %s while disabled offers the form %s", p, form)
			}
		}
	}
	if r := b.do("DELETE", "/console/api/keys/"+key.ID, "", b.withCSRF()); r.status != http.StatusNoContent {
		t.Errorf("revoke while disabled: %d %s", r.status, r.body)
	}

	if err := e.st.SetAccountDisabled(ctx, acct.ID, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if r := b.do("POST", "/console/api/keys", `{"name":"again","group":"default"}`, b.withCSRF()); r.status != http.StatusCreated {
		t.Errorf("create key once enabled: %d %s", r.status, r.body)
	}
	if r := b.do("GET", "/console/", "", nil); strings.Contains(string(r.body), "This account is disabled.") || b.me().Disabled {
		t.Error("the banner or /me's disabled stays after enabling")
	}
}
