package app_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/money"
)

// The journeys of issue 32, in a real browser, every page checked for
// script errors, CSP violations and layout (layoutCheck), screenshots in
// artifacts/screenshots/journey-*:
//
//  1. a new user reads a price on the Models page, tops up on the fake
//     Stripe page, creates a key with the form, runs a playground turn
//     with it and finds the turn's cost in Usage and in the balance
//     history; at 1280 px, then again at 390 px;
//  2. an operator finds that user, sees the same balance and debits it
//     with a reason; the errors and providers pages render;
//  3. the user sees the debit, with its reason and the balance after it,
//     in the balance history and on the overview;
//  4. in English and in Chinese.
func TestConsoleJourney(t *testing.T) {
	j := startJourney(t)
	user := ghUser{ID: 1, Login: "octocat", Email: "octocat@example.com"}
	j.signInUser(user)
	j.check("overview-new")

	j.newUser("laptop backend", true)
	j.resize(390)
	seen, secret := j.newUser("phone", false)
	j.resize(1280)
	// One request the vendor fails (the gateway answers 502), for the
	// operator's errors page: it costs nothing, so the balance the user
	// saw stays.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := j.e.g.client(secret)
	_, err := client.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{
		Model: "err-500", Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("fail, please")}})
	if err == nil {
		t.Fatal("err-500 answered")
	}

	const reason = "refund of a duplicate charge — 重复扣费"
	after := j.operatorDebits(seen, 2500*money.Unit/1000, reason)

	j.signInUser(user)
	for _, v := range []struct {
		lang  string
		width int
	}{{"en", 1280}, {"en", 390}, {"zh-CN", 390}, {"zh-CN", 1280}} {
		j.resize(v.width)
		j.userSeesDebit(v.lang, after, "-$2.50", reason)
	}
	j.open("/console/?lang=en", "main") // the next test's browser is new, but say it anyway
}

// usageCharge is what the playground showed for one turn.
type usageCharge struct {
	cost, requestID string
}

// newUser is journey 1 for the signed-in user at the tab's width: the
// price of demo-chat, a $10 card top-up (with the first top-up's 10%
// bonus when first), a key named name, a playground turn with it, its
// cost in Usage and in the balance history. It returns the balance the
// sidebar shows at the end and the key's secret.
func (j *journey) newUser(name string, first bool) (string, string) {
	j.t.Helper()
	// Prices before buying: demo-chat is priced $10 in, $30 out per 1M.
	j.open("/console/models", ".models-table")
	cells := eval[[]string](j, `(() => { for (const tr of document.querySelectorAll('.models-table tbody tr')) {
  if (tr.querySelector('.model-id').textContent.trim() === 'demo-chat') return Array.from(tr.cells).map(c => c.textContent.replace(/\s+/g, ' ').trim()); }
  return []; })()`)
	if len(cells) != 7 || cells[3] != "$10.00" || cells[5] != "$30.00" {
		j.t.Errorf("the Models page's demo-chat row reads %q, want $10.00 input and $30.00 output", cells)
	}
	j.check("models")

	j.topUp(first)
	secret := j.createKey(name)
	turn := j.playgroundTurn(name)

	// The same request on the Usage page, with the same cost.
	var row []string
	j.waitFor("the playground turn in Usage", func() bool {
		j.open("/console/usage", "main")
		row = eval[[]string](j, rowCells(".usage-table", name))
		return len(row) == 7
	})
	if !strings.Contains(row[1], "demo-chat") || row[5] != turn.cost {
		j.t.Errorf("usage row %q, want demo-chat costing %s", row, turn.cost)
	}
	turn.requestID = eval[string](j, `(() => { for (const tr of document.querySelectorAll('.usage-table tbody tr'))
  if (tr.textContent.includes(`+jsString(name)+`)) return tr.cells[0].title; return ''; })()`)
	if turn.requestID == "" || strings.Contains(j.text("main"), secret) {
		j.t.Errorf("usage row: request id %q, or the secret is shown", turn.requestID)
	}
	j.check("usage")

	// The charge in the balance history: today's usage, the balance after
	// it the sidebar's.
	j.open("/console/ledger", ".ledger-table")
	row = eval[[]string](j, `Array.from(document.querySelector('.ledger-table tbody tr').cells).map(c => c.textContent.replace(/\s+/g, ' ').trim())`)
	shown, _ := j.sidebarBalance()
	now := time.Now().UTC()
	if len(row) != 5 || row[1] != "Usage" || row[4] != shown ||
		!strings.Contains(row[0], now.Format(time.DateOnly)) && !strings.Contains(row[0], now.Format("Jan 2, 2006")) {
		j.t.Errorf("the newest ledger row reads %q; want today's usage with the balance after it %s", row, shown)
	}
	if first && (row[3] != "-"+turn.cost || !strings.Contains(row[2], turn.requestID)) {
		j.t.Errorf("the only charge reads %q, want -%s for request %s", row, turn.cost, turn.requestID)
	}
	j.check("ledger")
	return shown, secret
}

