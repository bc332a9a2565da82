package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/modelgate/modelgate/internal/money"
)

func mustPages(t testing.TB) *Pages {
	t.Helper()
	p, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func render(t *testing.T, p *Pages, name string, data any) (string, *html.Node) {
	t.Helper()
	rec := httptest.NewRecorder()
	p.Render(rec, http.StatusOK, name, data)
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: status %d: %s", name, rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("%s: Content-Type %q", name, ct)
	}
	body := rec.Body.String()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return body, doc
}

func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func find(doc *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	walk(doc, func(n *html.Node) {
		if match(n) {
			out = append(out, n)
		}
	})
	return out
}

func hasAncestor(n *html.Node, tag string) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.Data == tag {
			return true
		}
	}
	return false
}

// checkPage asserts what every page must satisfy: the CSP's rules (no inline
// style or script, no event handler attributes), POST forms carrying the
// CSRF token, labelled inputs, unique ids.
func checkPage(t *testing.T, slug, body string, doc *html.Node) {
	t.Helper()
	if strings.Contains(body, "<script>alert(1)</script>") {
		t.Errorf("%s: unescaped key name", slug)
	}
	ids := map[string]bool{}
	labels := map[string]bool{}
	walk(doc, func(n *html.Node) {
		if n.Data == "label" {
			if f, ok := attr(n, "for"); ok {
				labels[f] = true
			}
		}
	})
	walk(doc, func(n *html.Node) {
		for _, a := range n.Attr {
			if a.Key == "style" {
				t.Errorf("%s: style attribute on <%s>", slug, n.Data)
			}
			if strings.HasPrefix(a.Key, "on") {
				t.Errorf("%s: event handler %s on <%s>", slug, a.Key, n.Data)
			}
			if a.Key == "id" {
				if ids[a.Val] {
					t.Errorf("%s: duplicate id %q", slug, a.Val)
				}
				ids[a.Val] = true
			}
			if (a.Key == "href" || a.Key == "src" || a.Key == "action") && (strings.Contains(a.Val, "//") || strings.HasPrefix(strings.ToLower(a.Val), "javascript:")) {
				t.Errorf("%s: external or script URL %s=%q", slug, a.Key, a.Val)
			}
		}
		switch n.Data {
		case "style":
			t.Errorf("%s: <style> block", slug)
		case "script":
			if src, _ := attr(n, "src"); src == "" || n.FirstChild != nil {
				t.Errorf("%s: inline <script>", slug)
			}
		case "form":
			method, _ := attr(n, "method")
			action, _ := attr(n, "action")
			if strings.EqualFold(method, "get") {
				if action != "/console/usage" && action != "/console/ledger" && action != "/console/admin" && action != "/console/models" {
					t.Errorf("%s: GET form to %s", slug, action)
				}
				return
			}
			if method != "post" {
				t.Errorf("%s: form %s has method %q", slug, action, method)
			}
			if action == "/console/admin-link" { // no session yet: the link's token authenticates it
				if len(find(n, func(c *html.Node) bool { name, _ := attr(c, "name"); return c.Data == "input" && name == "token" })) != 1 {
					t.Errorf("%s: the admin link form carries no token", slug)
				}
				return
			}
			tokens := find(n, func(c *html.Node) bool {
				name, _ := attr(c, "name")
				typ, _ := attr(c, "type")
				return c.Data == "input" && name == "csrf_token" && typ == "hidden"
			})
			if len(tokens) != 1 {
				t.Errorf("%s: form %s has %d csrf_token inputs", slug, action, len(tokens))
			} else if v, _ := attr(tokens[0], "value"); v != "csrf-token-123" {
				t.Errorf("%s: form %s csrf_token %q", slug, action, v)
			}
		case "input", "select", "textarea":
			if typ, _ := attr(n, "type"); typ == "hidden" {
				return
			}
			id, _ := attr(n, "id")
			if !labels[id] && !hasAncestor(n, "label") {
				t.Errorf("%s: <%s name=%v> has no label", slug, n.Data, n.Attr)
			}
		case "button":
			if typ, _ := attr(n, "type"); typ != "submit" && typ != "button" {
				t.Errorf("%s: button without an explicit type", slug)
			}
		}
	})
	if len(find(doc, func(n *html.Node) bool { return n.Data == "main" })) != 1 {
		t.Errorf("%s: want one <main>", slug)
	}
	if !strings.Contains(body, `class="skip" href="#main"`) {
		t.Errorf("%s: no skip link", slug)
	}
}

