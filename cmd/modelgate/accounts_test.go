package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// withDB opens the CLI's store the way the commands do (same config, same
// withStore) and runs f on it.
func (c *cli) withDB(f func(ctx context.Context, st store.Store)) {
	c.t.Helper()
	var errb bytes.Buffer
	e := env{stdout: &errb, stderr: &errb, getenv: func(k string) (string, bool) {
		if k == "MODELGATE_CONFIG" {
			return c.cfg, true
		}
		return "", false
	}}
	if code := withStore("", e, func(ctx context.Context, _ *config.Config, st store.Store) error {
		f(ctx, st)
		return nil
	}); code != 0 {
		c.t.Fatalf("open store: %s", errb.String())
	}
}

// account reads an account and checks that its balance is the sum of its
// ledger, as every command must leave it.
func (c *cli) account(name string) (store.Account, []store.LedgerEntry) {
	c.t.Helper()
	var (
		a       store.Account
		entries []store.LedgerEntry
	)
	c.withDB(func(ctx context.Context, st store.Store) {
		var err error
		if a, err = st.AccountByName(ctx, name); err != nil {
			c.t.Fatalf("account %q: %v", name, err)
		}
		sum, err := st.LedgerSum(ctx, a.ID)
		if err != nil {
			c.t.Fatal(err)
		}
		if sum != a.Balance {
			c.t.Errorf("account %q: balance %s but ledger sum %s", name, a.Balance, sum)
		}
		if entries, err = st.ListLedger(ctx, a.ID); err != nil {
			c.t.Fatal(err)
		}
	})
	return a, entries
}

func mustMicros(t *testing.T, s string) money.Micros {
	t.Helper()
	m, err := money.Parse(s)
	if err != nil {
		t.Fatalf("bad amount %q in test: %v", s, err)
	}
	return m
}

var printedBalance = regexp.MustCompile(`; balance (-?[0-9]+\.[0-9]{6}) USD\n$`)

