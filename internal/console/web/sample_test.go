package web

import (
	"fmt"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/money"
)

// Sample view models for the render and preview tests.

var sampleNow = time.Date(2026, 11, 24, 19, 5, 0, 0, time.UTC)

const xssName = "<script>alert(1)</script>"

func usd(units float64) money.Micros { return money.Micros(units * float64(money.Unit)) }

func sampleLayout(title, active string) Layout {
	return Layout{
		Title: title, Active: active, Account: "github:octocat", Name: "octocat", Admin: true,
		Balance: usd(42.5), Currency: "USD", CSRF: "csrf-token-123",
	}
}

func sampleDays(n int, zero bool) []Day {
	days := make([]Day, n)
	start := sampleNow.AddDate(0, 0, -n+1)
	for i := range days {
		d := Day{Date: start.AddDate(0, 0, i).Format(time.DateOnly)}
		if !zero && i%7 != 3 {
			r := int64(40 + (i*37)%120)
			d.Requests = r
			d.PromptTokens = r * int64(900+(i*53)%700)
			d.CompletionTokens = r * int64(200+(i*31)%300)
			d.Cost = money.Micros(d.PromptTokens*2 + d.CompletionTokens*8)
		}
		days[i] = d
	}
	return days
}

func sumDays(days []Day) Day {
	var t Day
	for _, d := range days {
		t.Requests += d.Requests
		t.PromptTokens += d.PromptTokens
		t.CompletionTokens += d.CompletionTokens
		t.Cost += d.Cost
	}
	return t
}

func sampleSignIn(empty bool) SignIn {
	if empty {
		return SignIn{}
	}
	return SignIn{
		Providers: []Provider{{Name: "github", Label: "GitHub"}, {Name: "google", Label: "Google"}},
		Error:     "Sign-in failed; try again.",
	}
}

// sampleDisabled is the overview of a disabled account.
func sampleDisabled() Overview {
	o := sampleOverview(false)
	o.Disabled = true
	return o
}

func sampleOverview(empty bool) Overview {
	o := Overview{Layout: sampleLayout("Overview", "overview")}
	if empty {
		o.Balance = 0
		o.Daily = sampleDays(30, true)
		return o
	}
	o.Flash = &Flash{Kind: "ok", Message: "Payment received: $20.00 was added to your balance."}
	o.Held = usd(1.2)
	o.Spent = usd(312.75)
	o.Daily = sampleDays(30, false)
	o.Spent30d = sumDays(o.Daily).Cost
	o.Requests30d = sumDays(o.Daily).Requests
	o.Methods = []string{"card", "alipay"}
	o.MinTopUp, o.MaxTopUp = usd(5), usd(1000)
	o.BonusPercent, o.BonusMax, o.BonusEligible = "10", usd(50), true
	o.TopUps = []TopUp{{ID: "t3", Amount: usd(20), Method: "card", Status: "pending", CreatedAt: sampleNow}}
	for _, r := range sampleLedgerRows() {
		if r.Kind != "usage" && len(o.Credits) < 6 {
			o.Credits = append(o.Credits, r)
		}
	}
	o.Identities = []Identity{{Provider: "github", Login: "octocat", Email: "octocat@github.com", LastSeenAt: sampleNow}}
	o.LinkProviders = []Provider{{Name: "google", Label: "Google"}}
	return o
}

