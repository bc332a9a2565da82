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
	o.TopUps = []TopUp{
		{ID: "t3", Amount: usd(20), Method: "card", Status: "pending", CreatedAt: sampleNow},
		{ID: "t2", Amount: usd(50), Bonus: usd(5), Method: "card", Status: "paid", CreatedAt: sampleNow.AddDate(0, 0, -9), PaidAt: sampleNow.AddDate(0, 0, -9).Add(time.Minute)},
		{ID: "t1", Amount: usd(10), Method: "code", Status: "paid", CreatedAt: sampleNow.AddDate(0, -1, 0), PaidAt: sampleNow.AddDate(0, -1, 0)},
		{ID: "t0", Amount: usd(100), Method: "alipay", Status: "failed", CreatedAt: sampleNow.AddDate(0, -2, 0)},
	}
	o.Identities = []Identity{{Provider: "github", Login: "octocat", Email: "octocat@github.com", LastSeenAt: sampleNow}}
	o.LinkProviders = []Provider{{Name: "google", Label: "Google"}}
	return o
}

func sampleKeys(empty bool) Keys {
	k := Keys{Layout: sampleLayout("API keys", "keys"), Groups: []string{"default", "premium"}}
	if empty {
		return k
	}
	k.Flash = &Flash{Kind: "error", Message: "Spend cap: not an amount."}
	k.Form = KeyForm{Name: "staging", Group: "premium", SpendCap: "abc"}
	k.NewKey = &NewKey{Name: "production backend", Secret: "sk-mg-9f8e7d6c5b4a39281706f5e4d3c2b1a0"}
	k.Keys = []Key{
		{ID: "k1", Name: "production backend", Prefix: "sk-mg-9f8e…", Group: "default", CreatedAt: sampleNow, Status: "active"},
		{ID: "k2", Name: xssName, Prefix: "sk-mg-1a2b…", Group: "premium", CreatedAt: sampleNow.AddDate(0, -1, 0), LastUsedAt: sampleNow.Add(-time.Hour), ExpiresAt: sampleNow.AddDate(0, 2, 0), SpendCap: usd(25), Spent: usd(3.4567), Status: "active"},
		{ID: "k3", Name: strings.Repeat("very-long-key-name-", 540), Prefix: "sk-mg-77aa…", Group: "default", CreatedAt: sampleNow.AddDate(0, -3, 0), LastUsedAt: sampleNow.AddDate(0, -2, 0), Spent: usd(120), Status: "revoked"},
		{ID: "k4", Name: "", Prefix: "sk-mg-0c0c…", Group: "default", CreatedAt: sampleNow.AddDate(-1, 0, 0), ExpiresAt: sampleNow.AddDate(0, -1, 0), Status: "expired"},
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
		a.Flash = &Flash{Kind: "ok", Message: "Created 3 codes in batch launch-promo."}
		a.NewCodes = []string{"MG-7KQ2-XH4P-99ZD", "MG-3LMN-P0QA-1RTY", "MG-ZZ81-CC0E-4KLM"}
	}
	a.Errors = sampleRows(10)[3:4]
	return a
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
		{"stats", "stats", sampleStats(false)},
		{"stats-empty", "stats", sampleStats(true)},
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
	pages = append(pages, samplePage{"admin-accounts-empty", "admin", sampleAdmin("accounts", true)})
	return pages
}