func TestRenderEveryPage(t *testing.T) {
	p := mustPages(t)
	wants := map[string][]string{
		"signin":               {`href="/console/login/github"`, "Continue with GitHub", `role="alert"`, "Sign-in failed; try again."},
		"signin-empty":         {"Sign-in is not configured", "operator"},
		"overview":             {"$42.50", "$1.20 held", `action="/console/topups"`, `name="method" value="card"`, "<span>Card</span>", "<span>Alipay</span>", `min="5.00"`, `max="1000.00"`, `step="0.01"`, "10% on top", "up to $50.00", `action="/console/redeem"`, `name="code"`, "badge-warn", `href="/console/login/google?link=1"`, "octocat@github.com", `action="/console/logout"`, `role="img"`, "Redeemed code", "+$10.00", "Adjusted by the operator", "-$3.50", "duplicate credit of Nov 20 &lt;script&gt;", `href="/console/ledger"`, "Balance history →", "Payment of $20.00 via Card, waiting for confirmation"},
		"overview-empty":       {"Top-ups are not enabled", "No top-ups yet", "$0.00"},
		"ledger":               {`method="get" action="/console/ledger"`, `<option value="refund">Refund</option>`, "Usage · 1,234 requests", "Usage · 1 request", "req_01JDX8K2ZQ4M7R3V9T6W5Y1B0C", "Nov 24, 2026", "welcome credit", "Payment refunded or disputed", "-$20.00", "+$50.00", "Balance after", "$42.50", "$1.20 is held right now", `href="/console/api/ledger.csv" download`, `href="/console/ledger?cursor=bGVkZ2VyOjkx"`, "First page", `href="/console/ledger" aria-current="page"`},
		"ledger-empty":         {"Nothing of this kind yet", `<option value="refund" selected>`, "Show every kind"},
		"overview-disabled":    {`class="flash flash-disabled" role="alert"`, "This account is disabled.", "Contact the operator"},
		"keys":                 {`data-copy="new-key-secret"`, "sk-mg-9f8e7d6c5b4a39281706f5e4d3c2b1a0", "shown only once", `action="/console/keys/k1/revoke"`, `action="/console/keys/k2/revoke"`, `data-confirm="Revoke this key?`, "&lt;script&gt;alert(1)&lt;/script&gt;", "never", "$3.4567", "$25.00", `role="alert"`, `value="staging"`, `<option value="premium" selected>`, `name="expires"`, `type="date"`, `name="spend_cap"`, "Unnamed", "Expires (UTC)", "Dec 28, 2026", `value="2026-12-28"`, "$1.25", `action="/console/keys/k2"`, `action="/console/keys/k1/disable"`, `action="/console/keys/k5/enable"`, "<details open>", "gpt-4o*, claude-*", "prices ×1.2", `class="group-info-item is-selected" data-group="premium"`, `badge-bad">disabled`},
		"keys-empty":           {"No keys yet — create one above."},
		"usage":                {"All models", `data-label="Status"`, `<code class="errcode">rate_limited</code>`, `method="get" action="/console/usage"`, `name="from"`, `name="to"`, `href="/console/api/usage.csv?model=gpt-4o-mini"`, "Export CSV", `href="/console/usage?model=gpt-4o-mini&amp;cursor=abc"`, "First page", `<option value="gpt-4o-mini" selected>`, `<option value="k2" selected>`, "rate_limited", "1,511", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		"usage-empty":          {"No requests match", `value="2026-11-01"`, `<option value="error" selected>`},
		"stats":                {`href="/console/stats?days=7"`, `href="/console/stats?days=30" aria-current="page"`, "Cost per day", "Requests per day", "Tokens per day", "By model", "By key", "%", `class="sharebar"`, "&lt;script&gt;alert(1)&lt;/script&gt;"},
		"stats-empty":          {"No usage in this period", "No model was used in this period."},
		"stats-free":           {"No cost in this period: every request was free", "demo-free", "100.0%"},
		"models":               {`method="get" action="/console/models"`, `data-autosubmit`, `<option value="premium" selected>`, "Prices in the premium group", "$3.60", "$0.36", "$18.00", "200K", "1.05M", "8,191", "$0.0504 / image", "$0.00012 / second", "Web search", "Audio in", "Free", "demo-&lt;script&gt;", `href="/console/models" aria-current="page"`, `action="/console/logout"`, "not billed this way"},
		"models-public":        {"Sign in to get started", `href="/console/"`, "Prices in the default group"},
		"models-empty":         {"No models match", `href="/console/models?group=premium"`, `value="zzz"`, `<option value="output" selected>`},
		"models-none":          {"No models yet"},
		"playground":           {`data-playground hidden`, `data-api="/console/api/playground"`, `data-csrf="csrf-token-123"`, `data-base="https://api.example.com/v1"`, `data-money="$0.00"`, `<option value="k1" data-group="default">production backend</option>`, `<option value="gpt-4o-mini">`, `id="play-input"`, `data-play-copy`, "<noscript>", "Copy as curl / Python / Node", `href="/console/playground" aria-current="page"`},
		"playground-empty":     {"No active API key", `href="/console/keys"`},
		"playground-off":       {"The playground is off"},
		"error":                {"Not found", "another account", `href="/console/"`, "Error 404"},
		"error-signedin":       {"Not found", `action="/console/logout"`},
		"adminlink":            {`action="/console/admin-link"`, `name="token" value="tok_abc-123"`, "Sign in as admin"},
		"admin-providers":      {`href="/console/admin?section=models"`, `action="/console/admin/providers/openai/test"`, "overloaded_error", "1,234 ms", "badge-warn"},
		"admin-models":         {"$0.15 / $0.60 per 1M tokens", "embedding"},
		"admin-groups":         {"text-embedding-*"},
		"admin-accounts":       {`href="/console/admin/accounts/github:octocat"`, `name="q" value="octo"`, "-$0.25", "&lt;script&gt;alert(1)&lt;/script&gt;", "sso:octo.cat@example.com", `rel="next"`},
		"admin-codes":          {`action="/console/admin/codes"`, `name="batch"`, `name="count"`, `name="amount"`, `name="expires"`, "MG-3LMN-P0QA-1RTY", `data-copy="new-codes"`, "37 / 100"},
		"admin-errors":         {"upstream_unavailable", "503", "HTTP 529", "req_01JD8Z6Q2V7YH3KX9T", `href="/console/admin/accounts/github:hubot"`, `value="claude-sonnet-4"`, `rel="next"`},
		"admin-errors-empty":   {"No errors"},
		"admin-account":        {`action="/console/admin/accounts/a2/adjust"`, `name="reason"`, `action="/console/admin/accounts/a2/enable"`, `action="/console/admin/accounts/a2/grant-admin"`, `action="/console/admin/accounts/a2/keys/k1/disable"`, `action="/console/admin/accounts/a2/keys/k2/enable"`, `action="/console/admin/accounts/a2/keys/k1/revoke"`, "&lt;script&gt;alert(1)&lt;/script&gt;", "mallory@example.com", "Usage · 42 requests"},
		"admin-account-self":   {`action="/console/admin/accounts/a1/adjust"`, "your own account"},
		"admin-accounts-empty": {"No accounts yet."},
	}
	for _, sp := range samplePages() {
		t.Run(sp.Slug, func(t *testing.T) {
			body, doc := render(t, p, sp.Name, sp.Data)
			checkPage(t, sp.Slug, body, doc)
			want, ok := wants[sp.Slug]
			if !ok {
				t.Fatalf("no expectations for %s", sp.Slug)
			}
			for _, w := range want {
				if !strings.Contains(body, w) {
					t.Errorf("%s: missing %q", sp.Slug, w)
				}
			}
			if banner := strings.Contains(body, "This account is disabled."); banner != (sp.Slug == "overview-disabled") {
				t.Errorf("%s: disabled banner shown: %v", sp.Slug, banner)
			}
			if sp.Slug == "overview-disabled" {
				for _, form := range []string{`action="/console/topups"`, `action="/console/redeem"`} {
					if strings.Contains(body, form) {
						t.Errorf("%s: offers %s to a disabled account", sp.Slug, form)
					}
				}
			}
		})
	}
}

func TestRenderKeysFormsOnlyUnrevoked(t *testing.T) {
	body, _ := render(t, mustPages(t), "keys", sampleKeys(false))
	for _, action := range []string{"/revoke", "/disable", "/enable", `"`} {
		if strings.Contains(body, `action="/console/keys/k3`+action) {
			t.Errorf("the revoked key has a form %s", action)
		}
	}
	for _, action := range []string{`k4/revoke"`, `k4"`, `k5/enable"`, `k5"`} {
		if !strings.Contains(body, `action="/console/keys/`+action) {
			t.Errorf("no form %s", action)
		}
	}
	if strings.Contains(body, `action="/console/keys/k5/disable"`) || strings.Contains(body, `action="/console/keys/k1/enable"`) {
		t.Error("disable offered to a disabled key, or enable to an active one")
	}
}

func TestRenderNavAdmin(t *testing.T) {
	p := mustPages(t)
	o := sampleOverview(false)
	body, _ := render(t, p, "overview", o)
	if !strings.Contains(body, `href="/console/admin"`) || !strings.Contains(body, `href="/console/" aria-current="page"`) {
		t.Error("admin nav item or current page missing")
	}
	o.Admin = false
	body, _ = render(t, p, "overview", o)
	if strings.Contains(body, `href="/console/admin"`) {
		t.Error("admin nav item shown to a non-admin")
	}
}

func TestRenderErrors(t *testing.T) {
	p := mustPages(t)
	for _, tc := range []struct {
		name string
		data any
	}{
		{"nope", sampleKeys(false)},
		{"keys", SignIn{}}, // wrong view model: the template fails half-way
		{"overview", nil},  // no data at all
	} {
		rec := httptest.NewRecorder()
		p.Render(rec, http.StatusOK, tc.name, tc.data)
		if rec.Code != http.StatusInternalServerError {
			t.Errorf("%s %T: status %d", tc.name, tc.data, rec.Code)
		}
		if strings.Contains(rec.Body.String(), "<html") {
			t.Errorf("%s %T: half a page was written", tc.name, tc.data)
		}
	}
}

func TestRenderStatus(t *testing.T) {
	rec := httptest.NewRecorder()
	mustPages(t).Render(rec, http.StatusNotFound, "error", sampleError(false))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "Not found") {
		t.Fatalf("status %d", rec.Code)
	}
}

