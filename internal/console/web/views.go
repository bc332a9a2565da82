package web

import (
	"time"

	"github.com/modelgate/modelgate/internal/money"
)

// The view models below are what the console's handlers fill and the
// templates render. Every string is escaped by html/template; amounts are
// money.Micros in Layout.Currency and are formatted by the templates.

// Layout is what every page of a signed-in user shares.
type Layout struct {
	Title    string // the page's title, without the product name
	Active   string // the nav item to highlight: "overview", "keys", "usage", "ledger", "stats", "admin"
	Account  string // the account's name ("github:octocat")
	Name     string // the person's login, may be empty
	Admin    bool   // show the Admin nav item
	Disabled bool   // the account is disabled: a banner says so on every page
	Balance  money.Micros
	Currency string // ISO 4217, e.g. "USD"
	CSRF     string // goes into every form as the hidden field csrf_token
	Flash    *Flash // a message after an action, nil for none
	// Lang is the page's language (see i18n.go); "" is En.
	Lang Lang
	// Path is the page's path with its query but without lang, for the
	// language switch's links.
	Path string
}

// Flash is a one-line message above the page's content.
type Flash struct {
	Kind    string // "ok" or "error"
	Message string
}

// SignIn is the signed-out page: one button per provider.
type SignIn struct {
	Layout    // only Lang and Path are used
	Providers []Provider
	Error     string // a refusal to show ("Sign-in failed; try again."), or ""
}

// Provider is a sign-in provider: Name is the console.oauth item's name
// (the button goes to /console/login/{Name}); Label is shown ("GitHub").
type Provider struct {
	Name  string
	Label string
}

// Overview is /console/: balance, top-up, redemption and top-up history.
type Overview struct {
	Layout
	Held          money.Micros // reserved by open video tasks and background responses
	Spent         money.Micros // all time
	Spent30d      money.Micros
	Requests30d   int64
	Daily         []Day        // the last 30 days, oldest first, zero days included (a small chart)
	Methods       []string     // payment methods offered ("card", "alipay"); empty: top-up off
	MinTopUp      money.Micros // the form's min
	MaxTopUp      money.Micros
	BonusPercent  string       // "10" (percent), "" when there is no first-top-up bonus
	BonusMax      money.Micros // 0: no cap
	BonusEligible bool         // the account has no paid top-up yet
	TopUps        []TopUp      // top-ups still waiting for their payment, newest first
	// Credits are the latest credits and operator corrections from the
	// ledger (top-ups, codes, bonuses, adjustments, refunds), newest first.
	Credits       []LedgerRow
	Identities    []Identity // linked sign-ins
	LinkProviders []Provider // providers the user may still link (the button goes to /console/login/{Name}?link=1)
}

// TopUp is a row of the top-up history.
type TopUp struct {
	ID        string
	Amount    money.Micros
	Bonus     money.Micros
	Method    string // "card", "alipay" or "code" (a redemption)
	Status    string // "pending", "paid", "failed", "expired", "refunded", "partly refunded"
	CreatedAt time.Time
	PaidAt    time.Time // zero unless paid
}

// Identity is a linked sign-in.
type Identity struct {
	Provider   string // the provider's name ("github")
	Login      string
	Email      string
	LastSeenAt time.Time
}

// Keys is /console/keys: the key list and the create form.
type Keys struct {
	Layout
	Groups []string // the groups a new key may be bound to
	// GroupInfo says what each of Groups means (its model patterns and
	// price ratio), shown under the group select; may be empty.
	GroupInfo []AdminGroup
	Keys      []Key // newest first
	// NewKey is set on the first GET after a creation (the secret handed
	// over once, see the console's reveal): shown this once, with a copy
	// button.
	NewKey *NewKey
	// Form echoes what was typed when a creation was refused (the Flash
	// says why).
	Form KeyForm
}

