package console

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/store"
)

var secretRE = regexp.MustCompile(`sk-[A-Za-z0-9_-]{20,}`)

// postNoFollow posts a form and returns the answer without following a
// redirect.
func (b *browser) postNoFollow(path string, fields url.Values) *http.Response {
	b.e.t.Helper()
	v := url.Values{"csrf_token": {b.csrf}}
	for k, x := range fields {
		v[k] = x
	}
	req, _ := http.NewRequest(http.MethodPost, b.e.srv.URL+path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := b.noFollow().Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// setClock puts the env's clock at t.
func (e *env) setClock(t time.Time) {
	e.clock.mu.Lock()
	defer e.clock.mu.Unlock()
	e.clock.t = t
}

func TestCreateKeyPostRedirectGet(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn("github")
	resp := b.postNoFollow("/console/keys", url.Values{"name": {"laptop"}, "group": {"default"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/keys" {
		t.Fatalf("create: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if len(b.keys()) != 1 {
		t.Fatalf("keys after create: %d", len(b.keys()))
	}
	// Another session of the same user does not get the secret.
	stolen := e.browser()
	stolen.signIn("github")
	for _, ck := range b.c.Jar.Cookies(resp.Request.URL) {
		if ck.Name == RevealCookie {
			u, _ := url.Parse(e.srv.URL + "/console/")
			stolen.c.Jar.SetCookies(u, []*http.Cookie{ck})
		}
	}
	if r := stolen.do("GET", "/console/keys", "", nil); secretRE.Match(r.body) {
		t.Error("another session saw the secret")
	}
	first := b.do("GET", "/console/keys", "", nil)
	secret := secretRE.FindString(string(first.body))
	if first.status != 200 || secret == "" || !strings.Contains(string(first.body), "shown only once") {
		t.Fatalf("first GET: %d, secret %q", first.status, secret)
	}
	k, err := e.st.KeyByHash(context.Background(), apikey.Hash(secret))
	if err != nil || k.Name != "laptop" {
		t.Fatalf("the secret shown is not the key's: %v %+v", err, k)
	}
	for i := range 2 {
		r := b.do("GET", "/console/keys", "", nil)
		if r.status != 200 || secretRE.Match(r.body) || strings.Contains(string(r.body), "shown only once") {
			t.Errorf("reload %d shows the secret again", i)
		}
	}
	if n := len(b.keys()); n != 1 {
		t.Errorf("reloads made keys: %d", n)
	}
	// The reveal survives a visit to another page and waits for its own.
	b.postNoFollow("/console/keys", url.Values{"name": {"second"}, "group": {"default"}})
	if r := b.do("GET", "/console/usage", "", nil); secretRE.Match(r.body) {
		t.Error("the usage page shows the secret")
	}
	if r := b.do("GET", "/console/keys", "", nil); !secretRE.Match(r.body) {
		t.Error("the secret was lost on the way")
	}
}

func TestKeyFormsRedirect(t *testing.T) {
	e := newEnv(t)
	e.setClock(time.Date(2026, 12, 20, 15, 0, 0, 0, time.UTC))
	b := e.browser()
	b.signIn("github")
	b.postNoFollow("/console/keys", url.Values{"name": {"laptop"}, "group": {"default"}, "expires": {"2026-12-28"}})
	id := b.keys()[0].ID
	path := "/console/keys/" + id
	cases := []struct {
		path   string
		fields url.Values
		done   string
		check  func(keyJSON) bool
	}{
		{path + "/disable", nil, "key-disabled", func(k keyJSON) bool { return k.Disabled && k.Status == "disabled" }},
		{path + "/enable", nil, "key-enabled", func(k keyJSON) bool { return !k.Disabled && k.Status == "active" }},
		{path, url.Values{"name": {"  renamed  "}, "spend_cap": {"7.5"}, "expires": {"2026-12-28"}}, "key-updated",
			func(k keyJSON) bool {
				return k.Name == "renamed" && *k.SpendCap == "7.500000" && k.ExpiresAt.Equal(time.Date(2026, 12, 29, 0, 0, 0, 0, time.UTC))
			}},
		{path, url.Values{"name": {"renamed"}, "spend_cap": {""}, "expires": {"2027-01-31"}}, "key-updated",
			func(k keyJSON) bool {
				return k.SpendCap == nil && k.ExpiresAt.Equal(time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC))
			}},
		{path, url.Values{"name": {"renamed"}, "expires": {""}}, "key-updated", func(k keyJSON) bool { return k.ExpiresAt == nil }},
	}
	for _, tc := range cases {
		resp := b.postNoFollow(tc.path, tc.fields)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/keys?done="+tc.done {
			t.Errorf("%s %v: %d %q", tc.path, tc.fields, resp.StatusCode, resp.Header.Get("Location"))
			continue
		}
		if k := b.keys()[0]; !tc.check(k) {
			t.Errorf("%s %v: key %+v", tc.path, tc.fields, k)
		}
	}
	// Refused edits answer 4xx with the page, the typed values and the
	// reason; nothing changes.
	for _, f := range []url.Values{
		{"name": {strings.Repeat("k", 10_000)}},
		{"name": {"x"}, "spend_cap": {"-1"}},
		{"name": {"x"}, "spend_cap": {"1.0000001"}},
		{"name": {"x"}, "expires": {"2026-12-19"}},
		{"name": {"x"}, "expires": {"someday"}},
		{"name": {"a\x00b"}},
	} {
		r := b.form(path, f, "")
		if r.status != 400 || !strings.Contains(string(r.body), "<details open>") || !strings.Contains(string(r.body), `role="alert"`) {
			t.Errorf("edit %q: %d", f, r.status)
		}
		if k := b.keys()[0]; k.Name != "renamed" {
			t.Errorf("edit %q changed the key: %+v", f, k)
		}
	}
	// Another user's key, an unknown id: 404 for every form.
	other := e.browser()
	other.signIn("sso")
	for _, p := range []string{path, path + "/disable", path + "/enable", path + "/revoke", "/console/keys/key_nope/disable", "/console/keys/%2e%2e/disable"} {
		if r := other.form(p, url.Values{"name": {"mine"}}, ""); r.status != 404 {
			t.Errorf("other user %s: %d", p, r.status)
		}
	}
	if k := b.keys()[0]; k.Name != "renamed" || k.Disabled || k.Status != "active" {
		t.Errorf("the other user changed the key: %+v", k)
	}
	// A revoked key cannot be changed.
	b.postNoFollow(path+"/revoke", nil)
	if r := b.form(path+"/enable", nil, ""); r.status != 409 || !strings.Contains(string(r.body), "revoked key cannot be changed") {
		t.Errorf("enable a revoked key: %d", r.status)
	}
}

// TestKeyExpiryDate: the day picked is the day shown, in the list and in
// the edit form, and the key works through that day (UTC).
func TestKeyExpiryDate(t *testing.T) {
	e := newEnv(t)
	e.setClock(time.Date(2026, 12, 1, 23, 30, 0, 0, time.UTC))
	b := e.browser()
	b.signIn("github")
	b.postNoFollow("/console/keys", url.Values{"name": {"dated"}, "group": {"default"}, "expires": {"2026-12-28"}})
	k := b.keys()[0]
	if k.ExpiresAt == nil || !k.ExpiresAt.Equal(time.Date(2026, 12, 29, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("expires_at %v, want the end of Dec 28 UTC", k.ExpiresAt)
	}
	page := string(b.do("GET", "/console/keys", "", nil).body)
	if !strings.Contains(page, "Dec 28, 2026") || strings.Contains(page, "Dec 29, 2026") || !strings.Contains(page, `value="2026-12-28"`) {
		t.Error("the list or the edit form does not show Dec 28")
	}
	if zh := string(b.do("GET", "/console/keys?lang=zh-CN", "", nil).body); !strings.Contains(zh, "2026年12月28日") || !strings.Contains(zh, "到期日（UTC）") {
		t.Error("the Chinese page does not show 2026年12月28日 with (UTC)")
	}
	// Renaming keeps the date; the key is active on Dec 28 and expired
	// at midnight.
	b.postNoFollow("/console/keys/"+k.ID, url.Values{"name": {"dated2"}, "expires": {"2026-12-28"}})
	e.setClock(time.Date(2026, 12, 28, 23, 59, 0, 0, time.UTC))
	b.signIn("github") // the session of Dec 1 has expired
	if k := b.keys()[0]; k.Name != "dated2" || k.Status != "active" || !k.ExpiresAt.Equal(time.Date(2026, 12, 29, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("on Dec 28: %+v", k)
	}
	e.setClock(time.Date(2026, 12, 29, 0, 0, 0, 0, time.UTC))
	b.signIn("github")
	if k := b.keys()[0]; k.Status != "expired" {
		t.Errorf("on Dec 29: %s", k.Status)
	}
	// An expired key can still be renamed (its date is kept, not refused
	// as past).
	if r := b.postNoFollow("/console/keys/"+k.ID, url.Values{"name": {"old"}, "expires": {"2026-12-28"}}); r.StatusCode != http.StatusSeeOther {
		t.Errorf("rename an expired key: %d", r.StatusCode)
	}
}

func TestPatchKey(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.setClock(time.Date(2026, 12, 20, 15, 0, 0, 0, time.UTC))
	b := e.browser()
	me := b.signIn("github")
	b.postNoFollow("/console/keys", url.Values{"name": {"api"}, "group": {"default"}, "spend_cap": {"10"}, "expires": {"2027-01-31"}})
	id := b.keys()[0].ID
	other := e.browser()
	other.signIn("sso")
	acct, _ := e.st.AccountByName(ctx, me.Account)
	// Spend this month and last month; last use.
	if err := e.st.InsertUsage(ctx, []store.UsageRecord{
		{RequestID: "r1", Time: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), AccountID: acct.ID, KeyID: id, Model: "m", Status: 200, Cost: 1_250_000},
		{RequestID: "r2", Time: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), AccountID: acct.ID, KeyID: id, Model: "m", Status: 200, Cost: 4_000_000},
	}); err != nil {
		t.Fatal(err)
	}
	patch := func(b *browser, id, body string) response {
		return b.do("PATCH", "/console/api/keys/"+id, body, b.withCSRF())
	}
	cases := []struct {
		name, body string
		status     int
		param      string
		check      func(keyJSON) bool
	}{
		{"rename trimmed", `{"name": "  prod  "}`, 200, "", func(k keyJSON) bool { return k.Name == "prod" && *k.SpendCap == "10.000000" }},
		{"markup is text", `{"name": "<b>x</b>"}`, 200, "", func(k keyJSON) bool { return k.Name == "<b>x</b>" }},
		{"10 KB name", `{"name": "` + strings.Repeat("n", 10_000) + `"}`, 400, "name", nil},
		{"control char", `{"name": "a\u0007b"}`, 400, "name", nil},
		{"name null", `{"name": null}`, 400, "name", nil},
		{"negative cap", `{"spend_cap": "-1"}`, 400, "spend_cap", nil},
		{"seven decimals", `{"spend_cap": "0.0000001"}`, 400, "spend_cap", nil},
		{"cap as number", `{"spend_cap": 5}`, 400, "spend_cap", nil},
		{"cap set", `{"spend_cap": "2.5"}`, 200, "", func(k keyJSON) bool { return *k.SpendCap == "2.500000" }},
		{"cap null clears", `{"spend_cap": null}`, 200, "", func(k keyJSON) bool { return k.SpendCap == nil }},
		{"past expiry", `{"expires_at": "2026-12-01T00:00:00Z"}`, 400, "expires_at", nil},
		{"bad expiry", `{"expires_at": "tomorrow"}`, 400, "expires_at", nil},
		{"expiry set", `{"expires_at": "2027-03-01T12:00:00+02:00"}`, 200, "", func(k keyJSON) bool {
			return k.ExpiresAt.Equal(time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC))
		}},
		{"expiry null clears", `{"expires_at": null}`, 200, "", func(k keyJSON) bool { return k.ExpiresAt == nil }},
		{"disable", `{"disabled": true}`, 200, "", func(k keyJSON) bool { return k.Disabled && k.Status == "disabled" }},
		{"enable", `{"disabled": false}`, 200, "", func(k keyJSON) bool { return !k.Disabled && k.Status == "active" }},
		{"disabled string", `{"disabled": "yes"}`, 400, "disabled", nil},
		{"unknown field", `{"group": "pro"}`, 400, "group", nil},
		{"not an object", `[1]`, 400, "", nil},
		{"trailing data", `{} {}`, 400, "", nil},
		{"empty object", `{}`, 200, "", func(k keyJSON) bool { return k.Name == "<b>x</b>" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := patch(b, id, tc.body)
			if r.status != tc.status {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if tc.status != 200 {
				var er struct{ Error struct{ Type, Param string } }
				r.json(t, &er)
				if er.Error.Param != tc.param || er.Error.Type != "invalid_request_error" {
					t.Errorf("error %+v, want param %q", er.Error, tc.param)
				}
				return
			}
			var k keyJSON
			r.json(t, &k)
			if !tc.check(k) || k.ID != id || k.MonthSpent != "1.250000" || k.LastUsedAt == nil {
				t.Errorf("key %+v", k)
			}
			if got := b.keys()[0]; got.Name != k.Name || got.Status != k.Status || got.MonthSpent != k.MonthSpent {
				t.Errorf("the list shows %+v, PATCH answered %+v", got, k)
			}
		})
	}
	// The markup name is escaped on the page.
	if page := string(b.do("GET", "/console/keys", "", nil).body); strings.Contains(page, "<b>x</b>") || !strings.Contains(page, html.EscapeString("<b>x</b>")) {
		t.Error("the markup name is not escaped")
	}
	// CSRF, another user's key, a tampered id, a revoked key.
	if r := b.do("PATCH", "/console/api/keys/"+id, `{"name":"x"}`, nil); r.status != 403 {
		t.Errorf("without csrf: %d", r.status)
	}
	for _, bad := range []string{id, id + "x", "key_" + strings.Repeat("0", 16), "..%2f"} {
		if r := patch(other, bad, `{"disabled": true}`); r.status != 404 || r.code() != "not_found" {
			t.Errorf("other user %s: %d %s", bad, r.status, r.body)
		}
	}
	if k := b.keys()[0]; k.Disabled {
		t.Error("another user disabled the key")
	}
	b.do("DELETE", "/console/api/keys/"+id, "", b.withCSRF())
	if r := patch(b, id, `{"name": "again"}`); r.status != 409 || r.code() != CodeKeyRevoked {
		t.Errorf("revoked: %d %s", r.status, r.body)
	}
	// The list's JSON carries the new members.
	var raw struct{ Data []map[string]json.RawMessage }
	b.do("GET", "/console/api/keys", "", nil).json(t, &raw)
	for _, m := range []string{"disabled", "last_used_at", "month_spent", "status"} {
		if _, ok := raw.Data[0][m]; !ok {
			t.Errorf("the key list lacks %s", m)
		}
	}
}