func TestAccountsCredit(t *testing.T) {
	c := newCLI(t, "")
	if code, _, stderr := c.run("keys", "create", "--group", "default", "--account", "acme"); code != 0 {
		t.Fatalf("create key: %d %s", code, stderr)
	}
	if a, entries := c.account("acme"); a.Balance != 0 || len(entries) != 0 {
		t.Fatalf("new account: balance %s, %d entries", a.Balance, len(entries))
	}

	// Each case runs on the state the previous ones left.
	balance := money.Micros(0)
	for _, tc := range []struct {
		args []string
		code int
		// on success: the entry posted
		amount string
		kind   store.LedgerKind
		note   string
		ref    string
		// on failure: what stderr says
		err string
	}{
		{args: []string{"acme", "0.000250"}, amount: "0.000250", kind: store.KindTopUp},
		{args: []string{"acme", "10", "--note", "invoice 7", "--ref", "pay_1"}, amount: "10", kind: store.KindTopUp, note: "invoice 7", ref: "pay_1"},
		{args: []string{"acme", "10", "--ref", "pay_1"}, code: 1, err: `ref "pay_1" was posted before; nothing changed`},
		{args: []string{"acme", "99", "--ref", "pay_1", "--kind", "bonus"}, code: 1, err: `ref "pay_1" was posted before`},
		{args: []string{"--ref", "pay_2", "acme", "1.5"}, amount: "1.5", kind: store.KindTopUp, ref: "pay_2"},
		{args: []string{"acme", "2", "--kind", "bonus", "--note", "welcome"}, amount: "2", kind: store.KindBonus, note: "welcome"},
		{args: []string{"acme", "0.75", "--kind", "refund"}, amount: "0.75", kind: store.KindRefund},
		{args: []string{"acme", "3", "--kind", "topup"}, amount: "3", kind: store.KindTopUp},
		{args: []string{"acme", "0.5", "--kind", "adjustment"}, amount: "0.5", kind: store.KindAdjustment},
		{args: []string{"acme", "-0.25"}, amount: "-0.25", kind: store.KindAdjustment},
		{args: []string{"acme", "--note", "fix", "--", "-1.000001"}, amount: "-1.000001", kind: store.KindAdjustment, note: "fix"},
		{args: []string{"acme", "-0.5", "--kind", "adjustment"}, amount: "-0.5", kind: store.KindAdjustment},
		{args: []string{"--note", "-5 off", "acme", "1"}, amount: "1", kind: store.KindTopUp, note: "-5 off"},
		{args: []string{"acme", "--kind", "adjustment", "-.5"}, amount: "-0.5", kind: store.KindAdjustment},
		{args: []string{"acme", "--note=typo", "-0.000001", "--ref", "fix_1"}, amount: "-0.000001", kind: store.KindAdjustment, note: "typo", ref: "fix_1"},
		{args: []string{"acme", "1.0000001"}, code: 2, err: "AMOUNT"},
		{args: []string{"acme", "abc"}, code: 2, err: "AMOUNT"},
		{args: []string{"acme", "0"}, code: 2, err: "AMOUNT"},
		{args: []string{"acme", "-0.000000"}, code: 2, err: "AMOUNT"},
		{args: []string{"acme", "1e3"}, code: 2, err: "AMOUNT"},
		{args: []string{"acme", ""}, code: 2, err: "AMOUNT"},
		{args: []string{"acme", "1,5"}, code: 2, err: "AMOUNT"},
		{args: []string{"acme", "2000000000000"}, code: 2, err: "AMOUNT"},
		{args: []string{"ghost", "5"}, code: 1, err: `no account named "ghost"`},
		{args: []string{"acme", "5", "--kind", "charge"}, code: 2, err: "--kind"},
		{args: []string{"acme", "5", "--kind", "gift"}, code: 2, err: "--kind"},
		{args: []string{"acme", "-5", "--kind", "topup"}, code: 2, err: "negative amount must be --kind adjustment"},
		{args: []string{"acme", "-5", "--kind", "bonus"}, code: 2, err: "negative amount must be --kind adjustment"},
		{args: []string{"acme", "-5", "--kind", "refund"}, code: 2, err: "negative amount must be --kind adjustment"},
		{args: []string{"acme"}, code: 2, err: "usage"},
		{args: []string{"acme", "1", "2"}, code: 2, err: "usage"},
		{args: []string{"acme", "1", "--bogus"}, code: 2, err: "bogus"},
	} {
		_, before := c.account("acme")
		code, stdout, stderr := c.run(append([]string{"accounts", "credit"}, tc.args...)...)
		a, entries := c.account("acme")
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d; stdout %q stderr %q", tc.args, code, tc.code, stdout, stderr)
			balance = a.Balance // keep going from the actual state
			continue
		}
		if tc.code != 0 {
			if !strings.Contains(stderr, tc.err) {
				t.Errorf("%q: stderr %q, want it to mention %q", tc.args, stderr, tc.err)
			}
			if stdout != "" {
				t.Errorf("%q: failed but printed %q", tc.args, stdout)
			}
			if a.Balance != balance || len(entries) != len(before) {
				t.Errorf("%q: failed but changed the account: balance %s -> %s, %d -> %d entries",
					tc.args, balance, a.Balance, len(before), len(entries))
				balance = a.Balance
			}
			continue
		}
		amount := mustMicros(t, tc.amount)
		balance += amount
		if a.Balance != balance {
			t.Errorf("%q: balance %s, want %s", tc.args, a.Balance, balance)
			balance = a.Balance
		}
		m := printedBalance.FindStringSubmatch(stdout)
		if m == nil || m[1] != a.Balance.String() {
			t.Errorf("%q: printed %q; want it to end with the balance %s", tc.args, stdout, a.Balance)
		}
		if want := string(tc.kind) + " " + amount.String() + ` USD to "acme"`; !strings.HasPrefix(stdout, want) {
			t.Errorf("%q: printed %q, want it to start with %q", tc.args, stdout, want)
		}
		if len(entries) != len(before)+1 {
			t.Errorf("%q: %d entries, want %d", tc.args, len(entries), len(before)+1)
			continue
		}
		e := entries[len(entries)-1]
		if e.Kind != tc.kind || e.Amount != amount || e.Note != tc.note || e.Ref != tc.ref || e.BalanceAfter != a.Balance {
			t.Errorf("%q: posted %+v; want kind %s amount %s note %q ref %q balance after %s",
				tc.args, e, tc.kind, amount, tc.note, tc.ref, a.Balance)
		}
		if d := time.Since(e.Time); d < 0 || d > time.Minute {
			t.Errorf("%q: entry time %v is not now", tc.args, e.Time)
		}
	}
	if want := mustMicros(t, "16.500248"); balance != want {
		t.Errorf("final balance %s, want %s", balance, want)
	}
}