// Key is a row of the key list. Its forms post to /console/keys/{ID}
// (edit: name, spend_cap, expires), /console/keys/{ID}/disable, /enable and
// /revoke; all answer 303 back to /console/keys.
type Key struct {
	ID         string
	Name       string
	Prefix     string // "sk-mg-abcd…", shown in monospace
	Group      string
	CreatedAt  time.Time
	LastUsedAt time.Time // zero: never
	ExpiresAt  time.Time // zero: never; the instant the key stops working
	// LastDay is the UTC day the key works through (the day picked in
	// the form; zero: never expires). ExpiresAt is the end of that day.
	LastDay    time.Time
	SpendCap   money.Micros // 0: none
	Spent      money.Micros // all time
	MonthSpent money.Micros // this UTC calendar month
	Disabled   bool         // disabled (can be enabled again), whatever Status says
	Status     string       // "active", "disabled", "expired", "revoked"; revoked keys get no forms
	// Edit fills the row's edit form (Group unused): the key as it is, or
	// what was typed when a change was refused (EditOpen then opens it).
	Edit     KeyForm
	EditOpen bool
}

// NewKey is a just-created key.
type NewKey struct {
	Name   string
	Secret string
}

// KeyForm is a key form's values: name, group (creation only), expires (a
// date, "2026-12-31": the key works through that day, UTC), spend_cap (a
// decimal amount, "" for none).
type KeyForm struct {
	Name     string
	Group    string
	Expires  string
	SpendCap string
}

// Usage is /console/usage: filters, a page of records and the CSV link.
type Usage struct {
	Layout
	Filter   UsageFilter
	Models   []string // choices for the model filter (models seen in the account's records)
	Keys     []Key    // choices for the key filter (ID and Name/Prefix are used)
	Rows     []UsageRow
	NextURL  string // "/console/usage?…&cursor=…" for the next page, "" on the last
	CSVURL   string // "/console/api/usage.csv?…" with the same filters
	Action   string // the page's path, for its filter form and reset link; "" is /console/usage
	FirstURL string // the first page with the same filters, "" when on it
	// Refused are the requests the gateway refused before calling a
	// vendor, counted per minute (shown unless a model or "ok" is chosen).
	Refused []RefusalRow
}

// RefusalRow counts one key's requests refused for one reason in a minute.
type RefusalRow struct {
	Minute   time.Time
	KeyName  string
	Endpoint string
	Status   int
	Code     string
	Count    int64
}

// UsageFilter echoes the query: from and to are dates ("2026-11-01",
// UTC, to inclusive), status "", "ok" or "error".
type UsageFilter struct {
	From, To, Model, Key, Status string
}

// UsageRow is a usage record.
type UsageRow struct {
	RequestID        string
	CreatedAt        time.Time
	Model            string
	Endpoint         string
	KeyName          string // the key's name, or its prefix when unnamed
	PromptTokens     int64
	CompletionTokens int64
	Cost             money.Micros
	Status           int    // HTTP status
	ErrorCode        string // "" on success
}

// Stats is /console/stats: charts and tables over Days days.
type Stats struct {
	Layout
	Days    int   // 7, 30 or 90
	Choices []int // the day counts offered: 7, 30, 90
	Daily   []Day // every day of the range, oldest first, zero days included
	Total   Day   // the sum of Daily (Date "")
	ByModel []Group
	ByKey   []Group
}

// Ledger is /console/ledger: the balance history, a page at a time, usage
// charges grouped per UTC day.
type Ledger struct {
	Layout
	Kind     string       // the kind filter: "" (all) or one of Kinds
	Kinds    []string     // the filter's choices: topup, bonus, code, adjustment, refund, usage
	Held     money.Micros // reserved right now by running tasks (not yet in the ledger)
	Rows     []LedgerRow  // newest first
	NextURL  string       // "/console/ledger?…&cursor=…", "" on the last page
	FirstURL string       // the first page with the same filter, "" when on it
	CSVURL   string       // "/console/api/ledger.csv?…" with the same filter
	Action   string       // the page's path, for its filter form; "" is /console/ledger
}

// LedgerRow is one change of the balance.
type LedgerRow struct {
	ID           int64
	Time         time.Time
	Kind         string       // topup, bonus, code, adjustment, refund or usage
	Amount       money.Micros // signed: credits > 0
	BalanceAfter money.Micros
	Count        int64  // usage: the requests this row stands for (a day's run when > 1)
	Reason       string // the operator's note of an adjustment or refund
	Ref          string // usage of one request: its request id
}

// Day is one UTC day's totals.
type Day struct {
	Date             string // "2026-11-24"
	Requests         int64
	PromptTokens     int64
	CompletionTokens int64
	Cost             money.Micros
}

// Group is the totals of a model or a key.
type Group struct {
	Label            string // the model id, or the key's name (prefix when unnamed; "(no key)")
	Requests         int64
	PromptTokens     int64
	CompletionTokens int64
	Cost             money.Micros
}