func sampleKeys(empty bool) Keys {
	k := Keys{Layout: sampleLayout("API keys", "keys"), Groups: []string{"default", "premium"},
		GroupInfo: []AdminGroup{{Name: "default", Models: []string{"gpt-4o-mini", "gemini-*"}, Ratio: "1"},
			{Name: "premium", Models: []string{"gpt-4o*", "claude-*"}, Ratio: "1.2"}}}
	if empty {
		return k
	}
	k.Flash = &Flash{Kind: "error", Message: "Spend cap: not an amount."}
	k.Form = KeyForm{Name: "staging", Group: "premium", SpendCap: "abc"}
	k.NewKey = &NewKey{Name: "production backend", Secret: "sk-mg-9f8e7d6c5b4a39281706f5e4d3c2b1a0"}
	k.Keys = []Key{
		{ID: "k1", Name: "production backend", Prefix: "sk-mg-9f8e…", Group: "default", CreatedAt: sampleNow, Status: "active",
			Edit: KeyForm{Name: "production backend"}},
		{ID: "k2", Name: xssName, Prefix: "sk-mg-1a2b…", Group: "premium", CreatedAt: sampleNow.AddDate(0, -1, 0), LastUsedAt: sampleNow.Add(-time.Hour),
			ExpiresAt: time.Date(2026, 12, 29, 0, 0, 0, 0, time.UTC), LastDay: time.Date(2026, 12, 28, 0, 0, 0, 0, time.UTC),
			SpendCap: usd(25), Spent: usd(3.4567), MonthSpent: usd(1.25), Status: "active",
			Edit: KeyForm{Name: strings.Repeat("x", 120), SpendCap: "-1", Expires: "2026-12-28"}, EditOpen: true},
		{ID: "k3", Name: strings.Repeat("very-long-key-name-", 540), Prefix: "sk-mg-77aa…", Group: "default", CreatedAt: sampleNow.AddDate(0, -3, 0), LastUsedAt: sampleNow.AddDate(0, -2, 0), Spent: usd(120), Status: "revoked"},
		{ID: "k4", Name: "", Prefix: "sk-mg-0c0c…", Group: "default", CreatedAt: sampleNow.AddDate(-1, 0, 0), ExpiresAt: sampleNow.AddDate(0, -1, 0), LastDay: sampleNow.AddDate(0, -1, -1), Status: "expired"},
		{ID: "k5", Name: "paused job", Prefix: "sk-mg-5d5d…", Group: "premium", CreatedAt: sampleNow.AddDate(0, 0, -3), Disabled: true, Status: "disabled",
			SpendCap: usd(5), Edit: KeyForm{Name: "paused job", SpendCap: "5"}},
	}
	return k
}

func sampleRows(n int) []UsageRow {
	models := []string{"gpt-4o-mini", "claude-sonnet-4", "gemini-2.5-flash", "text-embedding-3-small"}
	rows := make([]UsageRow, n)
	for i := range rows {
		r := UsageRow{
			RequestID: fmt.Sprintf("req_%04d", i), CreatedAt: sampleNow.Add(-time.Duration(i*7) * time.Minute),
			Model: models[i%len(models)], Endpoint: "/v1/chat/completions", KeyName: "production backend",
			PromptTokens: int64(1200 + i*311), CompletionTokens: int64(300 + i*97), Cost: money.Micros(2400 + i*1311), Status: 200,
		}
		if i%5 == 3 {
			r.Status, r.ErrorCode, r.CompletionTokens, r.Cost = 429, "rate_limited", 0, 0
		}
		if i == 8 { // the longest code the gateway answers with
			r.Status, r.ErrorCode, r.CompletionTokens, r.Cost = 402, "insufficient_quota", 0, 0
		}
		if i == 1 {
			r.KeyName = xssName
		}
		rows[i] = r
	}
	return rows
}

func sampleUsage(empty bool) Usage {
	u := Usage{Layout: sampleLayout("Usage", "usage"), CSVURL: "/console/api/usage.csv?model=gpt-4o-mini"}
	u.Models = []string{"claude-sonnet-4", "gpt-4o-mini"}
	u.Keys = sampleKeys(false).Keys
	if empty {
		u.Filter = UsageFilter{From: "2026-11-01", To: "2026-11-24", Status: "error"}
		return u
	}
	u.Filter = UsageFilter{Model: "gpt-4o-mini", Key: "k2"}
	u.Rows = sampleRows(12)
	u.NextURL = "/console/usage?model=gpt-4o-mini&cursor=abc"
	u.FirstURL = "/console/usage?model=gpt-4o-mini"
	t0 := time.Date(2026, 11, 24, 9, 41, 0, 0, time.UTC)
	u.Refused = []RefusalRow{
		{Minute: t0, KeyName: "ci-runner", Endpoint: "chat.completions", Status: 429, Code: "insufficient_quota", Count: 1842},
		{Minute: t0.Add(-time.Minute), KeyName: "ci-runner", Endpoint: "chat.completions", Status: 429, Code: "insufficient_quota", Count: 2311},
		{Minute: t0.Add(-26 * time.Hour), KeyName: "production-backend", Endpoint: "responses", Status: 400, Code: "invalid_value", Count: 3},
	}
	return u
}

