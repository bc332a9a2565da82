package console

import (
	"context"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// ledgerEnv is a signed-in user whose ledger holds, oldest first: a paid
// top-up (Nov 21), a redeemed code (Nov 22), an operator's debit with a
// reason (Nov 23) and three usage charges plus a free request (Nov 24);
// another account has a top-up of its own.
func ledgerEnv(t *testing.T) (*env, *browser, store.Account) {
	t.Helper()
	ctx := context.Background()
	e := newEnv(t)
	// The clock is ahead of the real time, or the cookie jar would drop
	// the session cookie as expired.
	e.clock.mu.Lock()
	e.clock.t = time.Date(2027, 3, 24, 11, 0, 0, 0, time.UTC)
	e.clock.mu.Unlock()
	b := e.browser()
	me := b.signIn("github")
	acct, err := e.st.AccountByName(ctx, me.Account)
	if err != nil {
		t.Fatal(err)
	}
	day := func(d int) time.Time { return time.Date(2027, 3, d, 10, 0, 0, 0, time.UTC) }
	post := func(accountID string, k store.LedgerKind, amount money.Micros, ref, note string, at time.Time) {
		t.Helper()
		if _, err := e.st.Post(ctx, store.LedgerEntry{AccountID: accountID, Kind: k, Amount: amount, Ref: ref, Note: note,
			Time: at}); err != nil {
			t.Fatal(err)
		}
	}
	post(acct.ID, store.KindTopUp, 50*money.Unit, "topup:t1", "top-up via stripe", day(21))
	post(acct.ID, store.KindCode, 5*money.Unit, "code:code_1", "redemption code (batch launch)", day(22))
	post(acct.ID, store.KindAdjustment, -3_500_000, "adjust_1", "console, by github:boss: duplicate credit", day(23))
	var recs []store.UsageRecord
	for i, cost := range []money.Micros{1234, 2000, 0, 500} {
		recs = append(recs, store.UsageRecord{RequestID: fmt.Sprintf("req_%d", i), Time: day(24).Add(time.Duration(i) * time.Minute),
			AccountID: acct.ID, KeyID: "k1", Endpoint: "chat.completions", Model: "gpt-4o", Cost: cost, Status: 200})
	}
	if err := e.st.InsertUsage(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := e.st.CreateAccount(ctx, store.Account{ID: "acct_other", Name: "other", CreatedAt: day(24)}); err != nil {
		t.Fatal(err)
	}
	post("acct_other", store.KindTopUp, 7*money.Unit, "topup:other", "top-up via stripe", day(24))
	return e, b, acct
}

type ledgerList struct {
	Data       []ledgerJSON
	NextCursor *string `json:"next_cursor"`
}

func getLedger(t *testing.T, b *browser, query string) ledgerList {
	t.Helper()
	r := b.do("GET", "/console/api/ledger?"+query, "", nil)
	if r.status != 200 {
		t.Fatalf("ledger?%s: %d %s", query, r.status, r.body)
	}
	var l ledgerList
	r.json(t, &l)
	return l
}

func TestLedgerAPI(t *testing.T) {
	e, b, acct := ledgerEnv(t)
	all := getLedger(t, b, "")
	type want struct{ kind, amount, reason, ref string }
	wants := []want{
		{"usage", "-0.000500", "", "req_3"},
		{"usage", "-0.002000", "", "req_1"},
		{"usage", "-0.001234", "", "req_0"},
		{"adjustment", "-3.500000", "duplicate credit", "adjust_1"},
		{"code", "5.000000", "", "code:code_1"},
		{"topup", "50.000000", "", "topup:t1"},
	}
	if len(all.Data) != len(wants) || all.NextCursor != nil {
		t.Fatalf("got %d entries (next %v), want %d: %+v", len(all.Data), all.NextCursor, len(wants), all.Data)
	}
	for i, w := range wants {
		g := all.Data[i]
		if g.Kind != w.kind || g.Amount != w.amount || g.Reason != w.reason || g.Ref != w.ref {
			t.Errorf("entry %d: %+v, want %+v", i, g, w)
		}
		if i > 0 && g.ID >= all.Data[i-1].ID {
			t.Errorf("entry %d: not newest first", i)
		}
		// Each balance_after is the next older one plus this amount.
		prev := money.Micros(0)
		if i+1 < len(all.Data) {
			prev = mustMicros(t, all.Data[i+1].BalanceAfter)
		}
		if got := mustMicros(t, g.BalanceAfter); got != prev+mustMicros(t, g.Amount) {
			t.Errorf("entry %d: balance_after %s, the older %s plus %s", i, g.BalanceAfter, prev, g.Amount)
		}
	}
	if me := b.me(); all.Data[0].BalanceAfter != me.Balance || me.Balance != "51.496266" {
		t.Errorf("newest balance_after %s, /me balance %s", all.Data[0].BalanceAfter, me.Balance)
	}
	if !strings.Contains(string(b.do("GET", "/console/api/ledger", "", nil).body), `"created_at":"2027-03-24T10:03:00Z"`) {
		t.Error("created_at is not RFC 3339 UTC")
	}

	// Pages of two walk the same entries, the last without a cursor.
	var walked []ledgerJSON
	q := "limit=2"
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		p := getLedger(t, b, q)
		if len(p.Data) > 2 {
			t.Fatalf("page of %d", len(p.Data))
		}
		walked = append(walked, p.Data...)
		if p.NextCursor == nil {
			break
		}
		q = "limit=2&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	if fmt.Sprint(walked) != fmt.Sprint(all.Data) {
		t.Errorf("paged walk %+v, want %+v", walked, all.Data)
	}

	for _, tc := range []struct{ query, kinds string }{
		{"kind=usage", "usage usage usage"},
		{"kind=code,adjustment", "adjustment code"},
		{"kind=topup&kind=code", "code topup"},
		{"kind=hold", ""},
		{"kind=release,hold", ""},
		{"kind=bonus", ""},
		{"from=2027-03-22&to=2027-03-23", "adjustment code"},
		{"from=2027-03-24T10:01:00Z", "usage usage"},
		{"to=2027-03-21", "topup"},
		{"from=2027-03-22&kind=topup", ""},
	} {
		var kinds []string
		for _, x := range getLedger(t, b, tc.query).Data {
			kinds = append(kinds, x.Kind)
		}
		if got := strings.Join(kinds, " "); got != tc.kinds {
			t.Errorf("%s: kinds %q, want %q", tc.query, got, tc.kinds)
		}
	}

	usageCursor := encodeCursor(store.UsageRecord{Time: time.Now(), RequestID: "req_1"})
	for _, tc := range []struct{ query, param string }{
		{"cursor=abc", "cursor"},
		{"cursor=" + usageCursor, "cursor"},
		{"cursor=" + e.c.encodeLedgerCursor(acct.ID, 5) + "x", "cursor"},
		{"cursor=" + b64("ledger:6") + "." + strings.Split(e.c.encodeLedgerCursor(acct.ID, 5), ".")[1], "cursor"},
		{"cursor=" + e.c.encodeLedgerCursor("acct_other", 5), "cursor"},
		{"kind=charge", "kind"},
		{"kind=usage,nope", "kind"},
		{"limit=0", "limit"},
		{"limit=501", "limit"},
		{"from=yesterday", "from"},
	} {
		r := b.do("GET", "/console/api/ledger?"+tc.query, "", nil)
		var body struct {
			Error struct{ Type, Param string }
		}
		r.json(t, &body)
		if r.status != 400 || body.Error.Type != "invalid_request_error" || body.Error.Param != tc.param {
			t.Errorf("%s: %d %s", tc.query, r.status, r.body)
		}
	}
	if n, ok := e.c.decodeLedgerCursor(acct.ID, e.c.encodeLedgerCursor(acct.ID, 42)); !ok || n != 42 {
		t.Error("a cursor does not decode")
	}
	for _, bad := range []string{"ledger:0", "ledger:-4", "ledger:07", "ledger:", "usage:5"} {
		pos := b64(bad)
		if _, ok := e.c.decodeLedgerCursor(acct.ID, pos+"."+e.c.ledgerCursorMAC(acct.ID, pos)); ok {
			t.Errorf("cursor %q accepted", bad)
		}
	}
}

func TestLedgerOtherUsers(t *testing.T) {
	e, b, _ := ledgerEnv(t)
	for _, x := range getLedger(t, b, "limit=500").Data {
		if x.Ref == "topup:other" {
			t.Fatal("another account's entry is listed")
		}
	}
	other, _, err := e.st.LedgerPage(context.Background(), store.LedgerQuery{AccountID: "acct_other", Limit: 10})
	if err != nil || len(other) != 1 {
		t.Fatalf("other's ledger: %v %v", other, err)
	}
	// A cursor pointing above the other account's entry still lists only ours.
	me, _ := e.st.AccountByName(context.Background(), b.me().Account)
	for _, x := range getLedger(t, b, "cursor="+e.c.encodeLedgerCursor(me.ID, other[0].ID+1)).Data {
		if x.Ref == "topup:other" {
			t.Fatal("another account's entry is listed through a cursor")
		}
	}
	csvBody := string(b.do("GET", "/console/api/ledger.csv", "", nil).body)
	if strings.Contains(csvBody, "topup:other") {
		t.Fatal("another account's entry is in the CSV")
	}
	// Signed out: no ledger at all.
	if r := e.browser().do("GET", "/console/api/ledger", "", nil); r.status != 401 {
		t.Errorf("signed out: %d", r.status)
	}
}

func TestLedgerCSV(t *testing.T) {
	_, b, _ := ledgerEnv(t)
	r := b.do("GET", "/console/api/ledger.csv?kind=usage,adjustment&limit=1&cursor=junk", "", nil)
	if r.status != 200 || r.header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		!strings.HasPrefix(r.header.Get("Content-Disposition"), `attachment; filename="ledger-`) {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
	rows, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "id,created_at,kind,amount,balance_after,reason,ref" {
		t.Errorf("header %v", rows[0])
	}
	// limit and cursor do not apply to the CSV: every selected entry is in it.
	if len(rows) != 5 {
		t.Fatalf("%d rows: %v", len(rows), rows)
	}
	if got := strings.Join(rows[4], ","); !strings.HasSuffix(got, ",adjustment,-3.500000,51.500000,duplicate credit,adjust_1") {
		t.Errorf("adjustment row %q", got)
	}
	if rows[1][2] != "usage" || rows[1][3] != "-0.000500" || rows[1][4] != "51.496266" || rows[1][6] != "req_3" {
		t.Errorf("newest row %v", rows[1])
	}
	if r := b.do("GET", "/console/api/ledger.csv?kind=bogus", "", nil); r.status != 400 || !strings.Contains(string(r.body), `"param":"kind"`) {
		t.Errorf("bad kind: %d %s", r.status, r.body)
	}
	empty := b.do("GET", "/console/api/ledger.csv?kind=hold", "", nil)
	if empty.status != 200 || strings.TrimSpace(string(empty.body)) != "id,created_at,kind,amount,balance_after,reason,ref" {
		t.Errorf("hold csv: %d %q", empty.status, empty.body)
	}
}

func TestLedgerPage(t *testing.T) {
	e, b, _ := ledgerEnv(t)
	r := b.do("GET", "/console/ledger", "", nil)
	body := string(r.body)
	for _, want := range []string{"Usage · 3 requests", "-$0.003734", "$51.496266", "Adjusted by the operator", "duplicate credit",
		"Redeemed code", "+$5.00", "Payment received", "+$50.00", `href="/console/api/ledger.csv"`, `href="/console/ledger" aria-current="page"`} {
		if !strings.Contains(body, want) {
			t.Errorf("ledger page: missing %q", want)
		}
	}
	if r.status != 200 || strings.Contains(body, "github:boss") {
		t.Errorf("status %d, or the operator's name is shown", r.status)
	}
	zh := string(b.do("GET", "/console/ledger?lang=zh-CN", "", nil).body)
	if !strings.Contains(zh, "用量 · 3 次请求") || !strings.Contains(zh, "余额明细") {
		t.Error("the page is not in Chinese")
	}
	filtered := string(b.do("GET", "/console/ledger?kind=code&lang=en", "", nil).body) // the switch remembers the language
	if !strings.Contains(filtered, "Redeemed code") || strings.Contains(filtered, "Payment received") ||
		!strings.Contains(filtered, `href="/console/api/ledger.csv?kind=code"`) || !strings.Contains(filtered, `<option value="code" selected>`) {
		t.Error("kind filter not applied")
	}
	if r := b.do("GET", "/console/ledger?kind=bogus", "", nil); r.status != 400 || !strings.Contains(string(r.body), "Pick a kind from the list.") {
		t.Errorf("bad kind: %d", r.status)
	}
	if r := b.do("GET", "/console/ledger?cursor=bad", "", nil); r.status != 400 {
		t.Errorf("bad cursor: %d", r.status)
	}
	// A code redeemed on the overview and an adjustment fill its top-up card.
	code, hash := NewCode()
	if err := e.st.CreateCodes(context.Background(), []store.RedeemCode{{ID: "code_2", Hash: hash, Amount: 7 * money.Unit, CreatedAt: e.clock.Now()}}); err != nil {
		t.Fatal(err)
	}
	if r := b.do("POST", "/console/api/redeem", fmt.Sprintf(`{"code":%q}`, code), b.withCSRF()); r.status != 200 {
		t.Fatalf("redeem: %d %s", r.status, r.body)
	}
	if l := getLedger(t, b, "limit=1").Data; len(l) != 1 || l[0].Kind != "code" || l[0].Amount != "7.000000" || l[0].BalanceAfter != "58.496266" {
		t.Errorf("the redemption's entry: %+v", l)
	}
	ov := string(b.do("GET", "/console/", "", nil).body)
	if strings.Contains(ov, "No top-ups yet") || !strings.Contains(ov, "+$7.00") || !strings.Contains(ov, "duplicate credit") ||
		!strings.Contains(ov, `href="/console/ledger"`) || strings.Contains(ov, "Usage · ") {
		t.Error("overview's top-up card does not list the ledger's credits")
	}
}

func TestLedgerPageGroupsAndPages(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	me := b.signIn("github")
	acct, _ := e.st.AccountByName(context.Background(), me.Account)
	if _, err := e.st.Post(context.Background(), store.LedgerEntry{AccountID: acct.ID, Kind: store.KindTopUp, Amount: money.Unit * 100,
		Ref: "topup:x", Time: e.clock.Now().Add(-200 * 24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	// 60 charges on 60 days: 60 grouped rows (one a day), so two pages of 50.
	var recs []store.UsageRecord
	for i := range 60 {
		recs = append(recs, store.UsageRecord{RequestID: fmt.Sprintf("r%d", i), AccountID: acct.ID, Model: "m", Status: 200, Cost: 1000,
			Time: e.clock.Now().Add(-time.Duration(i) * 24 * time.Hour)})
	}
	if err := e.st.InsertUsage(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	first := string(b.do("GET", "/console/ledger", "", nil).body)
	i := strings.Index(first, `href="/console/ledger?cursor=`)
	if i < 0 {
		t.Fatal("no next page link")
	}
	next := first[i+len(`href="`):]
	next = strings.ReplaceAll(next[:strings.IndexByte(next, '"')], "&amp;", "&")
	second := string(b.do("GET", next, "", nil).body)
	if !strings.Contains(second, "Payment received") || strings.Contains(second, "rel=\"next\"") || !strings.Contains(second, "First page") {
		t.Error("the second page is not the last one with the top-up")
	}
	if n := strings.Count(first, "Usage · 1 request"); n != 50 {
		t.Errorf("first page has %d usage rows, want 50", n)
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func mustMicros(t *testing.T, s string) money.Micros {
	t.Helper()
	m, err := money.Parse(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return m
}