// setupAccounts makes account acme with a balance of 12.5, one charge of
// 0.3 through its key and holds of 1.500250 from two gateway instances.
func setupAccounts(t *testing.T, c *cli) (acme store.Account) {
	t.Helper()
	if code, _, stderr := c.run("keys", "create", "--group", "default", "--account", "acme"); code != 0 {
		t.Fatalf("create key: %d %s", code, stderr)
	}
	if code, _, stderr := c.run("accounts", "credit", "acme", "12.5"); code != 0 {
		t.Fatalf("credit: %d %s", code, stderr)
	}
	acme, _ = c.account("acme")
	c.withDB(func(ctx context.Context, st store.Store) {
		keys, err := st.ListKeys(ctx)
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys: %v %v", keys, err)
		}
		now := time.Now().UTC()
		if err := st.InsertUsage(ctx, []store.UsageRecord{{RequestID: "req_1", Time: now, AccountID: acme.ID,
			KeyID: keys[0].ID, Endpoint: "chat.completions", Model: "demo-echo", Cost: 300_000, Status: 200}}); err != nil {
			t.Fatal(err)
		}
		if err := st.PutHolds(ctx, "gw-1", map[string]money.Micros{acme.ID: 1_500_000}, now); err != nil {
			t.Fatal(err)
		}
		if err := st.PutHolds(ctx, "gw-2", map[string]money.Micros{acme.ID: 250, "acct_other": 7_000_000}, now); err != nil {
			t.Fatal(err)
		}
	})
	acme, _ = c.account("acme")
	if acme.Balance != 12_200_000 || acme.Spent != 300_000 {
		t.Fatalf("setup: balance %s spent %s", acme.Balance, acme.Spent)
	}
	return acme
}