// sampleLedgerRows is a balance history, newest first: every kind, a
// reversal, a day of usage grouped and a single charge.
func sampleLedgerRows() []LedgerRow {
	bal := usd(42.5)
	rows := []LedgerRow{
		{Kind: "usage", Amount: -usd(1.234567), Count: 1234, Time: sampleNow},
		{Kind: "adjustment", Amount: -usd(3.5), Reason: "duplicate credit of Nov 20 " + xssName, Time: sampleNow.Add(-3 * time.Hour)},
		{Kind: "usage", Amount: -usd(0.002), Count: 1, Ref: "req_01JDX8K2ZQ4M7R3V9T6W5Y1B0C", Time: sampleNow.Add(-5 * time.Hour)},
		{Kind: "code", Amount: usd(10), Time: sampleNow.AddDate(0, 0, -1)},
		{Kind: "refund", Amount: usd(0.75), Reason: "upstream outage", Time: sampleNow.AddDate(0, 0, -2)},
		{Kind: "usage", Amount: -usd(12.8), Count: 9876, Time: sampleNow.AddDate(0, 0, -3)},
		{Kind: "topup", Amount: -usd(20), Time: sampleNow.AddDate(0, 0, -4)},
		{Kind: "bonus", Amount: usd(5), Time: sampleNow.AddDate(0, 0, -9)},
		{Kind: "topup", Amount: usd(50), Time: sampleNow.AddDate(0, 0, -9)},
		{Kind: "adjustment", Amount: usd(25), Reason: "welcome credit", Time: sampleNow.AddDate(0, -1, 0)},
	}
	for i := range rows {
		rows[i].ID = int64(100 - i)
		rows[i].BalanceAfter = bal
		bal -= rows[i].Amount
	}
	return rows
}

func sampleLedger(empty bool) Ledger {
	l := Ledger{Layout: sampleLayout("Balance history", "ledger"), Kinds: []string{"topup", "bonus", "code", "adjustment", "refund", "usage"},
		CSVURL: "/console/api/ledger.csv"}
	if empty {
		l.Kind = "refund"
		return l
	}
	l.Held = usd(1.2)
	l.Rows = sampleLedgerRows()
	l.NextURL = "/console/ledger?cursor=bGVkZ2VyOjkx"
	l.FirstURL = "/console/ledger"
	return l
}

// sampleStatsFree is a period of requests that all cost nothing.
func sampleStatsFree() Stats {
	s := sampleStats(true)
	for i := range s.Daily {
		if i%3 == 0 {
			s.Daily[i].Requests = 4
		}
	}
	s.Total = sumDays(s.Daily)
	s.ByModel = []Group{{Label: "demo-free", Requests: s.Total.Requests}}
	return s
}

func sampleStats(empty bool) Stats {
	s := Stats{Layout: sampleLayout("Statistics", "stats"), Days: 30, Choices: []int{7, 30, 90}}
	s.Daily = sampleDays(30, empty)
	s.Total = sumDays(s.Daily)
	if empty {
		return s
	}
	s.ByModel = []Group{
		{Label: "gpt-4o-mini", Requests: 1500, PromptTokens: 1_900_000, CompletionTokens: 420_000, Cost: s.Total.Cost * 6 / 10},
		{Label: "claude-sonnet-4", Requests: 700, PromptTokens: 800_000, CompletionTokens: 210_000, Cost: s.Total.Cost * 3 / 10},
		{Label: "text-embedding-3-small", Requests: 210, PromptTokens: 90_000, Cost: s.Total.Cost / 10},
	}
	s.ByKey = []Group{
		{Label: "production backend", Requests: 2000, PromptTokens: 2_500_000, CompletionTokens: 530_000, Cost: s.Total.Cost * 8 / 10},
		{Label: xssName, Requests: 410, PromptTokens: 290_000, CompletionTokens: 100_000, Cost: s.Total.Cost * 2 / 10},
	}
	return s
}

