package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/modelgate/modelgate/internal/browsertest"
)

// browserProblems collects what the page reports that a user never should
// see: uncaught exceptions, console errors, CSP violations.
type browserProblems struct {
	mu      sync.Mutex
	list    []string
	dialogs []string
}

func (p *browserProblems) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, s)
}

func (p *browserProblems) take() ([]string, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, d := p.list, p.dialogs
	p.list, p.dialogs = nil, nil
	return l, d
}

// watch records the tab's problems and accepts every JavaScript dialog
// (the console's confirm() before a revoke), remembering its message.
func watch(t *testing.T, ctx context.Context) *browserProblems {
	p := &browserProblems{}
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				msg += " " + d.Exception.Description
			}
			p.add(fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber, msg))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				p.add("console." + string(ev.Type) + ": " + strings.Join(args, " "))
			}
		case *cdplog.EventEntryAdded:
			if e := ev.Entry; e.Level == cdplog.EntryLevelError || strings.Contains(e.Text, "Content Security Policy") {
				p.add(fmt.Sprintf("log %s/%s: %s (%s)", e.Source, e.Level, e.Text, e.URL))
			}
		case *page.EventJavascriptDialogOpening:
			p.mu.Lock()
			p.dialogs = append(p.dialogs, string(ev.Type)+": "+ev.Message)
			p.mu.Unlock()
			// Listen's callback must not run commands itself.
			go func() {
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			}()
		}
	})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	return p
}

