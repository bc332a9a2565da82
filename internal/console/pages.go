package console

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/payment"
	"github.com/modelgate/modelgate/internal/store"
)

// pageRoutes adds the HTML pages and their forms. Reads are GET pages
// rendered on the server; every state-changing form is a POST carrying the
// session's csrf_token field and answers with a redirect (303) or, when it
// is refused, the same page with the reason.
func (c *Console) pageRoutes(m *http.ServeMux) {
	m.Handle("GET /console/static/", web.Static())
	m.HandleFunc("GET /console/{$}", c.index)
	m.HandleFunc("GET /console/usage", c.page(c.usagePageHTML))
	m.HandleFunc("GET /console/stats", c.page(c.statsPage))
	m.HandleFunc("GET /console/models", c.modelsPage)
	m.HandleFunc("GET /console/playground", c.page(c.playgroundPage))
	m.HandleFunc("POST /console/topups", c.form(c.enabledForm(c.topUpForm)))
	m.HandleFunc("POST /console/redeem", c.form(c.enabledForm(c.redeemForm)))
	c.keyRoutes(m)
	m.HandleFunc("GET /console/admin-link", c.adminLinkConfirm)
	m.HandleFunc("POST /console/admin-link", c.adminLinkUse)
	c.ledgerRoutes(m)
	c.adminRoutes(m)
}

// index is the overview when signed in, else the sign-in page.
func (c *Console) index(w http.ResponseWriter, r *http.Request) {
	s, a, err := c.session(r)
	if err != nil {
		c.Pages.Render(w, http.StatusOK, "signin", web.SignIn{Layout: c.bare(r), Providers: c.Labels})
		return
	}
	c.overviewPage(w, r, s, a, nil)
}

// page wraps a GET page that needs a signed-in user; others go to the
// sign-in page.
func (c *Console) page(h userHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, a, err := c.session(r)
		if err != nil {
			http.Redirect(w, r, "/console/", http.StatusFound)
			return
		}
		h(w, r, s, a)
	}
}

// form wraps a POSTed form: a session and its csrf_token field (or the
// X-CSRF-Token header) are required.
func (c *Console) form(h userHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		s, a, err := c.session(r)
		if err != nil {
			c.errorPage(w, http.StatusUnauthorized, c.bare(r), "page.signed_out", "page.signed_out_msg")
			return
		}
		if !c.csrfOK(r, s) {
			c.errorPage(w, http.StatusForbidden, c.layout(r, s, a, "title.refused", ""), "page.refused", "page.refused_msg")
			return
		}
		h(w, r, s, a)
	}
}

// enabledForm is enabled for forms: a disabled account gets a 403 page.
func (c *Console) enabledForm(h userHandler) userHandler {
	return func(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
		if a.Disabled() {
			c.errorPage(w, http.StatusForbidden, c.layout(r, s, a, "title.account_disabled", ""), "title.account_disabled", "page.disabled_msg")
			return
		}
		h(w, r, s, a)
	}
}

// errorPage renders a full-page refusal; heading and msg are catalogue
// keys (a text that is not one is shown as it is).
func (c *Console) errorPage(w http.ResponseWriter, status int, l web.Layout, heading, msg string) {
	tr := func(s string) string { return c.Pages.Text(l.Language(), s) }
	heading, msg = tr(heading), tr(msg)
	if l.Title == "" {
		l.Title = heading
	}
	c.Pages.Render(w, status, "error", web.ErrorPage{Layout: l, Status: status, Heading: heading, Message: msg})
}

// doneMessages are the confirmations a redirect may ask for (?done=…):
// fixed texts, so a link cannot put words on the page.
var doneMessages = map[string]bool{"revoked": true, "redeemed": true, "adjusted": true, "disabled": true, "enabled": true,
	"admin-revoked": true, "linked": true, "done": true, "cancelled": true,
	"key-updated": true, "key-disabled": true, "key-enabled": true, "admin-granted": true, "key-revoked": true,
	"codes-created": true}

func (c *Console) flashFrom(r *http.Request) *web.Flash {
	q := r.URL.Query()
	for _, k := range []string{q.Get("done"), q.Get("topup")} {
		if doneMessages[k] {
			return &web.Flash{Kind: "ok", Message: c.text(r, "done."+k)}
		}
	}
	return nil
}

// errFlash is a refused form's reason in r's language: the catalogue's
// text for the error's code and parameter ("flash.<code>.<param>",
// "flash.<code>", "flash.param.<param>") when it has one, else the error's
// own (English) message.
func (c *Console) errFlash(r *http.Request, e *apierr.Error) *web.Flash {
	cat := c.Pages.Catalog()
	const prefix = "flash."
	for _, k := range []string{prefix + e.Code + "." + e.Param, prefix + e.Code, prefix + "param." + e.Param} {
		if !cat.Has(k) {
			continue
		}
		var args []any
		switch e.Code {
		case CodeInvalidAmount:
			args = []any{web.Money(c.MinTopUp, c.Currency), web.Money(c.MaxTopUp, c.Currency)}
		case CodeTooManyTopUps:
			args = []any{payment.MaxOpenTopUps, payment.MaxTopUpsPerHour}
		}
		return &web.Flash{Kind: "error", Message: c.text(r, k, args...)}
	}
	return &web.Flash{Kind: "error", Message: e.Message}
}