func TestStatic(t *testing.T) {
	srv := httptest.NewServer(Static())
	defer srv.Close()
	for _, tc := range []struct{ path, ctype string }{
		{"/console/static/console.css", "text/css; charset=utf-8"},
		{"/console/static/console.js", "text/javascript; charset=utf-8"},
		{"/console/static/favicon.svg", "image/svg+xml"},
	} {
		res, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != tc.ctype || len(b) == 0 {
			t.Errorf("%s: %d %q %d bytes", tc.path, res.StatusCode, res.Header.Get("Content-Type"), len(b))
		}
		if cc := res.Header.Get("Cache-Control"); cc != "public, max-age=3600" {
			t.Errorf("%s: Cache-Control %q", tc.path, cc)
		}
	}
	for _, path := range []string{"/console/static/", "/console/static/nope.css", "/console/static/../web.go", "/other/console.css"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", path, res.StatusCode)
		}
	}
	res, err := http.Post(srv.URL+"/console/static/console.css", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d", res.StatusCode)
	}
}

func TestAmount(t *testing.T) {
	for _, tc := range []struct {
		in   money.Micros
		want string
	}{
		{12_500_000, "12.50"},
		{123, "0.000123"},
		{-3_000_000, "-3.00"},
		{0, "0.00"},
		{1_234_567_891, "1234.567891"},
		{1_230_000, "1.23"},
		{1_234_000, "1.234"},
		{-500, "-0.0005"},
	} {
		if got := Amount(tc.in); got != tc.want {
			t.Errorf("Amount(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormatHelpers(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Money(12_500_000, "USD"), "$12.50"},
		{Money(-3_000_000, "EUR"), "-€3.00"},
		{Money(1_000_000, "CHF"), "1.00 CHF"},
		{Int(0), "0"},
		{Int(999), "999"},
		{Int(1000), "1,000"},
		{Int(-1234567), "-1,234,567"},
		{Date(sampleNow), "Nov 24, 2026"},
		{DateTime(sampleNow), "2026-11-24 19:05 UTC"},
		{share(1, 3), "33.3%"},
		{share(1, 0), "—"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestRenderLedgerAndDefects: the balance history and the fixed defects in
// both languages: free requests are usage, a blank model is no choice,
// every usage cell is labelled for the narrow stacked layout.
func TestRenderLedgerAndDefects(t *testing.T) {
	p := mustPages(t)
	for _, tc := range []struct {
		lang      Lang
		name      string
		data      any
		want, not []string
	}{
		{En, "stats", sampleStatsFree(), []string{"every request was free"}, []string{"No usage in this period"}},
		{Zh, "stats", sampleStatsFree(), []string{"所有请求均免费", "按模型"}, []string{"此期间没有用量", "No usage"}},
		{Zh, "ledger", sampleLedger(false), []string{"用量 · 1,234 次请求", "兑换码入账", "变动后余额", "当前有 $1.20 为进行中的任务预留", "2026年11月24日"}, []string{"Balance after", "Redeemed code"}},
		{Zh, "overview", sampleOverview(false), []string{"余额明细 →", "运营者调整", "通过银行卡支付 $20.00，等待确认", "首充奖励", "<span>支付宝</span>"}, []string{"Top-ups", "No top-ups yet", "Available balance"}},
		{Zh, "overview", sampleOverview(true), []string{"还没有充值记录"}, nil},
		{Zh, "usage", sampleUsage(false), []string{"全部模型", "输入 tokens", `data-label="状态"`}, []string{"All models", "Tokens in"}},
		{En, "usage", withModels(sampleUsage(false), ""), []string{"All models"}, []string{`<option value=""></option>`}},
	} {
		body, _ := render(t, p, tc.name, withLang(tc.data, tc.lang))
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s %s: missing %q", tc.lang, tc.name, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(body, n) {
				t.Errorf("%s %s: has %q", tc.lang, tc.name, n)
			}
		}
	}
	// Every cell of the usage and ledger tables carries its column's label.
	for _, sp := range []samplePage{{"usage", "usage", sampleUsage(false)}, {"ledger", "ledger", sampleLedger(false)}} {
		_, doc := render(t, p, sp.Name, sp.Data)
		for _, td := range find(doc, func(n *html.Node) bool { return n.Data == "td" }) {
			if l, _ := attr(td, "data-label"); l == "" {
				t.Errorf("%s: a cell without data-label", sp.Slug)
				break
			}
		}
	}
}

func withModels(u Usage, models ...string) Usage {
	u.Models = append(models, u.Models...)
	return u
}