// topUp pays $10 by card on the fake Stripe page and waits for the
// overview to show the new balance (plus the 10% bonus when first).
func (j *journey) topUp(first bool) {
	j.t.Helper()
	j.open("/console/", `form[action="/console/topups"]`)
	_, before := j.sidebarBalance()
	want := before + 10*money.Unit
	if first {
		want += money.Unit
	}
	form := `form[action="/console/topups"] `
	j.run("fill the top-up form",
		chromedp.SendKeys(chromedp.CSS(form+`input[name="amount"]`), "10"),
		chromedp.Click(chromedp.CSS(form+`input[name="method"][value="card"]`)),
		chromedp.Click(chromedp.CSS(form+`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action^="/pay/"] button`)))
	if loc := j.location(); !strings.HasPrefix(loc, j.e.pay.URL+"/pay/cs_test_") {
		j.t.Fatalf("checkout went to %s", loc)
	}
	if got := j.text(`#amount`); got != "10.00 USD" {
		j.t.Errorf("checkout page amount %q", got)
	}
	j.problems.take() // the fake Stripe page is not the console's
	j.run("pay", chromedp.Click(`//form[starts-with(@action, "/pay/")]//button[normalize-space()="Pay"]`),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/console/topups"]`)))
	j.waitFor("the paid balance "+web.Money(want, "USD"), func() bool {
		j.open("/console/?topup=done", `form[action="/console/topups"]`)
		_, got := j.sidebarBalance()
		return got == want
	})
	if hero := j.text(".tile-hero .tile-value"); hero != web.Money(want, "USD") {
		j.t.Errorf("the overview's balance reads %q, want %s", hero, web.Money(want, "USD"))
	}
	j.check("topup-paid")
}

// createKey creates a key named name with the form (post/redirect/get),
// checks its secret is shown once, and returns the secret.
func (j *journey) createKey(name string) string {
	j.t.Helper()
	j.open("/console/keys", `#key-name`)
	j.redirects.take()
	j.run("create a key",
		chromedp.SendKeys(chromedp.CSS(`#key-name`), name),
		chromedp.Click(chromedp.CSS(`form[action="/console/keys"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-key-secret`)))
	j.wantSeeOther("/console/keys", "/console/keys")
	secret := eval[string](j, `document.querySelector('#new-key-secret').value`)
	if len(secret) < 20 || !strings.Contains(j.text("#newkey-h"), name) {
		j.t.Fatalf("key created: secret %q under %q", secret, j.text("#newkey-h"))
	}
	j.check("key-created")
	// Reloading the page shows neither the secret nor a second key.
	j.run("reload the keys page", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#key-name`)))
	if html := eval[string](j, `document.documentElement.outerHTML`); strings.Contains(html, secret) {
		j.t.Error("the secret is shown again after a reload")
	}
	if n := eval[int](j, `Array.from(document.querySelectorAll('.keys-table .key-name')).filter(e => e.textContent === `+jsString(name)+`).length`); n != 1 {
		j.t.Errorf("%d keys named %q after a reload, want 1", n, name)
	}
	return secret
}

// costShown finds the cost in a playground turn's meta line.
var costShown = regexp.MustCompile(`cost (\$[0-9.]+)`)

// playgroundTurn runs one streamed turn of demo-chat as the key named
// name and returns the cost the playground shows.
func (j *journey) playgroundTurn(name string) usageCharge {
	j.t.Helper()
	j.open("/console/playground", `#play-input`)
	before := j.text(".who-sub")
	picked := eval[string](j, `(() => {
  const k = document.querySelector('#play-key'), o = Array.from(k.options).find(o => o.textContent === `+jsString(name)+`);
  if (!o) return 'no key option';
  k.value = o.value; k.dispatchEvent(new Event('change', {bubbles: true}));
  const m = document.querySelector('#play-model');
  if (!Array.from(m.options).some(o => o.value === 'demo-chat')) return 'no demo-chat';
  m.value = 'demo-chat'; m.dispatchEvent(new Event('change', {bubbles: true}));
  return k.selectedOptions[0].textContent + '/' + m.value; })()`)
	if picked != name+"/demo-chat" {
		j.t.Fatalf("picking the key and model: %s", picked)
	}
	j.run("send a message",
		chromedp.SendKeys(chromedp.CSS(`#play-input`), "Hello from the journey"),
		chromedp.Click(chromedp.CSS(`[data-play-send]`)))
	var meta string
	j.waitFor("the turn's cost", func() bool {
		meta = eval[string](j, `(() => { const m = document.querySelector('.turn-assistant .turn-meta'); return m ? m.textContent : ''; })()`)
		return costShown.MatchString(meta)
	})
	if answer := eval[string](j, `document.querySelector('.turn-assistant .turn-text').textContent`); strings.TrimSpace(answer) == "" {
		j.t.Errorf("the streamed answer is empty (meta %q)", meta)
	}
	c := usageCharge{cost: costShown.FindStringSubmatch(meta)[1]}
	if j.moneyIn(c.cost) <= 0 {
		j.t.Errorf("the turn cost %s, want more than nothing", c.cost)
	}
	// The sidebar's balance follows the charge without a reload.
	j.waitFor("the sidebar balance after the turn", func() bool { return j.text(".who-sub") != before })
	j.check("playground")
	return c
}

// operatorDebits is journey 2: an operator finds octocat, sees balance
// (as the user saw it), debits amount with reason and sees the new
// balance, which it returns; the errors and providers pages render.
func (j *journey) operatorDebits(balance string, amount money.Micros, reason string) string {
	j.t.Helper()
	j.signInOperator()
	j.open("/console/admin?section=accounts", `#acc-q`)
	j.run("search accounts",
		chromedp.SendKeys(chromedp.CSS(`#acc-q`), "octocat"),
		chromedp.Click(chromedp.CSS(`form[role="search"] button[type="submit"]`)))
	j.waitLocation("q=octocat")
	j.run("results", chromedp.WaitVisible(chromedp.CSS(`.accounts-table`)))
	if rows := eval[[]string](j, `Array.from(document.querySelectorAll('.accounts-table tbody tr')).map(r => r.cells[0].textContent.trim())`); len(rows) != 1 || !strings.HasPrefix(rows[0], "github:octocat") {
		j.t.Errorf("searching for octocat finds %q", rows)
	}
	j.check("admin-search")
	j.run("open the account", chromedp.Click(`//table[contains(@class, "accounts-table")]//a[normalize-space()="github:octocat"]`),
		chromedp.WaitVisible(chromedp.CSS(`#adj-amount`)))
	if got := j.text(".tile-hero .tile-value"); got != balance {
		j.t.Errorf("the operator sees a balance of %s, the user saw %s", got, balance)
	}
	j.check("admin-account")

	j.redirects.take()
	j.run("debit",
		chromedp.SendKeys(chromedp.CSS(`#adj-amount`), "-"+web.Amount(amount)),
		chromedp.SendKeys(chromedp.CSS(`#adj-reason`), reason),
		chromedp.Click(chromedp.CSS(`form[action$="/adjust"] button[type="submit"]`)))
	j.waitLocation("done=adjusted")
	j.wantSeeOther("/adjust", "/console/admin/accounts/")
	j.run("the account again", chromedp.WaitVisible(chromedp.CSS(`#adj-amount`)))
	want := web.Money(j.moneyIn(balance)-amount, "USD")
	if got := j.text(".tile-hero .tile-value"); got != want {
		j.t.Errorf("after the debit the operator sees %s, want %s", got, want)
	}
	if main := j.text("main"); !strings.Contains(main, reason) {
		j.t.Errorf("the account's ledger does not show the reason %q:\n%s", reason, main)
	}
	j.check("admin-debited")

	// The failed request on the errors page, its account a link to the
	// account page.
	var row []string
	j.waitFor("the failed request on the errors page", func() bool {
		j.open("/console/admin?section=errors", "main")
		row = eval[[]string](j, rowCells(".errors-table", "err-500"))
		return len(row) == 8
	})
	if row[1] != "github:octocat" || row[2] != "phone" || row[4] != "fake-openai" || row[5] != "502 upstream_error" || !strings.HasPrefix(row[7], "req_") {
		j.t.Errorf("the errors page's row reads %q", row)
	}
	if href := eval[string](j, `document.querySelector('.errors-table tbody a').getAttribute('href')`); href != "/console/admin/accounts/github:octocat" {
		j.t.Errorf("the error's account links to %q", href)
	}
	for _, s := range []struct{ section, tab, has string }{
		{"errors", "Errors", "err-500"}, {"providers", "Providers", "fake-openai"},
	} {
		j.open("/console/admin?section="+s.section, "main")
		if tab := j.text(`nav.tabs a[aria-current="page"]`); tab != s.tab {
			j.t.Errorf("the %s page's current tab is %q", s.section, tab)
		}
		if main := j.text("main"); !strings.Contains(main, s.has) {
			j.t.Errorf("the %s page lacks %q:\n%s", s.section, s.has, main)
		}
		j.check("admin-" + s.section)
	}
	return want
}

// userSeesDebit is journey 3 in lang: the balance history's newest row is
// the adjustment of amount with its reason and the balance after it, the
// sidebar and the overview say the same.
func (j *journey) userSeesDebit(lang, balance, amount, reason string) {
	j.t.Helper()
	words := map[string][3]string{ // the sidebar's label, the kind, the page title
		"en":    {"Balance", "Adjustment", "Balance history"},
		"zh-CN": {"余额", "调整", "余额明细"},
	}[lang]
	j.open("/console/ledger?lang="+lang, ".ledger-table")
	if got := eval[string](j, `document.documentElement.lang`); got != lang {
		j.t.Errorf("<html lang=%q>, want %q", got, lang)
	}
	side := j.text(".who-sub")
	if !strings.Contains(side, words[0]) || !strings.Contains(side, balance) {
		j.t.Errorf("%s: the sidebar says %q, want %s %s", lang, side, words[0], balance)
	}
	if h1 := j.text("main h1"); h1 != words[2] {
		j.t.Errorf("%s: the ledger page's title is %q", lang, h1)
	}
	row := eval[[]string](j, `Array.from(document.querySelector('.ledger-table tbody tr').cells).map(c => c.textContent.replace(/\s+/g, ' ').trim())`)
	if len(row) != 5 || row[1] != words[1] || !strings.Contains(row[2], reason) || row[3] != amount || row[4] != balance {
		j.t.Errorf("%s: the newest ledger row reads %q; want %s %s %q, balance after %s", lang, row, words[1], amount, reason, balance)
	}
	name := "debit-ledger-" + lang
	j.check(name)

	j.open("/console/?lang="+lang, "#history-h")
	if hero := j.text(".tile-hero .tile-value"); hero != balance {
		j.t.Errorf("%s: the overview's balance reads %s, want %s", lang, hero, balance)
	}
	row = eval[[]string](j, `(() => { const tr = document.querySelector('section[aria-labelledby="history-h"] tbody tr');
  return tr ? Array.from(tr.cells).map(c => c.textContent.replace(/\s+/g, ' ').trim()) : []; })()`)
	if len(row) != 4 || row[1] != words[1] || !strings.Contains(row[2], reason) || row[3] != amount {
		j.t.Errorf("%s: the overview's credits card's newest row reads %q; want %s %s %q", lang, row, words[1], amount, reason)
	}
	j.check("debit-overview-" + lang)
}