func (c *Console) overviewPage(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account, flash *web.Flash) {
	status := http.StatusOK
	if flash != nil && flash.Kind == "error" {
		status = http.StatusBadRequest
	}
	c.overviewPageStatus(w, r, s, a, flash, status)
}

// overviewPageStatus is overviewPage answering with status.
func (c *Console) overviewPageStatus(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account, flash *web.Flash, status int) {
	ctx := r.Context()
	if flash == nil {
		flash = c.flashFrom(r)
	}
	since, until := c.statsRange(defaultStatsDays)
	st, err := c.Store.UsageStats(ctx, a.ID, since, until)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	tops, err := c.Store.ListTopUps(ctx, a.ID)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	ids, err := c.Store.ListIdentities(ctx, a.ID)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	v := web.Overview{Layout: c.layout(r, s, a, "title.overview", "overview"), Held: a.Held, Spent: a.Spent,
		Methods: c.Methods, MinTopUp: c.MinTopUp, MaxTopUp: c.MaxTopUp, BonusMax: c.Bonus.Max, BonusEligible: true}
	if c.Payments == nil {
		v.Methods = nil
	}
	if c.Bonus.PercentPPM > 0 {
		v.BonusPercent = percentText(c.Bonus.PercentPPM)
	}
	v.Flash = flash
	for _, d := range dailyFilled(st, since, defaultStatsDays) {
		v.Daily = append(v.Daily, dayOf(d))
		v.Spent30d += d.Cost
		v.Requests30d += d.Requests
	}
	for _, t := range tops {
		if t.Status == store.TopUpPaid {
			v.BonusEligible = false
		}
		// Paid top-ups, codes and corrections come from the ledger below;
		// only a payment still under way is listed from the top-ups.
		if t.Status == store.TopUpPending {
			v.TopUps = append(v.TopUps, web.TopUp{ID: t.ID, Amount: t.Amount, Method: t.Method, Status: string(t.Status),
				CreatedAt: t.CreatedAt})
		}
	}
	if v.Credits, err = c.recentCredits(r, a); err != nil {
		c.internal(w, r, err)
		return
	}
	linked := map[string]bool{}
	for _, id := range ids {
		v.Identities = append(v.Identities, web.Identity{Provider: id.Provider, Login: id.Login, Email: id.Email, LastSeenAt: id.LastSeenAt})
		linked[id.Provider] = true
	}
	for _, p := range c.Labels {
		if !linked[p.Name] {
			v.LinkProviders = append(v.LinkProviders, p)
		}
	}
	c.Pages.Render(w, status, "overview", v)
}

func (c *Console) internal(w http.ResponseWriter, r *http.Request, err error) {
	c.log().ErrorContext(r.Context(), "console: page", "path", r.URL.Path, "err", err)
	c.errorPage(w, http.StatusInternalServerError, c.bare(r), "page.error", "page.error_msg")
}

func dayOf(d store.UsageGroup) web.Day {
	return web.Day{Date: d.Key, Requests: d.Requests, PromptTokens: d.PromptTokens, CompletionTokens: d.CompletionTokens, Cost: d.Cost}
}

// --- money ---

func (c *Console) topUpForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	_, url, e := c.startTopUp(r, a, r.PostFormValue("amount"), r.PostFormValue("method"))
	if e != nil {
		c.overviewPageStatus(w, r, s, a, c.errFlash(r, e), e.Status)
		return
	}
	http.Redirect(w, r, url, http.StatusSeeOther)
}

func (c *Console) redeemForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	if _, _, e := c.redeemCode(r.Context(), a, r.PostFormValue("code")); e != nil {
		c.overviewPage(w, r, s, a, c.errFlash(r, e))
		return
	}
	http.Redirect(w, r, "/console/?done=redeemed", http.StatusSeeOther)
}

// --- usage and statistics ---

func (c *Console) usagePageHTML(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	c.usageView(w, r, c.layout(r, s, a, "title.usage", "usage"), a, "/console/usage", "/console/api/usage.csv")
}

