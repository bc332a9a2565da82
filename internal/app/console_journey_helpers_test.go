package app_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/modelgate/modelgate/internal/browsertest"
	"github.com/modelgate/modelgate/internal/money"
)

// journey drives one browser tab through the console as a person would,
// and fails the test on what that person should never meet: a script
// error, a CSP violation, a page wider than the window.
type journey struct {
	t         *testing.T
	ctx       context.Context
	e         *consoleEnv
	base      string
	problems  *browserProblems
	redirects *redirectLog
	width     int
}

// redirect is one HTTP redirect the browser followed.
type redirect struct {
	status   int64
	from, to string
}

// redirectLog records every redirect the tab follows, so a form's
// post/redirect/get can be checked from the browser's side.
type redirectLog struct {
	mu   sync.Mutex
	list []redirect
}

// take returns the redirects seen since the last take.
func (l *redirectLog) take() []redirect {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.list
	l.list = nil
	return r
}

// startJourney opens a 1280 px browser on a fresh console.
func startJourney(t *testing.T) *journey {
	ctx := browsertest.New(t, 1280, 900)
	e := startConsole(t)
	j := &journey{t: t, ctx: ctx, e: e, problems: watch(t, ctx), redirects: &redirectLog{}, width: 1280}
	err := chromedp.Listen(ctx, func(ev any) {
		if ev, ok := ev.(*network.EventRequestWillBeSent); ok && ev.RedirectResponse != nil {
			j.redirects.mu.Lock()
			j.redirects.list = append(j.redirects.list, redirect{status: ev.RedirectResponse.Status, from: ev.RedirectResponse.URL, to: ev.Request.URL})
			j.redirects.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	j.base = consoleOrigin(t, e.g.URL)
	return j
}

// fail stops the test with what the page showed.
func (j *journey) fail(what string, err error) {
	j.t.Helper()
	loc, _ := chromedp.Run(j.ctx, chromedp.Location())
	body, _ := chromedp.Run(j.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ""`))
	j.t.Fatalf("%s (at %d px): %v\nat %s:\n%s", what, j.width, err, loc, body)
}

// run runs actions with a 20 s limit.
func (j *journey) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	j.t.Helper()
	c, cancel := context.WithTimeout(j.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		j.fail(what, err)
	}
}

// open navigates to path and waits for ready (a CSS selector).
func (j *journey) open(path, ready string) {
	j.t.Helper()
	j.run("open "+path, chromedp.Navigate(j.base+path), chromedp.WaitVisible(chromedp.CSS(ready)))
}

// resize sets the viewport's width.
func (j *journey) resize(width int) {
	j.t.Helper()
	j.width = width
	j.run("resize", chromedp.EmulateViewport(int64(width), 900))
}

// eval evaluates js in the page.
func eval[T any](j *journey, js string) T {
	j.t.Helper()
	c, cancel := context.WithTimeout(j.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](js))
	if err != nil {
		j.fail(js, err)
	}
	return v
}

// text is the visible text of the first element sel selects.
func (j *journey) text(sel string) string {
	j.t.Helper()
	c, cancel := context.WithTimeout(j.ctx, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(c, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		j.fail("read "+sel, err)
	}
	return strings.TrimSpace(s)
}

func (j *journey) location() string {
	j.t.Helper()
	s, err := chromedp.Run(j.ctx, chromedp.Location())
	if err != nil {
		j.fail("location", err)
	}
	return s
}

// waitFor polls cond every 100 ms for up to 10 s.
func (j *journey) waitFor(what string, cond func() bool) {
	j.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			j.fail(what, context.DeadlineExceeded)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitLocation waits until the tab's URL contains part.
func (j *journey) waitLocation(part string) {
	j.t.Helper()
	j.waitFor("reach "+part, func() bool { return strings.Contains(j.location(), part) })
}

// wantSeeOther checks that the tab followed a 303 from a URL ending in
// from to a URL containing to since the last call.
func (j *journey) wantSeeOther(from, to string) {
	j.t.Helper()
	got := j.redirects.take()
	for _, r := range got {
		if strings.HasSuffix(r.from, from) && strings.Contains(r.to, to) {
			if r.status != 303 {
				j.t.Errorf("%s answered %d, want 303 See Other", r.from, r.status)
			}
			return
		}
	}
	j.t.Errorf("no redirect from …%s to …%s; redirects: %+v", from, to, got)
}

// check fails the test on the browser's problems and the page's layout
// problems (layoutCheck), then saves a screenshot journey-NAME-WIDTH.
func (j *journey) check(name string) {
	j.t.Helper()
	bad := eval[[]string](j, layoutCheck)
	for _, b := range bad {
		j.t.Errorf("%s at %d px: %s", name, j.width, b)
	}
	l, _ := j.problems.take()
	for _, p := range l {
		j.t.Errorf("%s at %d px: browser reported %s", name, j.width, p)
	}
	browsertest.Screenshot(j.t, j.ctx, "journey-"+name+"-"+strconv.Itoa(j.width))
}

// shownMoney finds the first amount written as the console writes money
// ("$10.99", "-$2.50") in s.
var shownMoney = regexp.MustCompile(`-?\$[0-9]+\.[0-9]+`)

// moneyIn parses the first amount shown in s.
func (j *journey) moneyIn(s string) money.Micros {
	j.t.Helper()
	m := shownMoney.FindString(s)
	if m == "" {
		j.t.Fatalf("no amount in %q", s)
	}
	neg := strings.HasPrefix(m, "-")
	v, err := money.Parse(strings.TrimPrefix(strings.TrimPrefix(m, "-"), "$"))
	if err != nil {
		j.t.Fatalf("amount %q: %v", m, err)
	}
	if neg {
		v = -v
	}
	return v
}

// sidebarBalance is the balance the sidebar shows, as text and as money.
func (j *journey) sidebarBalance() (string, money.Micros) {
	j.t.Helper()
	s := j.text(".who-sub")
	return shownMoney.FindString(s), j.moneyIn(s)
}

// signInUser signs the tab in as u through the fake GitHub.
func (j *journey) signInUser(u ghUser) {
	j.t.Helper()
	j.e.gh.as(u)
	j.open("/console/login/github", `form[action="/console/topups"]`)
	if loc := j.location(); loc != j.base+"/console/" {
		j.t.Fatalf("after signing in the browser is at %s", loc)
	}
}

// signInOperator signs the tab in with a new admin login link.
func (j *journey) signInOperator() {
	j.t.Helper()
	j.open("/console/admin-link?token="+j.e.adminLink("admin", time.Now()), `#admin-link-confirm`)
	j.run("confirm the admin link", chromedp.Click(chromedp.CSS(`#admin-link-confirm`)), chromedp.WaitVisible(chromedp.CSS(`nav.tabs`)))
	if loc := j.location(); loc != j.base+"/console/admin" {
		j.t.Fatalf("the admin link went to %s", loc)
	}
}

// rowCells is the JavaScript that returns the text of each cell of the
// first row of table sel whose text contains %s (JSON-quoted), or [].
func rowCells(table, contains string) string {
	return `(() => { for (const tr of document.querySelectorAll(` + jsString(table+` tbody tr`) + `)) {
  if (tr.textContent.includes(` + jsString(contains) + `)) return Array.from(tr.cells).map(c => c.textContent.replace(/\s+/g, ' ').trim()); }
  return []; })()`
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`, "<", `\x3c`)
	return `'` + r.Replace(s) + `'`
}