func sampleAdmin(section string, empty bool) Admin {
	a := Admin{Layout: sampleLayout("Admin", "admin"), Section: section}
	if empty {
		return a
	}
	a.Providers = []AdminProvider{
		{Name: "openai", Type: "openai", BaseURL: "https://api.openai.com/v1", Models: 12, Health: "ok", Requests: 1840, Errors: 3, Circuit: "closed", Keys: 3, KeysOut: 1},
		{Name: "anthropic", Type: "anthropic", BaseURL: "https://api.anthropic.com", Models: 4, Health: "errors", Requests: 210, Errors: 41, Circuit: "open", Keys: 1},
		{Name: "demo", Type: "demo", Models: 2, Health: "idle", Circuit: "closed", Keys: 1},
	}
	a.TestResult = &TestResult{Provider: "anthropic", Model: "claude-sonnet-4", OK: false, Latency: 1234 * time.Millisecond, Message: "upstream answered 529: overloaded_error"}
	a.Models = []AdminModel{
		{ID: "gpt-4o-mini", Kind: "chat", Provider: "openai", Price: "$0.15 / $0.60 per 1M tokens"},
		{ID: "text-embedding-3-small", Kind: "embedding", Provider: "openai", Price: "$0.02 per 1M tokens"},
		{ID: "sora-2", Kind: "video", Provider: "openai", Price: "$0.10 per second"},
	}
	a.Groups = []AdminGroup{{Name: "default", Models: []string{"gpt-4o-mini", "text-embedding-*"}}, {Name: "premium", Models: []string{"*"}}}
	a.Accounts = []AdminAccount{
		{ID: "a1", Name: "github:octocat", Balance: usd(42.5), Spent: usd(312.75), Keys: 4, Admin: true, CreatedAt: sampleNow.AddDate(-1, 0, 0)},
		{ID: "a2", Name: xssName, Balance: usd(-0.25), Spent: usd(9), Keys: 1, Disabled: true, CreatedAt: sampleNow.AddDate(0, -1, 0)},
		{ID: "a3", Name: "github:hubot", Balance: usd(1), Keys: 0, AdminBy: "github:4242", CreatedAt: sampleNow.AddDate(0, 0, -2)},
	}
	a.Batches = []CodeBatch{
		{Batch: "launch-promo", Amount: usd(5), Count: 100, Redeemed: 37, CreatedAt: sampleNow.AddDate(0, 0, -3), ExpiresAt: sampleNow.AddDate(0, 1, 0)},
		{Batch: "partners", Amount: usd(50), Count: 10, Redeemed: 10, CreatedAt: sampleNow.AddDate(0, -2, 0)},
	}
	if section == "codes" {
		a.Flash = &Flash{Kind: "ok", Message: "The codes were created. Copy them now: they are shown only once."}
		a.NewCodes = []string{"MG-7KQ2-XH4P-99ZD", "MG-3LMN-P0QA-1RTY", "MG-ZZ81-CC0E-4KLM"}
		a.NewBatch = "launch-promo"
	}
	a.Accounts[0].Logins = []string{"github:octocat", "sso:octo.cat@example.com"}
	a.Accounts[0].Email = "octocat@github.com"
	if section == "accounts" {
		a.Query = "octo"
		a.NextURL = "/console/admin?section=accounts&q=octo&cursor=abc"
	}
	a.Errors = sampleErrors()
	if section == "errors" {
		a.ErrModel = "claude-sonnet-4"
		a.FirstURL = "/console/admin?section=errors&model=claude-sonnet-4"
		a.NextURL = "/console/admin?section=errors&model=claude-sonnet-4&cursor=abc"
	}
	return a
}

func sampleErrors() []AdminError {
	t := sampleNow.Add(-3 * time.Minute)
	return []AdminError{
		{CreatedAt: t, Account: "github:octocat", KeyName: "production backend", Model: "claude-sonnet-4", Provider: "anthropic",
			Status: 503, Code: "upstream_unavailable", Message: "provider anthropic: HTTP 529: overloaded_error Overloaded", RequestID: "req_01JD8Z6Q2V7YH3KX9T"},
		{CreatedAt: t.Add(-time.Hour), Account: xssName, KeyName: xssName, Model: strings.Repeat("very-long-model-id-", 8), Provider: "openai",
			Status: 400, Code: "context_length_exceeded", Message: strings.Repeat("This model's maximum context length is 128000 tokens. ", 6), RequestID: "req_01JD8Y"},
		{CreatedAt: t.Add(-2 * time.Hour), Account: "github:hubot", KeyName: "ci-runner", Model: "gpt-4o-mini", Provider: "openai",
			Status: 499, Code: "client_closed_request", Message: "The client went away before the answer was complete.", RequestID: "req_01JD8X"},
	}
}

