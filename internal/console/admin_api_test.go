package console

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// opsAndUser signs in an operator (by a login link, account "ops") and a
// user (SSO); the user has a key and two failed requests, one upstream.
func opsAndUser(t *testing.T, e *env) (ops, user *browser, acct store.Account, key keyJSON) {
	t.Helper()
	ops = e.browser()
	if r := ops.useLink(e.adminLink("ops", e.clock.Now())); r.status != 200 {
		t.Fatalf("admin link: %d", r.status)
	}
	ops.csrf = ops.me().CSRFToken
	user = e.browser()
	me := user.signIn("sso")
	r := user.do("POST", "/console/api/keys", `{"name":"laptop","group":"default"}`, user.withCSRF())
	if r.status != 201 {
		t.Fatalf("create key: %d %s", r.status, r.body)
	}
	r.json(t, &key)
	acct, err := e.st.AccountByName(context.Background(), me.Account)
	if err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now()
	recs := []store.UsageRecord{
		{RequestID: "req_ok", Time: now.Add(-3 * time.Minute), AccountID: acct.ID, KeyID: key.ID, Endpoint: "chat.completions", Model: "gpt-4o-mini", Provider: "p1", Status: 200},
		{RequestID: "req_up", Time: now.Add(-2 * time.Minute), AccountID: acct.ID, KeyID: key.ID, Endpoint: "chat.completions", Model: "gpt-4o-mini", Provider: "p1",
			Status: 503, ErrorCode: "upstream_unavailable", Attempts: []store.Attempt{{Provider: "p1", Status: 529, Error: "provider p1: HTTP 529: overloaded"}}},
		{RequestID: "req_quota", Time: now.Add(-time.Minute), AccountID: acct.ID, KeyID: key.ID, Endpoint: "chat.completions", Model: "claude", Status: 429, ErrorCode: "insufficient_quota"},
	}
	if err := e.st.InsertUsage(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	return ops, user, acct, key
}

func TestAdminAPIForbiddenToUsers(t *testing.T) {
	e := newEnv(t)
	_, user, acct, _ := opsAndUser(t, e)
	for _, p := range []string{"/console/api/admin/accounts", "/console/api/admin/accounts/" + acct.Name, "/console/api/admin/accounts/" + acct.Name + "/usage",
		"/console/api/admin/errors", "/console/api/admin/providers", "/console/api/admin/codes"} {
		if r := user.do("GET", p, "", nil); r.status != 404 || r.code() != "not_found" {
			t.Errorf("user GET %s: %d %s", p, r.status, r.body)
		}
	}
	if r := user.do("POST", "/console/api/admin/accounts/"+url.PathEscape(acct.Name)+"/role", `{"admin":true}`, user.withCSRF()); r.status != 404 {
		t.Errorf("user grants themselves admin: %d", r.status)
	}
	if a, _ := e.st.AccountByID(context.Background(), acct.ID); a.Admin {
		t.Error("the user became admin")
	}
	if r := e.browser().do("GET", "/console/api/admin/accounts", "", nil); r.status != 401 {
		t.Errorf("signed out: %d", r.status)
	}
}

func TestAdminAccountsAPI(t *testing.T) {
	e := newEnv(t)
	ops, _, acct, key := opsAndUser(t, e)
	ctx := context.Background()
	for _, n := range []string{"zeta", "zulu", "zebra"} {
		if err := e.st.CreateAccount(ctx, store.Account{ID: newID("acct_"), Name: n, CreatedAt: e.clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	type page struct {
		Data []accountJSON
		Next *string `json:"next_cursor"`
	}
	get := func(q string) (page, response) {
		r := ops.do("GET", "/console/api/admin/accounts?"+q, "", nil)
		var p page
		if r.status == 200 {
			r.json(t, &p)
		}
		return p, r
	}
	// Paging walks every account once, by name.
	var names []string
	q := "limit=2"
	for i := 0; ; i++ {
		p, r := get(q)
		if r.status != 200 || i > 5 {
			t.Fatalf("page %d: %d %s", i, r.status, r.body)
		}
		for _, a := range p.Data {
			names = append(names, a.Account)
		}
		if p.Next == nil {
			break
		}
		q = "limit=2&cursor=" + url.QueryEscape(*p.Next)
	}
	want := []string{acct.Name, "ops", "zebra", "zeta", "zulu"}
	slices.Sort(want)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("accounts %v", names)
	}
	// q matches the e-mail of a sign-in, and the name.
	p, _ := get("q=" + url.QueryEscape("@"))
	if len(p.Data) != 1 || p.Data[0].Account != acct.Name || p.Data[0].Email == "" || len(p.Data[0].Identities) != 1 || p.Data[0].Role != "user" || p.Data[0].Balance != "0.000000" {
		t.Errorf("search by e-mail: %+v", p.Data)
	}
	if p, _ := get("q=ZE"); len(p.Data) != 2 {
		t.Errorf("search ZE: %+v", p.Data)
	}
	for _, bad := range []struct{ q, param string }{
		{"cursor=!!", "cursor"}, {"cursor=" + url.QueryEscape("eHh4"), "cursor"}, {"limit=0", "limit"}, {"limit=501", "limit"}, {"q=" + strings.Repeat("x", 201), "q"},
	} {
		_, r := get(bad.q)
		var body struct{ Error struct{ Type, Param string } }
		r.json(t, &body)
		if r.status != 400 || body.Error.Type != "invalid_request_error" || body.Error.Param != bad.param {
			t.Errorf("%s: %d %s", bad.q, r.status, r.body)
		}
	}

	// One account whole.
	r := ops.do("GET", "/console/api/admin/accounts/"+url.PathEscape(acct.Name), "", nil)
	var d struct {
		Account string
		Keys    []adminKeyJSON
		TopUps  []topUpJSON `json:"topups"`
		Totals  struct {
			Days     int
			Requests int64
			Cost     string
		}
		Held, Spent string
	}
	r.json(t, &d)
	if r.status != 200 || d.Account != acct.Name || len(d.Keys) != 1 || d.Keys[0].ID != key.ID || d.Keys[0].Status != "active" ||
		d.TopUps == nil || d.Totals.Days != 30 || d.Totals.Requests != 3 || d.Held != "0.000000" {
		t.Errorf("account: %d %s", r.status, r.body)
	}
	if r := ops.do("GET", "/console/api/admin/accounts/nobody", "", nil); r.status != 404 || r.code() != "not_found" {
		t.Errorf("unknown account: %d %s", r.status, r.body)
	}
	// Its usage, with the user's own queries.
	r = ops.do("GET", "/console/api/admin/accounts/"+url.PathEscape(acct.Name)+"/usage?status=error&limit=1", "", nil)
	var u struct {
		Data []usageJSON
		Next *string `json:"next_cursor"`
	}
	r.json(t, &u)
	if r.status != 200 || len(u.Data) != 1 || u.Data[0].RequestID != "req_quota" || u.Next == nil {
		t.Errorf("usage: %d %s", r.status, r.body)
	}
	if r := ops.do("GET", "/console/api/admin/accounts/nobody/usage", "", nil); r.status != 404 {
		t.Errorf("unknown account's usage: %d", r.status)
	}
	if r := ops.do("GET", "/console/api/admin/accounts/"+url.PathEscape(acct.Name)+"/usage?cursor=zz", "", nil); r.status != 400 {
		t.Errorf("tampered usage cursor: %d", r.status)
	}
}

func TestAdminRoleAPI(t *testing.T) {
	e := newEnv(t)
	ops, user, acct, _ := opsAndUser(t, e)
	role := func(name, body string, csrf bool) response {
		h := ops.withCSRF()
		if !csrf {
			h = nil
		}
		return ops.do("POST", "/console/api/admin/accounts/"+url.PathEscape(name)+"/role", body, h)
	}
	if r := role(acct.Name, `{"admin":true}`, false); r.status != 403 {
		t.Errorf("without csrf: %d", r.status)
	}
	for _, body := range []string{`{}`, `{"admin":"yes"}`, `{"admin":true,"x":1}`, `nope`} {
		if r := role(acct.Name, body, true); r.status != 400 {
			t.Errorf("%s: %d", body, r.status)
		}
	}
	if r := role("nobody", `{"admin":true}`, true); r.status != 404 {
		t.Errorf("unknown account: %d", r.status)
	}
	r := role(acct.Name, `{"admin":true}`, true)
	var j accountJSON
	r.json(t, &j)
	if r.status != 200 || j.Role != "admin" || user.me().Role != "admin" {
		t.Fatalf("grant: %d %s", r.status, r.body)
	}
	if r := role(acct.Name, `{"admin":false}`, true); r.status != 200 || user.me().Role != "user" {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	if r := role("ops", `{"admin":false}`, true); r.status != 400 || !strings.Contains(string(r.body), "your own admin role") || ops.me().Role != "admin" {
		t.Errorf("own removal: %d %s", r.status, r.body)
	}
	boss := e.browser() // GitHub user 42: admin through console.admins
	boss.signIn("github")
	if r := role("github:octocat", `{"admin":false}`, true); r.status != 409 || !strings.Contains(string(r.body), "console.admins still grants it the role through github:42") {
		t.Errorf("configured admin: %d %s", r.status, r.body)
	}
}

func TestAdminErrorsAPI(t *testing.T) {
	e := newEnv(t)
	ops, _, acct, _ := opsAndUser(t, e)
	type page struct {
		Data []errorJSON
		Next *string `json:"next_cursor"`
	}
	get := func(q string) (page, response) {
		r := ops.do("GET", "/console/api/admin/errors?"+q, "", nil)
		var p page
		if r.status == 200 {
			r.json(t, &p)
		}
		return p, r
	}
	p, r := get("limit=1")
	if r.status != 200 || len(p.Data) != 1 || p.Next == nil {
		t.Fatalf("first page: %d %s", r.status, r.body)
	}
	x := p.Data[0]
	if x.RequestID != "req_quota" || x.Account != acct.Name || x.KeyName != "laptop" || x.Status != 429 || x.Code != "insufficient_quota" ||
		!strings.Contains(x.Message, "balance") || x.Provider != "" {
		t.Errorf("gateway refusal row: %+v", x)
	}
	p, _ = get("limit=1&cursor=" + url.QueryEscape(*p.Next))
	if len(p.Data) != 1 || p.Data[0].RequestID != "req_up" || p.Data[0].Provider != "p1" || p.Data[0].Message != "provider p1: HTTP 529: overloaded" {
		t.Errorf("upstream row: %+v", p.Data)
	}
	if p.Next != nil {
		if p2, _ := get("limit=1&cursor=" + url.QueryEscape(*p.Next)); len(p2.Data) != 0 {
			t.Errorf("a success listed: %+v", p2.Data)
		}
	}
	if p, _ := get("model=claude&account=" + url.QueryEscape(acct.Name)); len(p.Data) != 1 || p.Data[0].Model != "claude" {
		t.Errorf("filtered: %+v", p.Data)
	}
	if p, _ := get("account=ops"); len(p.Data) != 0 {
		t.Errorf("ops has no errors: %+v", p.Data)
	}
	if _, r := get("account=nobody"); r.status != 404 {
		t.Errorf("unknown account: %d", r.status)
	}
	for _, q := range []string{"cursor=abc", "cursor=" + url.QueryEscape(encodeCursor(store.UsageRecord{})) + "x!", "limit=0", "limit=x"} {
		if _, r := get(q); r.status != 400 {
			t.Errorf("%s: %d", q, r.status)
		}
	}
	if _, r := get("cursor=abc"); !strings.Contains(string(r.body), `"param":"cursor"`) {
		t.Errorf("tampered cursor: %s", r.body)
	}
	// The page shows the same rows, links the account, and filters.
	page1 := ops.do("GET", "/console/admin?section=errors&account="+url.QueryEscape(acct.Name), "", nil)
	for _, want := range []string{`href="/console/admin/accounts/` + acct.Name + `"`, "req_up", "laptop", "provider p1: HTTP 529: overloaded"} {
		if page1.status != 200 || !strings.Contains(string(page1.body), want) {
			t.Errorf("errors page lacks %q (%d)", want, page1.status)
		}
	}
	if r := ops.do("GET", "/console/admin?section=errors&cursor=zz", "", nil); r.status != 400 {
		t.Errorf("errors page with a tampered cursor: %d", r.status)
	}
}

func TestAdminProvidersAndCodesAPI(t *testing.T) {
	e := newEnv(t)
	e.c.Operator = healthOperator{}
	ops, _, _, _ := opsAndUser(t, e)
	r := ops.do("GET", "/console/api/admin/providers", "", nil)
	var p struct{ Data []providerJSON }
	r.json(t, &p)
	// p1 is not configured; openai-a and openai-b had no upstream tries:
	// the gateway's 429 is nobody's.
	if r.status != 200 || len(p.Data) != 2 || p.Data[0].Requests != 0 || p.Data[0].Health != "idle" || p.Data[0].LastError != nil {
		t.Errorf("providers: %d %s", r.status, r.body)
	}
	if r := ops.form("/console/admin/codes", url.Values{"batch": {"promo"}, "count": {"2"}, "amount": {"2.5"}, "expires": {"2099-12-31"}}, ""); r.status != 200 {
		t.Fatalf("codes form: %d", r.status)
	}
	r = ops.do("GET", "/console/api/admin/codes", "", nil)
	var c struct{ Data []batchJSON }
	r.json(t, &c)
	if r.status != 200 || len(c.Data) != 1 || c.Data[0].Batch != "promo" || c.Data[0].Amount != "2.500000" || c.Data[0].Count != 2 ||
		c.Data[0].Redeemed != 0 || c.Data[0].ExpiresAt == nil || !c.Data[0].ExpiresAt.Equal(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("codes: %d %s", r.status, r.body)
	}
}

// The account page: every form answers 303 back to it, and the user sees
// the operator's debit with its reason.
func TestAdminAccountPage(t *testing.T) {
	e := newEnv(t)
	ops, user, acct, key := opsAndUser(t, e)
	if r := ops.do("GET", accountURL(acct.Name), "", nil); r.status != 200 || !strings.Contains(string(r.body), "laptop") || !strings.Contains(string(r.body), "req_up") {
		t.Fatalf("account page: %d", r.status)
	}
	if r := ops.do("GET", accountURL("nobody"), "", nil); r.status != 404 {
		t.Errorf("unknown account page: %d", r.status)
	}
	if r := user.do("GET", accountURL(acct.Name), "", nil); r.status != 404 {
		t.Errorf("user opens an account page: %d", r.status)
	}
	nf := ops.noFollow()
	post := func(path string, v url.Values) (int, string) {
		if v == nil {
			v = url.Values{}
		}
		v.Set("csrf_token", ops.csrf)
		resp, err := nf.PostForm(e.srv.URL+path, v)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Location")
	}
	base := "/console/admin/accounts/" + acct.ID
	steps := []struct {
		path   string
		form   url.Values
		status int
		done   string
	}{
		{base + "/adjust", url.Values{"amount": {"+10"}, "reason": {"welcome credit"}}, 303, "adjusted"},
		{base + "/adjust", url.Values{"amount": {"-2.5"}, "reason": {"duplicate charge"}}, 303, "adjusted"},
		{base + "/keys/" + key.ID + "/disable", nil, 303, "key-disabled"},
		{base + "/keys/" + key.ID + "/enable", nil, 303, "key-enabled"},
		{base + "/keys/" + key.ID + "/rotate", nil, 404, ""},
		{base + "/keys/key_nope/disable", nil, 404, ""},
		{base + "/grant-admin", nil, 303, "admin-granted"},
		{base + "/revoke-admin", nil, 303, "admin-revoked"},
		{base + "/keys/" + key.ID + "/revoke", nil, 303, "key-revoked"},
		{base + "/keys/" + key.ID + "/enable", nil, 409, ""},
	}
	for _, s := range steps {
		st, loc := post(s.path, s.form)
		if st != s.status || s.done != "" && loc != accountURL(acct.Name)+"?done="+s.done {
			t.Errorf("%s: %d %s", s.path, st, loc)
		}
	}
	if ks := user.keys(); len(ks) != 1 || ks[0].Status != "revoked" {
		t.Errorf("keys after the operator's forms: %+v", ks)
	}
	if got := user.me().Balance; got != "7.500000" {
		t.Errorf("balance %s", got)
	}
	// The operator reads the same ledger the user does.
	var own, seen struct{ Data []map[string]any }
	user.do("GET", "/console/api/ledger", "", nil).json(t, &own)
	lr := ops.do("GET", "/console/api/admin/accounts/"+url.PathEscape(acct.Name)+"/ledger", "", nil)
	lr.json(t, &seen)
	if lr.status != 200 || len(seen.Data) != 2 || len(own.Data) != 2 || seen.Data[0]["amount"] != own.Data[0]["amount"] || seen.Data[0]["reason"] != "duplicate charge" {
		t.Errorf("admin ledger: %d %s", lr.status, lr.body)
	}
	if r := ops.do("GET", "/console/api/admin/accounts/nobody/ledger", "", nil); r.status != 404 {
		t.Errorf("unknown account's ledger: %d", r.status)
	}
	if r := ops.do("GET", "/console/api/admin/accounts/"+url.PathEscape(acct.Name)+"/ledger?cursor=zz", "", nil); r.status != 400 {
		t.Errorf("tampered ledger cursor: %d", r.status)
	}
	if r := user.do("GET", "/console/api/admin/accounts/"+url.PathEscape(acct.Name)+"/ledger", "", nil); r.status != 404 {
		t.Errorf("user reads the admin ledger: %d", r.status)
	}
	entries, _, err := e.st.LedgerPage(context.Background(), store.LedgerQuery{AccountID: acct.ID, Limit: 10})
	if err != nil || len(entries) != 2 || entries[0].Amount != -2_500_000 || !strings.HasSuffix(entries[0].Note, ": duplicate charge") {
		t.Errorf("ledger: %+v %v", entries, err)
	}
	r := ops.do("GET", accountURL(acct.Name)+"?done=adjusted", "", nil)
	if !strings.Contains(string(r.body), "duplicate charge") || !strings.Contains(string(r.body), "The balance was adjusted.") {
		t.Error("the account page lacks the adjustment")
	}
	// Refusals render the page with the reason.
	if st, _ := post(base+"/adjust", url.Values{"amount": {"-100"}, "reason": {"x"}}); st != 400 {
		t.Errorf("debit below zero: %d", st)
	}
	ownID := func() string { a, _ := e.st.AccountByName(context.Background(), "ops"); return a.ID }()
	if st, _ := post("/console/admin/accounts/"+ownID+"/revoke-admin", nil); st != 400 {
		t.Errorf("own role removal: %d", st)
	}
	if st, _ := post("/console/admin/accounts/"+ownID+"/disable", nil); st != 400 {
		t.Errorf("own disable: %d", st)
	}
	// In Chinese too.
	if r := ops.do("GET", accountURL(acct.Name)+"?lang=zh-CN", "", nil); r.status != 200 || !strings.Contains(string(r.body), "余额明细") {
		t.Errorf("zh account page: %d", r.status)
	}
	// The accounts section searches and links the page.
	r = ops.do("GET", "/console/admin?section=accounts&q="+url.QueryEscape(acct.Name), "", nil)
	if !strings.Contains(string(r.body), `href="/console/admin/accounts/`+acct.Name+`"`) || strings.Contains(string(r.body), `href="/console/admin/accounts/ops"`) {
		t.Error("the accounts search")
	}
	if r := ops.do("GET", "/console/admin?section=accounts&cursor=%21", "", nil); r.status != 400 {
		t.Errorf("accounts page with a tampered cursor: %d", r.status)
	}
}

// The operator reads one account's balance history as a page and as CSV,
// exactly as its user does; to the user those paths do not exist.
func TestAdminAccountLedgerPage(t *testing.T) {
	e := newEnv(t)
	ops, user, acct, _ := opsAndUser(t, e)
	if _, err := e.st.Post(context.Background(), store.LedgerEntry{AccountID: acct.ID, Kind: store.KindAdjustment,
		Amount: 7 * money.Unit, Note: "goodwill for the outage", Ref: "adj-ledger-page", Time: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	name := url.PathEscape(acct.Name)
	page := ops.do("GET", "/console/admin/accounts/"+name+"/ledger", "", nil)
	body := string(page.body)
	if page.status != 200 || !strings.Contains(body, "goodwill for the outage") || !strings.Contains(body, "+$7.00") ||
		!strings.Contains(body, `action="/console/admin/accounts/`+name+`/ledger"`) ||
		!strings.Contains(body, `href="/console/api/admin/accounts/`+name+`/ledger.csv"`) {
		t.Fatalf("operator's ledger page: %d %.600s", page.status, body)
	}
	if own := string(user.do("GET", "/console/ledger", "", nil).body); !strings.Contains(own, "goodwill for the outage") {
		t.Error("the user's own page lacks the adjustment")
	}
	csv := ops.do("GET", "/console/api/admin/accounts/"+name+"/ledger.csv", "", nil)
	if csv.status != 200 || !strings.HasPrefix(string(csv.body), "id,created_at,kind,amount,balance_after,reason,ref") ||
		!strings.Contains(string(csv.body), "goodwill for the outage") {
		t.Errorf("operator's CSV: %d %.300s", csv.status, csv.body)
	}
	for _, p := range []string{"/console/admin/accounts/" + name + "/ledger", "/console/api/admin/accounts/" + name + "/ledger.csv"} {
		if r := user.do("GET", p, "", nil); r.status != 404 {
			t.Errorf("user GET %s: %d", p, r.status)
		}
	}
	if r := ops.do("GET", "/console/admin/accounts/nobody/ledger", "", nil); r.status != 404 {
		t.Errorf("unknown account: %d", r.status)
	}
}

// The operator reads one account's usage as a page and as CSV, as its
// user does; to the user those paths do not exist.
func TestAdminAccountUsagePage(t *testing.T) {
	e := newEnv(t)
	ops, user, acct, _ := opsAndUser(t, e)
	name := url.PathEscape(acct.Name)
	page := ops.do("GET", "/console/admin/accounts/"+name+"/usage", "", nil)
	body := string(page.body)
	if page.status != 200 || !strings.Contains(body, "upstream_unavailable") || !strings.Contains(body, "gpt-4o-mini") ||
		!strings.Contains(body, `action="/console/admin/accounts/`+name+`/usage"`) ||
		!strings.Contains(body, `href="/console/api/admin/accounts/`+name+`/usage.csv?"`) {
		t.Fatalf("operator's usage page: %d %.600s", page.status, body)
	}
	if f := ops.do("GET", "/console/admin/accounts/"+name+"/usage?status=error", "", nil); f.status != 200 ||
		strings.Contains(string(f.body), "req_ok") {
		t.Errorf("filtered usage page: %d", f.status)
	}
	csv := ops.do("GET", "/console/api/admin/accounts/"+name+"/usage.csv", "", nil)
	if csv.status != 200 || !strings.HasPrefix(string(csv.body), "request_id,") || !strings.Contains(string(csv.body), "req_up") {
		t.Errorf("operator's usage CSV: %d %.300s", csv.status, csv.body)
	}
	for _, p := range []string{"/console/admin/accounts/" + name + "/usage", "/console/api/admin/accounts/" + name + "/usage.csv"} {
		if r := user.do("GET", p, "", nil); r.status != 404 {
			t.Errorf("user GET %s: %d", p, r.status)
		}
	}
	if r := ops.do("GET", "/console/admin/accounts/nobody/usage", "", nil); r.status != 404 {
		t.Errorf("unknown account: %d", r.status)
	}
}