// The user journey in a real browser: sign in, pay a top-up on the fake
// Stripe page, create a key (its name rendered as text), use it, see usage
// and statistics, revoke it after the confirm dialog, the same pages on a
// phone, then the admin pages. Screenshots go to artifacts/screenshots/e2e-*.
func TestConsoleBrowserJourney(t *testing.T) {
	ctx := browsertest.New(t, 1280, 900)
	e := startConsole(t)
	problems := watch(t, ctx) // chromedp enables the Runtime, Log and Page domains itself
	fail := func(what string, err error) {
		t.Helper()
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 1500) : ""`))
		t.Fatalf("%s: %v\nat %s:\n%s", what, err, loc, body)
	}
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(c, actions...); err != nil {
			fail(what, err)
		}
	}
	// check fails the test on the problems seen since the last check.
	check := func(step string) {
		t.Helper()
		l, _ := problems.take()
		for _, p := range l {
			t.Errorf("%s: browser reported %s", step, p)
		}
	}
	text := func(sel string) string {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		s, err := chromedp.Run(c, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			fail("read "+sel, err)
		}
		return s
	}
	value := func(sel string) string {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		s, err := chromedp.Run(c, chromedp.Value(chromedp.CSS(sel)))
		if err != nil {
			fail("value of "+sel, err)
		}
		return s
	}
	location := func() string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			fail("location", err)
		}
		return s
	}
	count := func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+"`"+sel+"`"+`).length`))
		if err != nil {
			fail("count "+sel, err)
		}
		return n
	}
	base := consoleOrigin(t, e.g.URL)
	console := base + "/console/"

	// Sign-in page.
	run("open the console", chromedp.Navigate(console), chromedp.WaitVisible(chromedp.CSS(`a[href="/console/login/github"]`)))
	if got := text(`a[href="/console/login/github"]`); !strings.Contains(got, "Continue with GitHub") {
		t.Fatalf("sign-in button says %q", got)
	}
	browsertest.Screenshot(t, ctx, "e2e-signin-wide")
	check("sign-in page")

	// GitHub sends the browser straight back: the overview.
	run("sign in", chromedp.Click(`//a[contains(., "Continue with GitHub")]`),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/console/topups"]`)))
	if loc := location(); loc != console {
		t.Fatalf("after sign-in the browser is at %s", loc)
	}
	if a, err := e.g.app.Store().AccountByName(context.Background(), "github:octocat"); err != nil || a.Balance != 0 {
		t.Fatalf("account after sign-in: %+v, %v", a, err)
	}
	browsertest.Screenshot(t, ctx, "e2e-overview-wide")
	check("overview")

	// Top up 10 by card on the fake Stripe page.
	topup := `form[action="/console/topups"] `
	run("fill the top-up form",
		chromedp.SendKeys(chromedp.CSS(topup+`input[name="amount"]`), "10"),
		chromedp.Click(chromedp.CSS(topup+`input[name="method"][value="card"]`)),
		chromedp.Click(chromedp.CSS(topup+`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action^="/pay/"] button`)))
	if loc := location(); !strings.HasPrefix(loc, e.pay.URL+"/pay/cs_test_") {
		t.Fatalf("checkout went to %s", loc)
	}
	if got := text(`#amount`); got != "10.00 USD" {
		t.Fatalf("checkout page amount %q", got)
	}
	browsertest.Screenshot(t, ctx, "e2e-stripe-checkout")
	run("pay", chromedp.Click(`//form[starts-with(@action, "/pay/")]//button[normalize-space()="Pay"]`),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/console/topups"]`)))
	if loc := location(); loc != console+"?topup=done" {
		t.Fatalf("after paying the browser is at %s", loc)
	}
	// The webhook is delivered before the redirect, so the balance should
	// show at once; allow a few reloads anyway.
	var main string
	for i := 0; ; i++ {
		main = text("main")
		if strings.Contains(main, "$11.00") {
			break
		}
		if i == 10 {
			t.Fatalf("the overview never showed the balance $11.00:\n%s", main)
		}
		time.Sleep(300 * time.Millisecond)
		run("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`form[action="/console/topups"]`)))
	}
	if !strings.Contains(main, "Thank you") {
		t.Errorf("no confirmation after paying:\n%s", main)
	}
	if got := text("header"); !strings.Contains(got, "$11.00") {
		t.Errorf("the sidebar balance says %q", got)
	}
	browsertest.Screenshot(t, ctx, "e2e-overview-paid")
	check("top-up")

	// A key whose name is markup: shown as text, never as markup.
	const keyName = "<b>bold</b>"
	create := `form[action="/console/keys"] `
	var secret string
	run("create a key",
		chromedp.Navigate(base+"/console/keys"),
		chromedp.WaitVisible(chromedp.CSS(create+`input[name="name"]`)),
		chromedp.SendKeys(chromedp.CSS(create+`input[name="name"]`), keyName),
		chromedp.Click(chromedp.CSS(create+`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`main input[readonly]`)))
	secret = value(`main input[readonly]`)
	if len(secret) < 20 {
		t.Fatalf("secret shown: %q", secret)
	}
	if bolds := count(`main b`); bolds != 0 {
		t.Errorf("the key name was rendered as markup: %d <b> elements in main", bolds)
	}
	if main = text("main"); strings.Count(main, keyName) < 2 { // the "Key created" heading and the table
		t.Errorf("the key name is not shown as text twice:\n%s", main)
	}
	browsertest.Screenshot(t, ctx, "e2e-key-created")
	// The secret is shown once: not after a reload.
	run("reload keys", chromedp.Navigate(base+"/console/keys"), chromedp.WaitVisible(chromedp.CSS(create+`input[name="name"]`)))
	html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html")))
	if err != nil {
		fail("keys html", err)
	}
	if strings.Contains(html, secret) {
		t.Error("the secret is shown again on the keys page")
	}
	check("keys")

	// Use the key.
	for i := range 3 {
		if _, err := e.chat(secret); err != nil {
			t.Fatalf("chat %d with the new key: %v", i, err)
		}
	}

	// Usage: the rows appear (records are written every 20 ms).
	var rows int
	for i := 0; ; i++ {
		run("usage page", chromedp.Navigate(base+"/console/usage"), chromedp.WaitVisible(chromedp.CSS(`main`)))
		rows = count(`main table tbody tr`)
		if rows == 3 {
			break
		}
		if i == 20 {
			t.Fatalf("the usage page shows %d rows, want 3", rows)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if main = text("main"); strings.Count(main, "demo-chat") < 3 || !strings.Contains(main, keyName) {
		t.Errorf("usage rows do not show the model and key name:\n%s", main)
	}
	browsertest.Screenshot(t, ctx, "e2e-usage-wide")
	check("usage")

	// Statistics: SVG charts.
	run("stats page", chromedp.Navigate(base+"/console/stats"), chromedp.WaitVisible(chromedp.CSS(`main`)))
	if svgs := count(`main svg:not(.icon)`); svgs == 0 {
		t.Error("the statistics page has no SVG chart")
	}
	if main = text("main"); !strings.Contains(main, "demo-chat") {
		t.Errorf("statistics do not mention demo-chat:\n%s", main)
	}
	browsertest.Screenshot(t, ctx, "e2e-stats-wide")
	check("stats")

	// Phone-sized: the same pages.
	run("narrow", chromedp.EmulateViewport(390, 844))
	for _, p := range []struct{ path, name string }{
		{"/console/", "overview"}, {"/console/keys", "keys"}, {"/console/usage", "usage"}, {"/console/stats", "stats"},
	} {
		run("narrow "+p.name, chromedp.Navigate(base+p.path), chromedp.WaitVisible(chromedp.CSS("main")))
		overflow, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`))
		if err != nil {
			fail("overflow", err)
		}
		if overflow > 0 {
			t.Logf("NOTE: %s at 390 px scrolls sideways by %d px", p.path, overflow)
		}
		browsertest.Screenshot(t, ctx, "e2e-"+p.name+"-narrow")
		check("narrow " + p.name)
	}
	run("wide", chromedp.EmulateViewport(1280, 900))

	// Revoke the key with its button; the confirm dialog is accepted.
	problems.take()
	run("revoke",
		chromedp.Navigate(base+"/console/keys"),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/revoke"] button`)),
		chromedp.Click(chromedp.CSS(`form[action$="/revoke"] button`)))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(location(), "done=revoked") {
		if time.Now().After(deadline) {
			t.Fatalf("revoking did not finish; at %s", location())
		}
		time.Sleep(50 * time.Millisecond)
	}
	run("revoked page", chromedp.WaitVisible(chromedp.CSS(create+`input[name="name"]`)))
	if _, dialogs := problems.take(); len(dialogs) != 1 || !strings.Contains(dialogs[0], "confirm: Revoke this key?") {
		t.Errorf("dialogs while revoking: %q", dialogs)
	}
	if main = text("main"); !strings.Contains(main, "revoked") {
		t.Errorf("the keys page does not show the key revoked:\n%s", main)
	}
	if revokeButtons := count(`form[action$="/revoke"]`); revokeButtons != 0 {
		t.Errorf("%d revoke buttons left after revoking the only key", revokeButtons)
	}
	browsertest.Screenshot(t, ctx, "e2e-key-revoked")
	_, err = e.chat(secret)
	apiError(t, err, http.StatusUnauthorized, "invalid_api_key")

	// Admin pages, signed in with a login link in the same browser.
	run("admin link", chromedp.Navigate(base+"/console/admin-link?token="+e.adminLink("admin", time.Now())),
		chromedp.WaitVisible(chromedp.CSS(`#admin-link-confirm`)))
	browsertest.Screenshot(t, ctx, "e2e-admin-link")
	run("admin link confirmed", chromedp.Click(chromedp.CSS(`#admin-link-confirm`)), chromedp.WaitVisible(chromedp.CSS(`nav.tabs`)))
	if loc := location(); loc != base+"/console/admin" {
		t.Fatalf("the admin link went to %s", loc)
	}
	for _, s := range []string{"providers", "accounts", "codes", "models", "groups", "errors"} {
		run("admin "+s, chromedp.Navigate(base+"/console/admin?section="+s), chromedp.WaitVisible(chromedp.CSS(`main`)))
		main = text("main")
		switch s {
		case "providers":
			if !strings.Contains(main, "demo") || !strings.Contains(main, "fake-openai") {
				t.Errorf("providers section:\n%s", main)
			}
		case "accounts":
			if !strings.Contains(main, "github:octocat") {
				t.Errorf("accounts section:\n%s", main)
			}
		}
		if s == "providers" || s == "accounts" || s == "codes" {
			browsertest.Screenshot(t, ctx, "e2e-admin-"+s)
		}
		check("admin " + s)
	}
	// Create codes in the browser: they are shown once.
	codes := `form[action="/console/admin/codes"] `
	var shown string
	run("create codes",
		chromedp.Navigate(base+"/console/admin?section=codes"),
		chromedp.WaitVisible(chromedp.CSS(codes+`input[name="batch"]`)),
		chromedp.SendKeys(chromedp.CSS(codes+`input[name="batch"]`), "browser-batch"),
		chromedp.SetValue(chromedp.CSS(codes+`input[name="count"]`), "3"),
		chromedp.SendKeys(chromedp.CSS(codes+`input[name="amount"]`), "5"),
		chromedp.Click(chromedp.CSS(codes+`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`main textarea[readonly]`)))
	shown = value(`main textarea[readonly]`)
	if got := codeRE.FindAllString(shown, -1); len(got) != 3 {
		t.Errorf("codes shown: %q", shown)
	}
	browsertest.Screenshot(t, ctx, "e2e-admin-codes-created")
	check("admin codes")
}

// consoleOrigin is the origin the browser uses for the console, after
// checking that the console's stylesheet is served as CSS (a page without
// it would still pass most checks but look broken in every screenshot).
func consoleOrigin(t *testing.T, gw string) string {
	t.Helper()
	resp, err := http.Get(gw + "/console/static/console.css")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
		t.Fatalf("GET /console/static/console.css: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return gw
}
