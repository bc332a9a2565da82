package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/console"
	"github.com/modelgate/modelgate/internal/store"
)

// createCodes makes a batch through the admin form and returns the codes
// parsed from the page.
func (b *conUser) createCodes(batch string, count int, amount string) []string {
	b.t.Helper()
	st, loc, page := b.form("/console/admin/codes", url.Values{"batch": {batch}, "count": {fmt.Sprint(count)}, "amount": {amount}}, true)
	if st != http.StatusSeeOther {
		b.t.Fatalf("create codes: %d %.500s", st, page)
	}
	// Post/redirect/get: the page the form redirects to shows the codes
	// once; a reload shows none.
	if st, page, _ = b.get(loc); st != http.StatusOK {
		b.t.Fatalf("codes page: %d", st)
	}
	if _, again, _ := b.get(loc); codeRE.MatchString(again) {
		b.t.Fatal("a reload shows the codes again")
	}
	codes := slices.Compact(slices.Sorted(slices.Values(codeRE.FindAllString(page, -1))))
	if len(codes) != count {
		b.t.Fatalf("codes on the page: %q, want %d", codes, count)
	}
	return codes
}

// The admin sign-in link, redemption codes (once, even when raced), admin
// disabling an account and adjusting a balance.
func TestConsoleFlowAdminAndCodes(t *testing.T) {
	e := startConsole(t)
	user := e.signIn(ghUser{ID: 300, Login: "carol", Email: "carol@example.com"})

	// A non-admin gets 404 for the admin pages and forms.
	for _, s := range []string{"", "?section=accounts", "?section=codes"} {
		if st, page, _ := user.get("/console/admin" + s); st != 404 || strings.Contains(page, "Create redeem codes") {
			t.Fatalf("non-admin /console/admin%s: %d", s, st)
		}
	}
	if st, _, _ := user.form("/console/admin/codes", url.Values{"batch": {"x"}, "count": {"1"}, "amount": {"100"}}, true); st != 404 {
		t.Fatalf("non-admin creates codes: %d", st)
	}
	if st, _, _ := user.form("/console/admin/accounts/"+user.id+"/adjust", url.Values{"amount": {"100"}, "reason": {"me"}}, true); st != 404 {
		t.Fatalf("non-admin adjusts own balance: %d", st)
	}
	if got := e.balance(user.account); got != 0 {
		t.Fatalf("non-admin forms moved money: %s", got)
	}

	// Admin links: once, unexpired, whole.
	admin := e.adminSignIn()
	if admin.account != "admin" || !e.account("admin").Admin {
		t.Fatalf("admin account %q", admin.account)
	}
	used := e.adminLink("admin", time.Now())
	if st, _, final := e.newBrowser().useLink(used); st != 200 || final != "/console/admin" {
		t.Fatalf("fresh link: %d at %s", st, final)
	}
	links := []struct {
		name, token, want string
	}{
		{"used", used, "used already"},
		{"expired", e.adminLink("admin", time.Now().Add(-time.Hour)), "expired"},
		{"unknown", "not-a-real-token", "unknown"},
		{"empty", "", "incomplete"},
		{"too long", strings.Repeat("a", 200), "incomplete"},
	}
	for _, l := range links {
		b := e.newBrowser()
		st, page, _ := b.useLink(l.token)
		if st != 400 || !strings.Contains(page, l.want) {
			t.Errorf("%s link: %d, want 400 with %q: %.300s", l.name, st, l.want, page)
		}
		if st, _ := b.do("GET", "/console/api/me", nil, nil); st != 401 {
			t.Errorf("%s link signed the browser in", l.name)
		}
	}
	for _, s := range []string{"providers", "models", "groups", "accounts", "codes", "errors"} {
		if st, page, _ := admin.get("/console/admin?section=" + s); st != 200 || !strings.Contains(page, `aria-current="page">`+strings.ToUpper(s[:1])+s[1:]) {
			t.Errorf("admin section %s: %d", s, st)
		}
	}

	// Codes.
	codes := admin.createCodes("launch-promo", 4, "5")
	for _, bad := range []url.Values{
		{"batch": {""}, "count": {"1"}, "amount": {"5"}},
		{"batch": {"b"}, "count": {"0"}, "amount": {"5"}},
		{"batch": {"b"}, "count": {"1001"}, "amount": {"5"}},
		{"batch": {"b"}, "count": {"1"}, "amount": {"-5"}},
		{"batch": {"b"}, "count": {"1"}, "amount": {"5"}, "expires": {"2001-01-01"}},
	} {
		if st, _, _ := admin.form("/console/admin/codes", bad, true); st != 400 {
			t.Errorf("codes %v: %d, want 400", bad, st)
		}
	}
	var red struct{ Credited, Balance string }
	user.wantJSON("POST", "/console/api/redeem", map[string]string{"code": codes[0]}, 200, &red)
	if mustMoney(t, red.Credited) != units(5) || mustMoney(t, red.Balance) != units(5) || e.balance(user.account) != units(5) {
		t.Fatalf("redeem: %+v, balance %s", red, e.balance(user.account))
	}
	// Used: 409 however it is typed.
	for _, c := range []string{codes[0], strings.ToLower(codes[0]), " " + strings.ReplaceAll(codes[0], "-", " ") + " "} {
		if st, body := user.api("POST", "/console/api/redeem", map[string]string{"code": c}); st != 409 || errCode(body) != "code_already_used" {
			t.Errorf("second use as %q: %d %s", c, st, body)
		}
	}
	if st, body := admin.api("POST", "/console/api/redeem", map[string]string{"code": codes[0]}); st != 409 {
		t.Errorf("another account uses a used code: %d %s", st, body)
	}
	for _, c := range []string{"MG-AAAA-AAAA-AAAA-AAAA-AAAA", "", strings.Repeat("A", 65)} {
		if st, body := user.api("POST", "/console/api/redeem", map[string]string{"code": c}); st != 400 || errCode(body) != "invalid_code" {
			t.Errorf("code %q: %d %s", c, st, body)
		}
	}
	// Raced: 8 goroutines, one code, one winner.
	var wg sync.WaitGroup
	results := make([]int, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", e.g.URL+"/console/api/redeem", strings.NewReader(`{"code":"`+codes[1]+`"}`))
			req.Header.Set(console.CSRFHeader, user.csrf)
			req.Header.Set("Content-Type", "application/json")
			resp, err := user.nf.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			results[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	slices.Sort(results)
	if !slices.Equal(results, []int{200, 409, 409, 409, 409, 409, 409, 409}) {
		t.Fatalf("raced redemptions: %v, want one 200 and seven 409", results)
	}
	if got := e.balance(user.account); got != units(10) {
		t.Fatalf("balance after the race: %s, want 10", got)
	}
	// By form.
	if st, loc, _ := user.form("/console/redeem", url.Values{"code": {codes[2]}}, true); st != http.StatusSeeOther || loc != "/console/?done=redeemed" {
		t.Fatalf("redeem by form: %d to %q", st, loc)
	}
	if st, _, page := user.form("/console/redeem", url.Values{"code": {codes[2]}}, true); st != 400 && st != 409 || !strings.Contains(page, "already been used") {
		t.Fatalf("reuse by form: %d", st)
	}
	if got := e.balance(user.account); got != units(15) {
		t.Fatalf("balance after the form: %s, want 15", got)
	}
	if st, page, _ := admin.get("/console/admin?section=codes"); st != 200 || !strings.Contains(page, "launch-promo") {
		t.Fatalf("codes section: %d", st)
	} else if !regexp.MustCompile(`3\s*/\s*4`).MatchString(page) {
		t.Errorf("codes section does not show 3 / 4 redeemed")
	}
	if codeRE.MatchString(mustGet(t, admin, "/console/admin?section=codes")) {
		t.Errorf("codes are shown again after their creation")
	}

	// Disable: the account's key stops working; enable: it works again.
	key := user.createKey("work", "default")
	if _, err := e.chat(key.Key); err != nil {
		t.Fatal(err)
	}
	if st, loc, _ := admin.form("/console/admin/accounts/"+user.id+"/disable", nil, true); st != http.StatusSeeOther ||
		loc != "/console/admin/accounts/"+user.account+"?done=disabled" {
		t.Fatalf("disable: %d to %q", st, loc)
	}
	_, err := e.chat(key.Key)
	apiError(t, err, 401, "invalid_api_key")
	if !e.account(user.account).Disabled() {
		t.Fatal("account not disabled")
	}
	if st, _, _ := admin.form("/console/admin/accounts/acct_nope/disable", nil, true); st != 404 {
		t.Errorf("disable a missing account: %d", st)
	}
	if st, _, _ := admin.form("/console/admin/accounts/"+user.id+"/enable", nil, true); st != http.StatusSeeOther {
		t.Fatalf("enable: %d", st)
	}
	if _, err := e.chat(key.Key); err != nil {
		t.Fatalf("key after enabling: %v", err)
	}

	// Adjust with a reason: credited, and the reason is in the ledger.
	// (The chats' charges reach the ledger with their usage records.)
	eventually(t, "usage records", func() bool { return len(user.usage("?status=ok")) == 2 })
	before := e.balance(user.account)
	if st, loc, _ := admin.form("/console/admin/accounts/"+user.id+"/adjust", url.Values{"amount": {"+2.50"}, "reason": {"goodwill for ticket 42"}}, true); st != http.StatusSeeOther || loc != "/console/admin/accounts/"+user.account+"?done=adjusted" {
		t.Fatalf("adjust: %d to %q", st, loc)
	}
	if got := e.balance(user.account); got != before+units(2.5) {
		t.Fatalf("balance after adjusting: %s, want %s", got, before+units(2.5))
	}
	led, err := e.g.app.Store().ListLedger(context.Background(), user.id)
	if err != nil {
		t.Fatal(err)
	}
	last := led[len(led)-1]
	if last.Kind != store.KindAdjustment || last.Amount != units(2.5) || !strings.Contains(last.Note, "goodwill for ticket 42") ||
		!strings.Contains(last.Note, "admin") {
		t.Fatalf("ledger entry: %+v", last)
	}
	for _, bad := range []url.Values{
		{"amount": {"5"}, "reason": {""}},
		{"amount": {"5"}, "reason": {strings.Repeat("r", 201)}},
		{"amount": {"0"}, "reason": {"zero"}},
		{"amount": {"abc"}, "reason": {"nan"}},
		{"amount": {"-1000000"}, "reason": {"below zero"}},
	} {
		if st, _, _ := admin.form("/console/admin/accounts/"+user.id+"/adjust", bad, true); st != 400 {
			t.Errorf("adjust %v: %d, want 400", bad, st)
		}
	}
	if st, _, _ := admin.form("/console/admin/accounts/"+user.id+"/adjust", url.Values{"amount": {"5"}, "reason": {"no csrf"}}, false); st != 403 {
		t.Errorf("adjust without csrf: %d", st)
	}
	if got := e.balance(user.account); got != before+units(2.5) {
		t.Fatalf("refused adjustments moved the balance to %s", got)
	}
}

func mustGet(t *testing.T, b *conUser, path string) string {
	t.Helper()
	st, page, _ := b.get(path)
	if st != 200 {
		t.Fatalf("GET %s: %d", path, st)
	}
	return page
}

// The providers page's "send a test request": a chat through the
// provider's adapter, answered or refused, never billed.
func TestConsoleAdminProviderTest(t *testing.T) {
	e := startConsole(t)
	admin := e.adminSignIn()
	tests := []struct {
		provider string
		status   int
		text     string
	}{
		{"demo", http.StatusOK, "Answered:"},
		{"down", http.StatusOK, "connect"}, // 127.0.0.1:1 refuses the connection
		{"nope", http.StatusNotFound, "No such provider."},
	}
	for _, tt := range tests {
		status, loc, body := admin.form("/console/admin/providers/"+tt.provider+"/test", nil, true)
		if status == http.StatusSeeOther {
			// Post/redirect/get: the page shows the result once.
			if loc != "/console/admin?section=providers" {
				t.Errorf("%s: redirected to %q", tt.provider, loc)
			}
			status, body, _ = admin.get(loc)
			if _, again, _ := admin.get(loc); strings.Contains(again, tt.text) {
				t.Errorf("%s: a reload shows the result again", tt.provider)
			}
		}
		if status != tt.status || !strings.Contains(body, tt.text) {
			t.Errorf("%s: %d, body without %q: %.2000s", tt.provider, status, tt.text, body)
		}
	}
	if status, _, _ := admin.form("/console/admin/providers/demo/test", nil, false); status != http.StatusForbidden {
		t.Errorf("without csrf: %d", status)
	}
	user := e.signIn(ghUser{ID: 7, Login: "mallory"})
	if status, _, _ := user.form("/console/admin/providers/demo/test", nil, true); status != http.StatusNotFound {
		t.Errorf("a user's test request: %d", status)
	}
	if recs := e.g.usage(); len(recs) != 0 { // stops the gateway, flushing every record
		t.Errorf("test requests left %d usage records", len(recs))
	}
}
