package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/modelgate/modelgate/internal/browsertest"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// layoutWidths are the window widths every console page is checked at: a
// phone, a tablet, a laptop.
var layoutWidths = []int{390, 768, 1280}

// layoutCheck is run in the page: it lists what a reader would find
// broken. The page must not scroll sideways; no element may stick out of
// the box that holds it unless a box between them scrolls (a wide table in
// its scroll wrapper); no table column may be hidden; no error code may be
// cut off.
const layoutCheck = `(() => {
  const bad = [];
  const root = document.documentElement;
  const vw = root.clientWidth;
  if (root.scrollWidth > vw + 1) bad.push('the page scrolls sideways by ' + (root.scrollWidth - vw) + ' px');
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '') +
    ' "' + (el.textContent || '').trim().slice(0, 40) + '"';
  const scrolls = el => { const o = getComputedStyle(el).overflowX; return o === 'auto' || o === 'scroll'; };
  const clips = el => { const o = getComputedStyle(el).overflowX; return o === 'hidden' || o === 'clip'; };
  const inScroller = el => { for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) if (scrolls(p)) return p; return null; };
  const skip = el => el.closest('svg, .sr-only, .skip, script, style, template, option, datalist, details:not([open]) > :not(summary)');
  for (const el of document.querySelectorAll('body *')) {
    if (skip(el)) continue;
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || cs.visibility === 'hidden' || cs.position === 'fixed' || cs.position === 'absolute') continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const sc = inScroller(el);
    if (!sc && (r.right > vw + 1 || r.left < -1)) { bad.push(name(el) + ' sticks out of the window (' + Math.round(r.left) + '..' + Math.round(r.right) + ' of ' + vw + ')'); continue; }
    const p = el.parentElement;
    if (!p || p === document.body || sc === p || scrolls(p)) continue;
    const pr = p.getBoundingClientRect();
    if (!sc && r.right > pr.right + 2 && pr.width > 0) bad.push(name(el) + ' is ' + Math.round(r.right - pr.right) + ' px wider than ' + name(p));
  }
  // A box that scrolls must say so: a hidden scroll bar hides what is past it
  // (the admin tabs read "Adm"); on a phone no table may need sideways
  // scrolling (rows stack instead).
  for (const el of document.querySelectorAll('body *')) {
    if (skip(el) || el.clientWidth <= 1 || el.scrollWidth <= el.clientWidth + 1) continue;
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || el.closest('.sr-only, .skip')) continue;
    if (clips(el) && !(cs.textOverflow === 'ellipsis' && (el.title || el.closest('[title]')))) bad.push('clipped: ' + name(el) + ' shows ' + el.clientWidth + ' of ' + el.scrollWidth + ' px');
    if (scrolls(el) && cs.scrollbarWidth === 'none') bad.push('scrolls with no scroll bar: ' + name(el));
    if (scrolls(el) && vw < 500 && el.querySelector('table')) bad.push('a table needs sideways scrolling on a phone: ' + name(el));
  }
  for (const th of document.querySelectorAll('th')) {
    if (getComputedStyle(th).display === 'none') bad.push('hidden column ' + name(th));
  }
  for (const el of document.querySelectorAll('.errcode, td code')) {
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible') bad.push('cut off: ' + name(el));
  }
  return Array.from(new Set(bad)).slice(0, 15);
})()`

// layoutPage is a console page to check, and what shows it loaded.
type layoutPage struct {
	name, path string
	ready      string // a CSS selector present once the page is there
}

