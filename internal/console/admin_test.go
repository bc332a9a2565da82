package console

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// form posts fields (csrf_token added unless csrf is "-") as a browser form.
func (b *browser) form(path string, fields url.Values, csrf string) response {
	b.e.t.Helper()
	if csrf == "" {
		csrf = b.csrf
	}
	v := url.Values{}
	for k, x := range fields {
		v[k] = x
	}
	if csrf != "-" {
		v.Set("csrf_token", csrf)
	}
	return b.do("POST", path, v.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
}

// adminLink stores a login link and returns its path.
func (e *env) adminLink(account string, at time.Time) string {
	e.t.Helper()
	secret, l := NewLoginLink(account, at)
	if err := e.st.CreateLoginLink(context.Background(), l); err != nil {
		e.t.Fatal(err)
	}
	return "/console/admin-link?token=" + secret
}

// useLink opens a login link and presses its button, as an operator
// does; a link refused at the first step answers there.
func (b *browser) useLink(path string) response {
	b.e.t.Helper()
	r := b.do("GET", path, "", nil)
	m := regexp.MustCompile(`name="token" value="([^"]*)"`).FindSubmatch(r.body)
	if r.status != 200 || m == nil {
		return r
	}
	return b.do("POST", "/console/admin-link", url.Values{"token": {string(m[1])}}.Encode(),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
}

func TestAdminLink(t *testing.T) {
	e := newEnv(t)
	now := e.clock.Now()
	fresh, old := e.adminLink("ops", now), e.adminLink("ops", now.Add(-AdminLinkTTL-time.Second))
	tests := []struct {
		name, path string
		status     int
		text       string
	}{
		{"expired", old, 400, "has expired"},
		{"unknown", "/console/admin-link?token=nope", 400, "unknown or has expired"},
		{"empty", "/console/admin-link", 400, "incomplete"},
		{"too long", "/console/admin-link?token=" + strings.Repeat("a", 101), 400, "incomplete"},
		{"fresh", fresh, 200, `action="/console/logout"`}, // followed to the admin page
		{"used", fresh, 400, "used already"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := e.browser()
			r := b.useLink(tt.path)
			if r.status != tt.status || !strings.Contains(string(r.body), tt.text) {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if tt.status == 200 {
				if me := b.me(); me.Role != store.RoleAdmin || me.Account != "ops" {
					t.Errorf("me after the link: %+v", me)
				}
			} else if r := b.do("GET", "/console/api/me", "", nil); r.status != 401 {
				t.Errorf("a refused link signed the browser in: %d", r.status)
			}
		})
	}
}

// Opening a link (a HEAD or GET from a link preview or a mail scanner)
// uses nothing up: it shows a page whose button signs in; only the POST
// burns the link.
func TestAdminLinkOpenedFirst(t *testing.T) {
	e := newEnv(t)
	link := e.adminLink("ops", e.clock.Now())
	scanner := e.browser()
	for _, method := range []string{"HEAD", "GET", "HEAD", "GET"} {
		r := scanner.do(method, link, "", nil)
		if r.status != 200 {
			t.Fatalf("%s of the link: %d %s", method, r.status, r.body)
		}
		if method == "GET" && (!strings.Contains(string(r.body), `action="/console/admin-link"`) || strings.Contains(string(r.body), `action="/console/logout"`)) {
			t.Fatalf("GET of the link is not the confirmation page: %s", r.body)
		}
		for _, c := range scanner.c.Jar.Cookies(mustURL(t, e.srv.URL+"/console/")) {
			if c.Name == SessionCookie {
				t.Fatalf("%s of the link signed the scanner in", method)
			}
		}
	}
	if accts, _ := e.st.ListAccounts(context.Background()); len(accts) != 0 {
		t.Fatalf("opening the link created accounts: %+v", accts)
	}
	op := e.browser()
	if r := op.useLink(link); r.status != 200 || !strings.Contains(string(r.body), `action="/console/logout"`) {
		t.Fatalf("the operator's use after the scanner: %d %s", r.status, r.body)
	}
	if me := op.me(); me.Role != store.RoleAdmin {
		t.Fatalf("role %q after the link", me.Role)
	}
	// The POST alone is what burns it: a second one is refused.
	r := e.browser().do("POST", "/console/admin-link", url.Values{"token": {strings.TrimPrefix(link, "/console/admin-link?token=")}}.Encode(),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if r.status != 400 || !strings.Contains(string(r.body), "used already") {
		t.Fatalf("second POST: %d %s", r.status, r.body)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// The admin role is read with the account on every request: taking it
// away closes the admin pages to sessions already open, and granting it
// opens them without a new sign-in.
func TestAdminRoleFollowsTheAccount(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	admin := e.browser()
	if r := admin.useLink(e.adminLink("ops", e.clock.Now())); r.status != 200 {
		t.Fatalf("admin link: %d", r.status)
	}
	ops, err := e.st.AccountByName(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		grant  bool
		role   string
		status int
	}{
		{false, store.RoleUser, 404},
		{true, store.RoleAdmin, 200},
	}
	for _, st := range steps {
		if err := e.st.SetAccountAdmin(ctx, ops.ID, st.grant); err != nil {
			t.Fatal(err)
		}
		if me := admin.me(); me.Role != st.role {
			t.Errorf("admin flag %v: role %q, want %q", st.grant, me.Role, st.role)
		}
		if r := admin.do("GET", "/console/admin?section=accounts", "", nil); r.status != st.status {
			t.Errorf("admin flag %v: admin page %d, want %d", st.grant, r.status, st.status)
		}
	}
}

func TestAdminPages(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	user := e.browser()
	user.signIn("sso")
	for _, p := range []string{"/console/admin", "/console/admin?section=accounts"} {
		if r := user.do("GET", p, "", nil); r.status != 404 {
			t.Errorf("non-admin GET %s: %d", p, r.status)
		}
	}
	if r := user.form("/console/admin/codes", url.Values{"batch": {"x"}, "count": {"1"}, "amount": {"5"}}, ""); r.status != 404 {
		t.Errorf("non-admin creates codes: %d", r.status)
	}
	admin := e.browser()
	if r := admin.useLink(e.adminLink("ops", e.clock.Now())); r.status != 200 {
		t.Fatalf("admin link: %d", r.status)
	}
	admin.csrf = admin.me().CSRFToken
	for _, s := range adminSections {
		if r := admin.do("GET", "/console/admin?section="+s, "", nil); r.status != 200 {
			t.Errorf("section %s: %d %s", s, r.status, r.body)
		}
	}

	// Codes: bad batches change nothing; a good one shows each code once.
	bad := []url.Values{
		{"batch": {""}, "count": {"1"}, "amount": {"5"}},
		{"batch": {"b"}, "count": {"0"}, "amount": {"5"}},
		{"batch": {"b"}, "count": {"1001"}, "amount": {"5"}},
		{"batch": {"b"}, "count": {"1"}, "amount": {"-5"}},
		{"batch": {"b"}, "count": {"1"}, "amount": {"5"}, "expires": {"2001-01-01"}},
	}
	for _, f := range bad {
		if r := admin.form("/console/admin/codes", f, ""); r.status != 400 {
			t.Errorf("codes %v: %d", f, r.status)
		}
	}
	if r := admin.form("/console/admin/codes", url.Values{"batch": {"b"}, "count": {"3"}, "amount": {"5"}}, "-"); r.status != 403 {
		t.Errorf("codes without csrf: %d", r.status)
	}
	if cs, _ := e.st.ListCodes(ctx, ""); len(cs) != 0 {
		t.Fatalf("refused batches stored %d codes", len(cs))
	}
	// The form answers 303; the page it redirects to shows the codes once,
	// a reload shows none and creates none.
	resp, err := admin.noFollow().PostForm(e.srv.URL+"/console/admin/codes", url.Values{"batch": {"launch"}, "count": {"3"}, "amount": {"5"}, "csrf_token": {admin.csrf}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/console/admin?section=codes&done=codes-created" {
		t.Fatalf("codes form: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	r := admin.do("GET", resp.Header.Get("Location"), "", nil)
	codes := regexp.MustCompile(`MG(-[A-Z2-9]{4}){5}`).FindAllString(string(r.body), -1)
	uniq := map[string]bool{}
	for _, c := range codes {
		uniq[c] = true
	}
	if r.status != 200 || len(uniq) != 3 || !strings.Contains(string(r.body), "The codes were created") {
		t.Fatalf("codes page %d with %d codes", r.status, len(uniq))
	}
	if again := admin.do("GET", resp.Header.Get("Location"), "", nil); regexp.MustCompile(`MG(-[A-Z2-9]{4}){5}`).Match(again.body) {
		t.Error("a reload shows the codes again")
	}
	if cs, _ := e.st.ListCodes(ctx, ""); len(cs) != 3 {
		t.Errorf("%d codes stored, want 3", len(cs))
	}
	for c := range uniq {
		if rr := user.do("POST", "/console/api/redeem", `{"code":"`+c+`"}`, map[string]string{CSRFHeader: user.me().CSRFToken}); rr.status != 200 {
			t.Fatalf("redeem %s: %d %s", c, rr.status, rr.body)
		}
		break
	}
	if got := user.me().Balance; got != "5.000000" {
		t.Errorf("balance after a code: %s", got)
	}

	// Adjust and disable the user's account.
	acct, _ := e.st.AccountByName(ctx, user.me().Account)
	path := "/console/admin/accounts/" + acct.ID
	adjust := []struct {
		amount, reason string
		status         int
	}{
		{"0", "none", 400},
		{"abc", "typo", 400},
		{"-6", "more than the balance", 400},
		{"2.5", "", 400},
		{"2.5", strings.Repeat("x", 201), 400},
		{"2.5", "goodwill", 303},
		{"-1", "correction", 303},
	}
	noFollow := admin.noFollow()
	for _, a := range adjust {
		req := url.Values{"amount": {a.amount}, "reason": {a.reason}, "csrf_token": {admin.csrf}}
		resp, err := noFollow.PostForm(e.srv.URL+path+"/adjust", req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != a.status {
			t.Errorf("adjust %s %q: %d, want %d", a.amount, a.reason, resp.StatusCode, a.status)
		}
	}
	if got := user.me().Balance; got != "6.500000" {
		t.Errorf("balance after adjustments: %s, want 6.500000", got)
	}
	if sum, _ := e.st.LedgerSum(ctx, acct.ID); sum != 6_500_000 {
		t.Errorf("ledger sum %s", money.Micros(sum))
	}
	for _, p := range []string{"/adjust", "/disable", "/enable"} {
		resp, err := noFollow.PostForm(e.srv.URL+path+p, url.Values{"amount": {"1"}, "reason": {"r"}, "csrf_token": {admin.csrf}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := accountURL(acct.Name) + "?done="; resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), want) {
			t.Errorf("%s: %d %s, want 303 to %s…", p, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
	if r := admin.form(path+"/adjust", url.Values{"amount": {"-1"}, "reason": {"undo"}}, ""); r.status != 200 {
		t.Fatalf("adjust back: %d", r.status)
	}
	if r := admin.form(path+"/disable", nil, ""); r.status != 200 {
		t.Fatalf("disable: %d", r.status)
	}
	if a, _ := e.st.AccountByID(ctx, acct.ID); !a.Disabled() {
		t.Error("account not disabled")
	}
	if r := admin.form(path+"/enable", nil, ""); r.status != 200 {
		t.Fatalf("enable: %d", r.status)
	}
	if a, _ := e.st.AccountByID(ctx, acct.ID); a.Disabled() {
		t.Error("account still disabled")
	}
	if r := admin.form("/console/admin/accounts/acct_nope/disable", nil, ""); r.status != 404 {
		t.Errorf("disable unknown: %d", r.status)
	}
}

func TestForms(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn("github")
	name := "<script>alert(1)</script>"
	if r := b.form("/console/keys", url.Values{"name": {name}, "group": {"default"}}, "-"); r.status != 403 || len(b.keys()) != 0 {
		t.Fatalf("key form without csrf: %d", r.status)
	}
	if r := b.form("/console/keys", url.Values{"name": {name}, "group": {"default"}}, "forged"); r.status != 403 || len(b.keys()) != 0 {
		t.Fatalf("key form with a forged csrf: %d", r.status)
	}
	r := b.form("/console/keys", url.Values{"name": {name}, "group": {"default"}, "expires": {"2099-12-31"}, "spend_cap": {"5"}}, "")
	if r.status != 200 || strings.Contains(string(r.body), name) || !strings.Contains(string(r.body), "&lt;script&gt;") {
		t.Fatalf("key form: %d, escaped name shown: %v", r.status, strings.Contains(string(r.body), "&lt;script&gt;"))
	}
	keys := b.keys()
	if len(keys) != 1 || keys[0].ExpiresAt == nil || !keys[0].ExpiresAt.Equal(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("keys %+v", keys)
	}
	secret := regexp.MustCompile(`sk-[A-Za-z0-9_-]{20,}`).FindString(string(r.body))
	if secret == "" {
		t.Fatal("the new key's secret is not on the page")
	}
	if r := b.do("GET", "/console/keys", "", nil); strings.Contains(string(r.body), secret) {
		t.Error("the secret is shown again")
	}
	for _, f := range []url.Values{
		{"name": {strings.Repeat("k", 10_000)}, "group": {"default"}},
		{"name": {"x"}, "group": {"gold"}},
		{"name": {"x"}, "group": {"default"}, "expires": {"tomorrow"}},
		{"name": {"x"}, "group": {"default"}, "spend_cap": {"-1"}},
	} {
		if r := b.form("/console/keys", f, ""); r.status != 400 {
			t.Errorf("key form %v: %d", f, r.status)
		}
	}
	// Another user cannot revoke it.
	other := e.browser()
	other.signIn("sso")
	if r := other.form("/console/keys/"+keys[0].ID+"/revoke", nil, ""); r.status != 404 {
		t.Errorf("foreign revoke: %d", r.status)
	}
	if r := b.form("/console/keys/"+keys[0].ID+"/revoke", nil, ""); r.status != 200 || b.keys()[0].Status != "revoked" {
		t.Errorf("revoke: %d", r.status)
	}
	// Every page renders for a signed-in user and sends signed-out ones to sign in.
	for _, p := range []string{"/console/", "/console/keys", "/console/usage", "/console/stats", "/console/stats?days=7", "/console/usage?status=error"} {
		if r := b.do("GET", p, "", nil); r.status != 200 || !strings.Contains(r.header.Get("Content-Type"), "text/html") {
			t.Errorf("GET %s: %d", p, r.status)
		}
		resp, err := e.browser().noFollow().Get(e.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if p != "/console/" && (resp.StatusCode != 302 || resp.Header.Get("Location") != "/console/") {
			t.Errorf("signed out GET %s: %d %s", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if r := b.form("/console/logout", nil, ""); r.status != 200 {
		t.Errorf("logout form: %d", r.status)
	}
	if r := b.do("GET", "/console/api/me", "", nil); r.status != 401 {
		t.Errorf("after logout: %d", r.status)
	}
}

// console.admins names sign-ins by provider:subject, never by the account
// name a first sign-in picks from its login: a stranger whose GitHub login
// is "42" gets the account github:42 and no admin role; GitHub user 42
// is admin whatever their login.
func TestAdminsAreSubjects(t *testing.T) {
	e := newEnv(t) // console.admins: [github:42]
	steps := []struct {
		id          int64
		login, acct string
		role        string
	}{
		{7, "42", "github:42", store.RoleUser},
		{42, "boss", "github:boss", store.RoleAdmin},
		{42, "renamed", "github:boss", store.RoleAdmin}, // a new login keeps the account and the role
	}
	for _, st := range steps {
		e.gh.id.Store(st.id)
		e.gh.login.Store(st.login)
		b := e.browser()
		me := b.signIn("github")
		if me.Account != st.acct || me.Role != st.role {
			t.Errorf("GitHub user %d (%s): account %q role %q, want %q %q", st.id, st.login, me.Account, me.Role, st.acct, st.role)
		}
		status := map[string]int{store.RoleUser: 404, store.RoleAdmin: 200}[st.role]
		if r := b.do("GET", "/console/admin?section=accounts", "", nil); r.status != status {
			t.Errorf("GitHub user %d: admin page %d, want %d", st.id, r.status, status)
		}
	}
}

// An admin takes the role from another account on the accounts page; not
// from their own, and not what console.admins grants.
func TestRevokeAdmin(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ops := e.browser()
	if r := ops.useLink(e.adminLink("ops", e.clock.Now())); r.status != 200 {
		t.Fatalf("ops link: %d", r.status)
	}
	ops.csrf = ops.me().CSRFToken
	other := e.browser()
	if r := other.useLink(e.adminLink("other", e.clock.Now())); r.status != 200 {
		t.Fatalf("other link: %d", r.status)
	}
	boss := e.browser() // GitHub user 42: admin by console.admins
	boss.signIn("github")
	acct := func(name string) store.Account {
		a, err := e.st.AccountByName(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	page := ops.do("GET", accountURL("other"), "", nil)
	if want := "/console/admin/accounts/" + acct("other").ID + "/revoke-admin"; !strings.Contains(string(page.body), want) {
		t.Errorf("account page lacks %q", want)
	}
	page = ops.do("GET", accountURL("github:octocat"), "", nil)
	if !strings.Contains(string(page.body), "granted by console.admins <code>github:42</code>") {
		t.Error("the account page does not say console.admins grants the role")
	}
	if strings.Contains(string(page.body), "/console/admin/accounts/"+acct("github:octocat").ID+"/revoke-admin") {
		t.Error("a Revoke admin button for a role only the configuration grants")
	}
	if page = ops.do("GET", accountURL("ops"), "", nil); strings.Contains(string(page.body), "/revoke-admin") {
		t.Error("a button to remove one's own role")
	}

	revoke := func(name, csrf string) response {
		return ops.form("/console/admin/accounts/"+acct(name).ID+"/revoke-admin", nil, csrf)
	}
	if r := revoke("other", "-"); r.status != 403 || !acct("other").Admin {
		t.Fatalf("revoke without csrf: %d, admin %v", r.status, acct("other").Admin)
	}
	if r := other.form("/console/admin/accounts/"+acct("ops").ID+"/revoke-admin", nil, "forged"); r.status != 403 || !acct("ops").Admin {
		t.Fatalf("revoke with a forged csrf: %d", r.status)
	}
	if r := revoke("ops", ""); r.status != 400 || !strings.Contains(string(r.body), "your own admin role") || !acct("ops").Admin {
		t.Fatalf("self revoke: %d %s", r.status, r.body)
	}
	if r := revoke("other", ""); r.status != 200 || !strings.Contains(string(r.body), "The admin role was revoked") || acct("other").Admin {
		t.Fatalf("revoke: %d, admin %v", r.status, acct("other").Admin)
	}
	// The revoked account's open session loses the admin pages at once.
	if me := other.me(); me.Role != store.RoleUser {
		t.Errorf("revoked session role %q", me.Role)
	}
	if r := other.do("GET", "/console/admin", "", nil); r.status != 404 {
		t.Errorf("revoked session admin page: %d", r.status)
	}
	if r := revoke("github:octocat", ""); r.status != 409 || !strings.Contains(string(r.body), "console.admins still grants it the role through github:42") {
		t.Fatalf("revoke a configured admin: %d %s", r.status, r.body)
	}
	if me := boss.me(); me.Role != store.RoleAdmin {
		t.Errorf("configured admin lost the role: %q", me.Role)
	}
	if r := ops.form("/console/admin/accounts/acct_nope/revoke-admin", nil, ""); r.status != 404 {
		t.Errorf("revoke unknown: %d", r.status)
	}
	user := e.browser()
	user.signIn("sso")
	if r := user.form("/console/admin/accounts/"+acct("ops").ID+"/revoke-admin", nil, ""); r.status != 404 || !acct("ops").Admin {
		t.Errorf("non-admin revokes: %d", r.status)
	}
}