// Admin is /console/admin: the operator's pages, one section each.
type Admin struct {
	Layout
	Section   string // "providers", "models", "groups", "accounts", "codes", "errors"
	Providers []AdminProvider
	Models    []AdminModel
	Groups    []AdminGroup
	Accounts  []AdminAccount
	Batches   []CodeBatch
	NewCodes  []string // codes just created, shown this once after the form's redirect
	NewBatch  string   // their batch's label
	Errors    []AdminError
	// Query is the accounts section's search ("" lists every account);
	// ErrAccount and ErrModel filter the errors section.
	Query, ErrAccount, ErrModel string
	// NextURL and FirstURL page the accounts and errors sections ("" on
	// the last page, and on the first).
	NextURL, FirstURL string
	// TestResult is the outcome of "send a test request" for one provider.
	TestResult *TestResult
}

// AdminProvider is a configured upstream provider. The test button posts
// to /console/admin/providers/{Name}/test.
type AdminProvider struct {
	Name    string
	Type    string // "openai", "anthropic", "gemini", "azure", "demo"…
	BaseURL string
	Models  int    // how many models it serves
	Health  string // "ok", "errors" or "idle" (from the last hour's usage)
	// Circuit is the breaker's state on this replica: "closed", "open"
	// (skipped until CircuitUntil) or "half-open" (the next request probes).
	Circuit      string
	CircuitUntil time.Time
	Keys         int   // API keys configured
	KeysOut      int   // keys the vendor refused, out of rotation until a reload
	Requests     int64 // upstream tries in the last hour
	Errors       int64 // of which failed (no answer, 5xx, 429, 401, 403)
	// LastError is the newest failed try's error in the last hour, ""
	// when none failed; LastErrorAt is when its request ran.
	LastError   string
	LastErrorAt time.Time
}

// TestResult is a test request's outcome.
type TestResult struct {
	Provider string
	Model    string
	OK       bool
	Latency  time.Duration
	Message  string // the error, or the first words of the answer
}

// AdminModel is a model of the catalog with its price.
type AdminModel struct {
	ID       string
	Kind     string // "chat", "embedding", "image", "audio", "video"
	Provider string
	Price    string // a short human text: "$2.50 / $10.00 per 1M tokens", "$0.30 per second"
}

// AdminGroup is a model group.
type AdminGroup struct {
	Name   string
	Models []string // the patterns, as configured
	Ratio  string   // price_ratio as a decimal ("1", "1.2", "0.8"); "" unknown
}

// AdminAccount is an account row: POST /console/admin/accounts/{ID}/adjust
// (fields amount, a signed decimal, and reason), /disable and /enable.
type AdminAccount struct {
	ID       string
	Name     string
	Balance  money.Micros
	Spent    money.Micros
	Keys     int
	Disabled bool
	// Admin is the account's own admin flag (set by a login link); the
	// Revoke admin button posts to /console/admin/accounts/{ID}/revoke-admin.
	Admin bool
	// AdminBy is the console.admins entry (provider:subject) that grants
	// the role to one of the account's sign-ins, or "": only the
	// configuration can take that away.
	AdminBy   string
	CreatedAt time.Time
	// Email is the newest sign-in's verified e-mail, Logins the sign-ins
	// as "provider:login".
	Email  string
	Logins []string
}

// CodeBatch is a batch of redemption codes. The create form posts to
// /console/admin/codes with batch (a label), count (1–1000), amount and
// expires (a date, optional).
type CodeBatch struct {
	Batch     string
	Amount    money.Micros // of each code
	Count     int
	Redeemed  int
	CreatedAt time.Time
	ExpiresAt time.Time // zero: never
}

// AdminLink is the confirmation page of a one-time admin sign-in link:
// opening the link (GET, which link previews and mail scanners also do)
// changes nothing; its form posts Token to /console/admin-link, which
// uses the link up and signs the browser in.
type AdminLink struct {
	Layout // only Lang and Path are used
	Token  string
}

// ErrorPage is a full-page refusal (a 404 for another user's object, a
// failed sign-in, an expired admin link). Layout is zero when signed out.
type ErrorPage struct {
	Layout
	Status  int
	Heading string // "Sign-in failed"
	Message string // what happened and what to do
}