// TestConsoleLayoutEveryWidth opens every console page, signed in as a
// user with data and then as an operator, in English and Chinese at 390,
// 768 and 1280 px: nothing sticks out or is hidden, no JavaScript error,
// no CSP violation. Screenshots: artifacts/screenshots/layout-*.
func TestConsoleLayoutEveryWidth(t *testing.T) {
	ctx := browsertest.New(t, 1280, 900)
	e := startConsole(t)
	problems := watch(t, ctx)
	base := consoleOrigin(t, e.g.URL)
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(c, actions...); err != nil {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 1500) : ""`))
			t.Fatalf("%s: %v\n%s", what, err, body)
		}
	}

	// A user with a balance from a code and an operator's credit, a key
	// and usage, signed in through the fake GitHub in the browser.
	check := func(pages []layoutPage) {
		t.Helper()
		for _, w := range layoutWidths {
			run(fmt.Sprint("viewport ", w), chromedp.EmulateViewport(int64(w), 900))
			for _, lang := range []string{"en", "zh-CN"} {
				for _, p := range pages {
					sep := "?"
					if strings.Contains(p.path, "?") {
						sep = "&"
					}
					run(p.name, chromedp.Navigate(base+p.path+sep+"lang="+lang), chromedp.WaitVisible(chromedp.CSS(p.ready)))
					got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.lang`))
					if err != nil || got != lang {
						t.Errorf("%s: <html lang=%q>, want %q (%v)", p.name, got, lang, err)
					}
					bad, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](layoutCheck))
					if err != nil {
						t.Fatalf("%s: layout check: %v", p.name, err)
					}
					for _, b := range bad {
						t.Errorf("%s at %d px (%s): %s", p.name, w, lang, b)
					}
					l, _ := problems.take()
					for _, pr := range l {
						if p.name == "not-found" && strings.Contains(pr, "status of 404") {
							continue // the page's own status
						}
						t.Errorf("%s at %d px (%s): browser reported %s", p.name, w, lang, pr)
					}
					browsertest.Screenshot(t, ctx, fmt.Sprintf("layout-%s-%d-%s", p.name, w, lang))
				}
			}
		}
	}
	// Signed out: the sign-in page.
	check([]layoutPage{{"signin", "/console/", "main"}})

	user := ghUser{ID: 4242, Login: "octocat", Email: "octocat@example.com"}
	e.gh.as(user)
	run("sign in", chromedp.Navigate(base+"/console/login/github"), chromedp.WaitVisible(chromedp.CSS(`main`)))
	acct := e.account("github:octocat")
	st := e.g.app.Store()
	ctxb := context.Background()
	for _, le := range []store.LedgerEntry{
		{AccountID: acct.ID, Kind: store.KindAdjustment, Amount: 25 * money.Unit, Note: "welcome credit for the pilot", Ref: "layout-adj-1", Time: time.Now()},
		{AccountID: acct.ID, Kind: store.KindBonus, Amount: 3 * money.Unit, Note: "bonus", Ref: "layout-bonus-1", Time: time.Now()},
	} {
		if _, err := st.Post(ctxb, le); err != nil {
			t.Fatal(err)
		}
	}
	api := e.signIn(user)
	key := api.createKey("a rather long key name for the production backend", "default")
	for range 3 {
		if _, err := e.chat(key.Key); err != nil {
			t.Fatalf("chat: %v", err)
		}
	}
	eventually(t, "usage recorded", func() bool { return len(api.usage("")) >= 3 })

	userPages := []layoutPage{
		{"overview", "/console/", "main"},
		{"models", "/console/models", "main"},
		{"keys", "/console/keys", "main"},
		{"playground", "/console/playground", "#play-input"},
		{"usage", "/console/usage", "main"},
		{"ledger", "/console/ledger", "main"},
		{"stats", "/console/stats", "main"},
		{"not-found", "/console/keys/key_nope", "main"},
	}
	adminPages := []layoutPage{
		{"admin-providers", "/console/admin?section=providers", "main"},
		{"admin-models", "/console/admin?section=models", "main"},
		{"admin-groups", "/console/admin?section=groups", "main"},
		{"admin-accounts", "/console/admin?section=accounts", "main"},
		{"admin-account", "/console/admin/accounts/github:octocat", "main"},
		{"admin-account-ledger", "/console/admin/accounts/github:octocat/ledger", "main"},
		{"admin-account-usage", "/console/admin/accounts/github:octocat/usage", "main"},
		{"admin-codes", "/console/admin?section=codes", "main"},
		{"admin-errors", "/console/admin?section=errors", "main"},
	}

	check(userPages)

	run("admin link", chromedp.Navigate(base+"/console/admin-link?token="+e.adminLink("admin", time.Now())),
		chromedp.WaitVisible(chromedp.CSS(`#admin-link-confirm`)),
		chromedp.Click(chromedp.CSS(`#admin-link-confirm`)),
		// The confirmation page has a <main> too: wait for the admin page's
		// tabs, or the next navigation races the form's redirect (ERR_ABORTED).
		chromedp.WaitVisible(chromedp.CSS(`nav.tabs`)))
	check(adminPages)
	// Back to English for whoever uses the browser next.
	run("english", chromedp.Navigate(base+"/console/?lang=en"))
}