func TestAccountsShow(t *testing.T) {
	c := newCLI(t, "")
	acme := setupAccounts(t, c)

	code, out, stderr := c.run("accounts", "show", "acme", "--json")
	if code != 0 {
		t.Fatalf("show --json: %d %s", code, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("show --json is not JSON: %v\n%s", err, out)
	}
	for field, want := range map[string]string{
		"id":         acme.ID,
		"name":       "acme",
		"currency":   "USD",
		"balance":    "12.200000",
		"reserved":   "1.500250",
		"available":  "10.699750",
		"spent":      "0.300000",
		"ledger_sum": "12.200000",
	} {
		if got[field] != want {
			t.Errorf("show --json: %s = %v, want %q\n%s", field, got[field], want, out)
		}
	}
	if ts, _ := got["created_at"].(string); ts == "" {
		t.Errorf("show --json: no created_at\n%s", out)
	}

	code, out, stderr = c.run("accounts", "show", "acme")
	if code != 0 {
		t.Fatalf("show: %d %s", code, stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^account +acme \(` + regexp.QuoteMeta(acme.ID) + `\)$`),
		regexp.MustCompile(`(?m)^balance +12\.200000 USD$`),
		regexp.MustCompile(`(?m)^reserved +1\.500250 USD +\(requests in flight\)$`),
		regexp.MustCompile(`(?m)^available +10\.699750 USD$`),
		regexp.MustCompile(`(?m)^spent +0\.300000 USD$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("show output does not match %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "WARNING") {
		t.Errorf("show warns although the ledger matches:\n%s", out)
	}

	// Holds over the balance: available goes negative rather than lying.
	c.withDB(func(ctx context.Context, st store.Store) {
		if err := st.PutHolds(ctx, "gw-1", map[string]money.Micros{acme.ID: 20_000_000}, time.Now()); err != nil {
			t.Fatal(err)
		}
	})
	if _, out, _ = c.run("accounts", "show", "acme", "--json"); !strings.Contains(out, `"reserved": "20.000250"`) ||
		!strings.Contains(out, `"available": "-7.800250"`) {
		t.Errorf("holds over the balance:\n%s", out)
	}

	// An open video task's reservation shows as held and is not available.
	c.withDB(func(ctx context.Context, st store.Store) {
		now := time.Now().UTC()
		if err := st.CreateTask(ctx, store.VideoTask{ID: "video_" + strings.Repeat("1", 32), AccountID: acme.ID, KeyID: "key_x",
			Model: "sora-2", Provider: "p", State: store.TaskPending, Held: 1_000_000, Seconds: 4, UpstreamSeconds: 4,
			CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(24 * time.Hour), Deadline: now.Add(time.Hour), NextPollAt: now}); err != nil {
			t.Fatal(err)
		}
	})
	if _, out, _ = c.run("accounts", "show", "acme", "--json"); !strings.Contains(out, `"held": "1.000000"`) ||
		!strings.Contains(out, `"available": "-8.800250"`) {
		t.Errorf("an open video task:\n%s", out)
	}
	if _, out, _ = c.run("accounts", "show", "acme"); !regexp.MustCompile(`(?m)^held +1\.000000 USD +\(open video tasks and background responses\)$`).MatchString(out) {
		t.Errorf("an open video task:\n%s", out)
	}

	// The currency comes from the config.
	eur := newCLI(t, "billing: {currency: EUR}\n")
	setupAccounts(t, eur)
	if _, out, _ = eur.run("accounts", "show", "acme", "--json"); !strings.Contains(out, `"currency": "EUR"`) {
		t.Errorf("EUR config:\n%s", out)
	}
	if _, out, _ = eur.run("accounts", "show", "acme"); !strings.Contains(out, "12.200000 EUR") {
		t.Errorf("EUR config:\n%s", out)
	}

	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"accounts", "show", "ghost"}, 1, `no account named "ghost"`},
		{[]string{"accounts", "show", "ghost", "--json"}, 1, `no account named "ghost"`},
		{[]string{"accounts", "show"}, 2, "usage"},
		{[]string{"accounts", "show", "acme", "extra"}, 2, "usage"},
		{[]string{"accounts"}, 2, "usage"},
		{[]string{"accounts", "delete", "acme"}, 2, "unknown subcommand"},
	} {
		code, stdout, stderr := c.run(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.err) || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, %q", tc.args, code, stdout, stderr, tc.code, tc.err)
		}
	}
}