// usageView renders a page of a's usage records with layout l; base is the
// page's own path (its form and paging links), csv the export's.
func (c *Console) usageView(w http.ResponseWriter, r *http.Request, l web.Layout, a store.Account, base, csv string) {
	q := r.URL.Query()
	v := web.Usage{Layout: l, Action: base,
		Filter: web.UsageFilter{From: q.Get("from"), To: q.Get("to"), Model: q.Get("model"), Key: q.Get("key"), Status: q.Get("status")}}
	keys, err := c.ownKeys(r, a)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	names := map[string]string{}
	for _, k := range keys {
		v.Keys = append(v.Keys, web.Key{ID: k.ID, Name: k.Name, Prefix: k.Prefix})
		names[k.ID] = keyLabel(k)
	}
	since, until := c.statsRange(maxStatsDays)
	st, err := c.Store.UsageStats(r.Context(), a.ID, since, until)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	for _, g := range st.ByModel {
		if g.Key != "" { // a record without a model is no choice
			v.Models = append(v.Models, g.Key)
		}
	}
	slices.Sort(v.Models)
	f, e := usageQuery(q, a.ID, false)
	if e != nil {
		v.Flash = c.errFlash(r, e)
		c.Pages.Render(w, e.Status, "usage", v)
		return
	}
	recs, next, err := c.usagePage(r, f)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	for _, u := range recs {
		v.Rows = append(v.Rows, web.UsageRow{RequestID: u.RequestID, CreatedAt: u.Time, Model: u.Model, Endpoint: u.Endpoint,
			KeyName: names[u.KeyID], PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, Cost: u.Cost,
			Status: u.Status, ErrorCode: u.ErrorCode})
	}
	if f.Model == "" && f.Status != store.UsageOK && f.After.RequestID == "" {
		rf, _ := refusalQuery(q, a.ID) // the same from, to and key, already read
		counts, err := c.Store.ListRefusals(r.Context(), rf)
		if err != nil {
			c.internal(w, r, err)
			return
		}
		for _, rc := range counts {
			v.Refused = append(v.Refused, web.RefusalRow{Minute: rc.Minute, KeyName: names[rc.KeyID], Endpoint: rc.Endpoint,
				Status: rc.Status, Code: rc.Reason, Count: rc.Count})
		}
	}
	filters := url.Values{}
	for _, k := range []string{"from", "to", "model", "key", "status"} {
		if x := q.Get(k); x != "" {
			filters.Set(k, x)
		}
	}
	v.CSVURL = csv + "?" + filters.Encode()
	if q.Get("cursor") != "" {
		v.FirstURL = base + "?" + filters.Encode()
	}
	if next != "" {
		nq := url.Values{}
		for k, x := range filters {
			nq[k] = x
		}
		nq.Set("cursor", next)
		v.NextURL = base + "?" + nq.Encode()
	}
	c.Pages.Render(w, http.StatusOK, "usage", v)
}

func (c *Console) statsPage(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	days := defaultStatsDays
	switch r.URL.Query().Get("days") {
	case "7":
		days = 7
	case "90":
		days = 90
	}
	since, until := c.statsRange(days)
	st, err := c.Store.UsageStats(r.Context(), a.ID, since, until)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	names, err := c.keyNames(r, a)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	v := web.Stats{Layout: c.layout(r, s, a, "title.stats", "stats"), Days: days, Choices: []int{7, 30, 90}}
	for _, d := range dailyFilled(st, since, days) {
		x := dayOf(d)
		v.Daily = append(v.Daily, x)
		v.Total.Requests += x.Requests
		v.Total.PromptTokens += x.PromptTokens
		v.Total.CompletionTokens += x.CompletionTokens
		v.Total.Cost += x.Cost
	}
	group := func(label string, t store.UsageTotals) web.Group {
		return web.Group{Label: label, Requests: t.Requests, PromptTokens: t.PromptTokens, CompletionTokens: t.CompletionTokens, Cost: t.Cost}
	}
	for _, g := range st.ByModel {
		if g.Key != "" { // no blank row for records without a model
			v.ByModel = append(v.ByModel, group(g.Key, g.UsageTotals))
		}
	}
	for _, g := range st.ByKey {
		label, ok := names[g.Key]
		if !ok {
			label = c.text(r, "page.stats_no_key")
		}
		v.ByKey = append(v.ByKey, group(label, g.UsageTotals))
	}
	c.Pages.Render(w, http.StatusOK, "stats", v)
}

// csrfOK checks the session's token in the X-CSRF-Token header or, for a
// form, its csrf_token field.
func (c *Console) csrfOK(r *http.Request, s store.Session) bool {
	got := r.Header.Get(CSRFHeader)
	if got == "" {
		got = r.PostFormValue("csrf_token")
	}
	return tokenEqual(got, s.CSRF)
}

// tokenEqual compares a presented token with the session's in constant
// time; an empty one never matches.
func tokenEqual(got, want string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// percentText shows a rate in parts per million as a percent: 100000 →
// "10", 75000 → "7.5".
func percentText(ppm int64) string {
	s := money.Micros(ppm * 100).String()
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