func sampleAccountPage(self bool) AdminAccountPage {
	p := AdminAccountPage{Layout: sampleLayout("github:octocat", "admin"), Held: usd(1.2), Self: self,
		UsageURL: "/console/api/admin/accounts/github:octocat/usage", LedgerURL: "/console/api/admin/accounts/github:octocat/ledger"}
	p.Target = sampleAdmin("accounts", false).Accounts[0]
	if self {
		p.Flash = &Flash{Kind: "error", Message: "You cannot disable your own account."}
		return p
	}
	p.Target = AdminAccount{ID: "a2", Name: xssName, Balance: usd(12.5), Spent: usd(87.25), Keys: 2, Disabled: true,
		CreatedAt: sampleNow.AddDate(0, -3, 0), Email: "mallory@example.com", Logins: []string{"github:mallory"}}
	p.Flash = &Flash{Kind: "ok", Message: "The balance was adjusted."}
	p.Identities = []Identity{{Provider: "github", Login: "mallory", Email: "mallory@example.com", LastSeenAt: sampleNow},
		{Provider: "sso", Login: strings.Repeat("long.login.name", 8), LastSeenAt: sampleNow.AddDate(0, -1, 0)}}
	p.Keys = []AdminKey{
		{ID: "k1", Name: "production backend", Prefix: "sk-mg-9f8e…", Group: "default", Status: "active", CreatedAt: sampleNow, LastUsedAt: sampleNow, SpendCap: usd(25), Spent: usd(3.4567)},
		{ID: "k2", Name: xssName, Prefix: "sk-mg-1a2b…", Group: "premium", Status: "disabled", CreatedAt: sampleNow.AddDate(0, -1, 0)},
		{ID: "k3", Prefix: "sk-mg-77aa…", Group: "default", Status: "revoked", CreatedAt: sampleNow.AddDate(0, -3, 0), Spent: usd(120)},
		{ID: "k4", Name: "old", Prefix: "sk-mg-0c0c…", Group: "default", Status: "expired", CreatedAt: sampleNow.AddDate(-1, 0, 0)},
	}
	p.TopUps = sampleOverview(false).TopUps
	p.Ledger = []LedgerRow{
		{Time: sampleNow, Kind: "adjustment", Amount: usd(-2.5), BalanceAfter: usd(12.5), Reason: "duplicate charge on Nov 3 " + xssName},
		{Time: sampleNow.Add(-time.Hour), Kind: "usage", Amount: usd(-0.123456), BalanceAfter: usd(15), Count: 42},
		{Time: sampleNow.AddDate(0, 0, -2), Kind: "code", Amount: usd(10), BalanceAfter: usd(15.123456)},
		{Time: sampleNow.AddDate(0, 0, -9), Kind: "topup", Amount: usd(50), BalanceAfter: usd(5.123456)},
		{Time: sampleNow.AddDate(0, 0, -9), Kind: "bonus", Amount: usd(5), BalanceAfter: usd(55.123456)},
		{Time: sampleNow.AddDate(0, 0, -20), Kind: "refund", Amount: usd(1), BalanceAfter: usd(1)},
	}
	p.Usage = sampleRows(6)
	p.Totals = sumDays(sampleDays(30, false))
	return p
}

func sampleError(signedIn bool) ErrorPage {
	e := ErrorPage{Status: 404, Heading: "Not found", Message: "This key does not exist or belongs to another account."}
	if signedIn {
		e.Layout = sampleLayout("Not found", "")
	}
	return e
}

// samplePage is one page to render: its template name and view model.
type samplePage struct {
	Slug string // for the preview's URL and screenshot names
	Name string
	Data any
}

func samplePages() []samplePage {
	pages := []samplePage{
		{"signin", "signin", sampleSignIn(false)},
		{"signin-empty", "signin", sampleSignIn(true)},
		{"overview", "overview", sampleOverview(false)},
		{"overview-empty", "overview", sampleOverview(true)},
		{"overview-disabled", "overview", sampleDisabled()},
		{"keys", "keys", sampleKeys(false)},
		{"keys-empty", "keys", sampleKeys(true)},
		{"usage", "usage", sampleUsage(false)},
		{"usage-empty", "usage", sampleUsage(true)},
		{"ledger", "ledger", sampleLedger(false)},
		{"ledger-empty", "ledger", sampleLedger(true)},
		{"stats", "stats", sampleStats(false)},
		{"stats-free", "stats", sampleStatsFree()},
		{"stats-empty", "stats", sampleStats(true)},
		{"models", "models", sampleModels("")},
		{"models-public", "models", sampleModels("public")},
		{"models-empty", "models", sampleModels("empty")},
		{"models-none", "models", sampleModels("none")},
		{"adminlink", "adminlink", AdminLink{Token: "tok_abc-123"}},
		{"playground", "playground", samplePlayground("")},
		{"playground-empty", "playground", samplePlayground("empty")},
		{"playground-off", "playground", samplePlayground("off")},
		{"error", "error", sampleError(false)},
		{"error-signedin", "error", sampleError(true)},
	}
	for _, s := range []string{"providers", "models", "groups", "accounts", "codes", "errors"} {
		pages = append(pages, samplePage{"admin-" + s, "admin", sampleAdmin(s, false)})
	}
	pages = append(pages, samplePage{"admin-accounts-empty", "admin", sampleAdmin("accounts", true)},
		samplePage{"admin-errors-empty", "admin", sampleAdmin("errors", true)},
		samplePage{"admin-account", "admin_account", sampleAccountPage(false)},
		samplePage{"admin-account-self", "admin_account", sampleAccountPage(true)})
	return pages
}