func TestAccountsList(t *testing.T) {
	c := newCLI(t, "")
	if code, out, _ := c.run("accounts", "list", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("empty list: %d %q", code, out)
	}
	acme := setupAccounts(t, c)
	if code, _, stderr := c.run("keys", "create", "--group", "basic"); code != 0 { // an account of its own
		t.Fatalf("create key: %d %s", code, stderr)
	}
	if code, _, stderr := c.run("keys", "create", "--group", "basic", "--account", "acme"); code != 0 { // no new account
		t.Fatalf("create key: %d %s", code, stderr)
	}
	var keyAcct string
	c.withDB(func(ctx context.Context, st store.Store) {
		keys, err := st.ListKeys(ctx)
		if err != nil || len(keys) != 3 {
			t.Fatalf("keys: %v %v", keys, err)
		}
		keyAcct = keys[1].AccountName
	})

	code, out, stderr := c.run("accounts", "list", "--json")
	if code != 0 {
		t.Fatalf("list --json: %d %s", code, stderr)
	}
	var list []accountJSON
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	byName := map[string]accountJSON{}
	for _, a := range list {
		byName[a.Name] = a
		if a.Currency != "USD" || a.CreatedAt.IsZero() || !strings.HasPrefix(a.ID, "acct_") {
			t.Errorf("list entry %+v", a)
		}
	}
	if a := byName["acme"]; a.ID != acme.ID || a.Balance != "12.200000" || a.Spent != "0.300000" {
		t.Errorf("acme in list: %+v", a)
	}
	if a, ok := byName[keyAcct]; !ok || a.Balance != "0.000000" || a.Spent != "0.000000" {
		t.Errorf("key's own account %q in list: %+v\n%s", keyAcct, a, out)
	}
	// Every amount printed is an amount: no "" a script would choke on.
	var raw []map[string]any
	_ = json.Unmarshal([]byte(out), &raw)
	for _, a := range raw {
		for _, f := range []string{"balance", "reserved", "available", "spent", "ledger_sum"} {
			if v, ok := a[f]; ok {
				if s, _ := v.(string); s == "" {
					t.Errorf("list --json: %s is %v, not an amount\n%s", f, v, out)
				} else if _, err := money.Parse(s); err != nil {
					t.Errorf("list --json: %s = %q: %v", f, s, err)
				}
			}
		}
	}

	code, out, stderr = c.run("accounts", "list")
	if code != 0 {
		t.Fatalf("list: %d %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !regexp.MustCompile(`^NAME +ID +BALANCE \(USD\) +SPENT +CREATED$`).MatchString(lines[0]) {
		t.Fatalf("list:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^acme +` + regexp.QuoteMeta(acme.ID) + ` +12\.200000 +0\.300000 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`).MatchString(out) {
		t.Errorf("list lacks acme's row:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(keyAcct) + ` +acct_\S+ +0\.000000 +0\.000000 `).MatchString(out) {
		t.Errorf("list lacks %s's row:\n%s", keyAcct, out)
	}
	if code, _, stderr := c.run("accounts", "list", "extra", "--bogus"); code != 2 || !strings.Contains(stderr, "bogus") {
		t.Errorf("bad flag: %d %s", code, stderr)
	}
}

func TestKeysCreateLimits(t *testing.T) {
	c := newCLI(t, "")
	before := time.Now().UTC()
	code, stdout, stderr := c.run("keys", "create", "--group", "default", "--spend-cap", "2.5", "--expires", "30d", "--name", "capped")
	after := time.Now().UTC()
	if code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	if !regexp.MustCompile(`^sk-mg-\S+\n$`).MatchString(stdout) {
		t.Fatalf("stdout should be only the secret: %q", stdout)
	}
	secret := strings.TrimSpace(stdout)
	if strings.Contains(stderr, secret) {
		t.Error("the secret was printed to stderr too")
	}
	// Plain keys for contrast: no cap, no expiry; then two more expiry forms.
	for _, args := range [][]string{
		{"--group", "basic", "--account", "acme"},
		{"--group", "basic", "--account", "acme", "--expires", "2099-01-02T03:04:05+02:00"},
		{"--group", "basic", "--account", "acme", "--expires", "90m", "--spend-cap", "0.000001"},
	} {
		if code, _, stderr := c.run(append([]string{"keys", "create"}, args...)...); code != 0 {
			t.Fatalf("create %v: %d %s", args, code, stderr)
		}
	}

	var keys []store.Key
	c.withDB(func(ctx context.Context, st store.Store) {
		var err error
		if keys, err = st.ListKeys(ctx); err != nil || len(keys) != 4 {
			t.Fatalf("keys: %v %v", keys, err)
		}
	})
	k := keys[0]
	if !strings.HasPrefix(secret, k.Prefix) || k.Name != "capped" || k.Group != "default" {
		t.Errorf("stored key %+v", k)
	}
	if k.SpendCap != 2_500_000 || k.Spent != 0 {
		t.Errorf("spend cap %d spent %d, want 2500000 and 0", k.SpendCap, k.Spent)
	}
	const month = 30 * 24 * time.Hour
	if k.ExpiresAt.Before(before.Add(month).Truncate(time.Microsecond)) || k.ExpiresAt.After(after.Add(month)) {
		t.Errorf("expires %v, want between %v and %v", k.ExpiresAt, before.Add(month), after.Add(month))
	}
	if k.Expired(time.Now()) || !k.Expired(after.Add(month+time.Second)) {
		t.Errorf("expiry %v", k.ExpiresAt)
	}
	if keys[1].SpendCap != 0 || !keys[1].ExpiresAt.IsZero() {
		t.Errorf("plain key has a cap or expiry: %+v", keys[1])
	}
	if want := time.Date(2099, 1, 2, 1, 4, 5, 0, time.UTC); !keys[2].ExpiresAt.Equal(want) {
		t.Errorf("RFC 3339 expiry %v, want %v", keys[2].ExpiresAt, want)
	}
	if d := keys[3].ExpiresAt.Sub(before); keys[3].SpendCap != 1 || d < 90*time.Minute-time.Millisecond || d > time.Since(before)+90*time.Minute {
		t.Errorf("90m key: cap %d, expires %v after start", keys[3].SpendCap, d)
	}

	// A key created without --account gets a new account of its own, empty.
	if k.AccountName != k.ID {
		t.Errorf("account %q, want one named after the key %q", k.AccountName, k.ID)
	}
	own, entries := c.account(k.ID)
	if own.ID != k.AccountID || own.Balance != 0 || own.Spent != 0 || len(entries) != 0 {
		t.Errorf("own account %+v with %d entries", own, len(entries))
	}
	if keys[1].AccountID == k.AccountID || keys[1].AccountID != keys[2].AccountID {
		t.Errorf("accounts: %s %s %s", k.AccountID, keys[1].AccountID, keys[2].AccountID)
	}

	code, out, _ := c.run("keys", "list", "--json")
	var list []keyJSON
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 4 {
		t.Fatalf("list: %d %s", code, out)
	}
	if l := list[0]; l.SpendCap == nil || *l.SpendCap != "2.500000" || l.Spent != "0.000000" || l.ExpiresAt == nil ||
		!l.ExpiresAt.Equal(k.ExpiresAt) || l.RevokedAt != nil || l.Account != k.ID {
		t.Errorf("listed capped key: %s", out)
	}
	if l := list[1]; l.SpendCap != nil || l.ExpiresAt != nil || l.Spent != "0.000000" {
		t.Errorf("listed plain key: %s", out)
	}
	if !strings.Contains(out, `"spend_cap": "2.500000"`) || !strings.Contains(out, `"spend_cap": null`) ||
		!strings.Contains(out, `"expires_at": null`) || !strings.Contains(out, `"spent": "0.000000"`) {
		t.Errorf("list JSON field names:\n%s", out)
	}
	_, out, _ = c.run("keys", "list")
	if !regexp.MustCompile(`(?m)^`+k.ID+` .* 0\.000000 +2\.500000 +active until \d{4}-`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^`+keys[1].ID+` .* 0\.000000 +- +active$`).MatchString(out) {
		t.Errorf("table list:\n%s", out)
	}

	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--expires", "2020-01-01T00:00:00Z"}, "not in the future"},
		{[]string{"--expires", "5x"}, "--expires"},
		{[]string{"--expires", "0d"}, "--expires"},
		{[]string{"--expires", "-1h"}, "--expires"},
		{[]string{"--expires", "0s"}, "--expires"},
		{[]string{"--expires", "2099-01-01"}, "--expires"},
		{[]string{"--spend-cap", "-1"}, "--spend-cap"},
		{[]string{"--spend-cap", "0"}, "--spend-cap"},
		{[]string{"--spend-cap", "1.0000001"}, "--spend-cap"},
		{[]string{"--spend-cap", "ten"}, "--spend-cap"},
	} {
		args := append([]string{"keys", "create", "--group", "default", "--account", "fresh"}, tc.args...)
		code, stdout, stderr := c.run(args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, %q", tc.args, code, stdout, stderr, tc.err)
		}
	}
	c.withDB(func(ctx context.Context, st store.Store) {
		if keys, _ := st.ListKeys(ctx); len(keys) != 4 {
			t.Errorf("refused creates stored keys: %d keys", len(keys))
		}
		if _, err := st.AccountByName(ctx, "fresh"); err == nil {
			t.Error("a refused create made its account")
		}
	})
}
