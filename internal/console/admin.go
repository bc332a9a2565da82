package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// Operator tells the admin pages about the gateway's configuration and
// sends test requests; the app implements it.
type Operator interface {
	// Providers lists the configured providers (Health, Requests and
	// Errors are filled by the console).
	Providers() []web.AdminProvider
	Models() []web.AdminModel
	Groups() []web.AdminGroup
	// TestProvider sends a tiny request through the provider and reports
	// how it went; it is not billed to anyone.
	TestProvider(ctx context.Context, name string) web.TestResult
}

// Bounds of the admin forms.
const (
	maxCodesPerBatch = 1000
	maxReason        = 200
	maxBatchLabel    = 100
	healthWindow     = time.Hour
	healthRows       = 20_000
	recentErrors     = 100
)

var adminSections = []string{"providers", "models", "groups", "accounts", "codes", "errors"}

func (c *Console) adminRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /console/admin", c.page(c.admin(c.adminPage)))
	m.HandleFunc("POST /console/admin/accounts/{id}/adjust", c.form(c.admin(c.adjustForm)))
	m.HandleFunc("POST /console/admin/accounts/{id}/disable", c.form(c.admin(c.disableForm(true))))
	m.HandleFunc("POST /console/admin/accounts/{id}/enable", c.form(c.admin(c.disableForm(false))))
	m.HandleFunc("POST /console/admin/accounts/{id}/revoke-admin", c.form(c.admin(c.revokeAdminForm)))
	m.HandleFunc("POST /console/admin/codes", c.form(c.admin(c.codesForm)))
	m.HandleFunc("POST /console/admin/providers/{name}/test", c.form(c.admin(c.testForm)))
}

// admin lets only admin sessions through; to others the pages do not exist.
func (c *Console) admin(h userHandler) userHandler {
	return func(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
		if s.Role != store.RoleAdmin {
			c.errorPage(w, http.StatusNotFound, c.layout(r, s, a, "title.not_found", ""), "page.not_found", "page.not_found_msg")
			return
		}
		h(w, r, s, a)
	}
}

func (c *Console) adminPage(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	section := r.URL.Query().Get("section")
	if !slices.Contains(adminSections, section) {
		section = "providers"
	}
	c.renderAdmin(w, r, s, a, web.Admin{Section: section}, c.flashFrom(r), http.StatusOK)
}

// renderAdmin fills the section v.Section of v and renders it.
func (c *Console) renderAdmin(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account, v web.Admin, flash *web.Flash, status int) {
	ctx := r.Context()
	v.Layout = c.layout(r, s, a, "title.admin", "admin")
	v.Flash = flash
	var err error
	switch v.Section {
	case "providers":
		v.Providers, err = c.providerHealth(ctx)
	case "models":
		if c.Operator != nil {
			v.Models = c.Operator.Models()
		}
	case "groups":
		if c.Operator != nil {
			v.Groups = c.Operator.Groups()
		}
	case "accounts":
		v.Accounts, err = c.adminAccounts(ctx)
	case "codes":
		v.Batches, err = c.codeBatches(ctx)
	case "errors":
		var recs []store.UsageRecord
		recs, err = c.Store.ListUsage(ctx, store.UsageFilter{Status: store.UsageError, Limit: recentErrors})
		for _, u := range recs {
			v.Errors = append(v.Errors, web.UsageRow{RequestID: u.RequestID, CreatedAt: u.Time, Model: u.Model, Endpoint: u.Endpoint,
				KeyName: u.KeyID, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, Cost: u.Cost,
				Status: u.Status, ErrorCode: u.ErrorCode})
		}
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	c.Pages.Render(w, status, "admin", v)
}

// upstreamFailed reports whether u is the provider's failure: a 5xx or a
// 429. The client's own mistakes (other 4xx) say nothing of the provider,
// and neither does the gateway's refusal of a key with no balance (429
// insufficient_quota; the vendor's own insufficient_quota reaches the
// client as 503 upstream_unavailable). The gateway's refusals before any
// upstream call leave no usage record today (they are counted per key and
// minute instead), so this guard matters for records stored before that.
func upstreamFailed(u store.UsageRecord) bool {
	if u.Status == http.StatusTooManyRequests && u.ErrorCode == "insufficient_quota" {
		return false
	}
	return u.Status >= 500 || u.Status == http.StatusTooManyRequests
}

// providerHealth is the configured providers with the last hour's
// requests and errors from the usage records.
func (c *Console) providerHealth(ctx context.Context) ([]web.AdminProvider, error) {
	if c.Operator == nil {
		return nil, nil
	}
	ps := c.Operator.Providers()
	recs, err := c.Store.ListUsage(ctx, store.UsageFilter{Since: c.now().Add(-healthWindow), Limit: healthRows})
	if err != nil {
		return nil, err
	}
	idx := make(map[string]int, len(ps))
	for i, p := range ps {
		idx[p.Name] = i
	}
	for _, u := range recs {
		i, ok := idx[u.Provider]
		if !ok {
			continue
		}
		ps[i].Requests++
		if upstreamFailed(u) {
			ps[i].Errors++
		}
	}
	for i := range ps {
		switch p := &ps[i]; {
		case p.Requests == 0:
			p.Health = "idle"
		case p.Errors*10 > p.Requests: // more than one in ten failed
			p.Health = "errors"
		default:
			p.Health = "ok"
		}
	}
	return ps, nil
}

func (c *Console) adminAccounts(ctx context.Context) ([]web.AdminAccount, error) {
	accts, err := c.Store.ListAccounts(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := c.Store.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	grants, err := c.adminGrants(ctx)
	if err != nil {
		return nil, err
	}
	n := map[string]int{}
	for _, k := range keys {
		if !k.Revoked() {
			n[k.AccountID]++
		}
	}
	out := make([]web.AdminAccount, 0, len(accts))
	for _, x := range accts {
		out = append(out, web.AdminAccount{ID: x.ID, Name: x.Name, Balance: x.Balance, Spent: x.Spent, Keys: n[x.ID],
			Disabled: x.Disabled(), Admin: x.Admin, AdminBy: grants[x.ID], CreatedAt: x.CreatedAt})
	}
	return out, nil
}

func (c *Console) codeBatches(ctx context.Context) ([]web.CodeBatch, error) {
	codes, err := c.Store.ListCodes(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []web.CodeBatch
	at := map[string]int{}
	for _, code := range codes {
		i, ok := at[code.Batch]
		if !ok {
			i = len(out)
			at[code.Batch] = i
			out = append(out, web.CodeBatch{Batch: code.Batch, Amount: code.Amount, CreatedAt: code.CreatedAt, ExpiresAt: code.ExpiresAt})
		}
		out[i].Count++
		if code.RedeemedBy != "" {
			out[i].Redeemed++
		}
	}
	slices.Reverse(out) // newest batch first
	return out, nil
}

func (c *Console) adjustForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	refuse := func(msg string) {
		c.renderAdmin(w, r, s, a, web.Admin{Section: "accounts"}, &web.Flash{Kind: "error", Message: msg}, http.StatusBadRequest)
	}
	ctx := r.Context()
	target, err := c.Store.AccountByID(ctx, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		refuse("No such account.")
		return
	} else if err != nil {
		c.internal(w, r, err)
		return
	}
	amount, err := money.Parse(r.PostFormValue("amount"))
	if err != nil || amount == 0 || amount > money.Max/1000 || amount < -money.Max/1000 {
		refuse("Amount must be a non-zero decimal like 25 (credit) or -3.50 (debit).")
		return
	}
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if reason == "" || utf8.RuneCountInString(reason) > maxReason || !utf8.ValidString(reason) {
		refuse(fmt.Sprintf("Give a reason of 1 to %d characters; it is kept in the ledger.", maxReason))
		return
	}
	if target.Balance+amount < 0 {
		refuse("A debit may not take the balance below zero (it is " + web.Amount(target.Balance) + ").")
		return
	}
	_, err = c.Store.Post(ctx, store.LedgerEntry{AccountID: target.ID, Kind: store.KindAdjustment, Amount: amount,
		Ref: newID("adjust_"), Note: "console, by " + a.Name + ": " + reason, Time: c.now()})
	if err != nil {
		c.internal(w, r, err)
		return
	}
	c.credited(target.ID)
	c.log().InfoContext(ctx, "console: balance adjusted", "admin", a.Name, "account", target.Name, "amount", amount.String(), "reason", reason)
	http.Redirect(w, r, "/console/admin?section=accounts&done=adjusted", http.StatusSeeOther)
}

func (c *Console) disableForm(disable bool) userHandler {
	return func(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
		var at time.Time
		done := "enabled"
		if disable {
			at, done = c.now(), "disabled"
		}
		if disable && r.PathValue("id") == a.ID {
			c.renderAdmin(w, r, s, a, web.Admin{Section: "accounts"},
				&web.Flash{Kind: "error", Message: "You cannot disable your own account."}, http.StatusBadRequest)
			return
		}
		err := c.Store.SetAccountDisabled(r.Context(), r.PathValue("id"), at)
		if errors.Is(err, store.ErrNotFound) {
			c.renderAdmin(w, r, s, a, web.Admin{Section: "accounts"}, &web.Flash{Kind: "error", Message: "No such account."}, http.StatusNotFound)
			return
		} else if err != nil {
			c.internal(w, r, err)
			return
		}
		c.log().InfoContext(r.Context(), "console: account "+done, "admin", a.Name, "account", r.PathValue("id"))
		http.Redirect(w, r, "/console/admin?section=accounts&done="+done, http.StatusSeeOther)
	}
}

func (c *Console) codesForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	refuse := func(msg string) {
		c.renderAdmin(w, r, s, a, web.Admin{Section: "codes"}, &web.Flash{Kind: "error", Message: msg}, http.StatusBadRequest)
	}
	batch := strings.TrimSpace(r.PostFormValue("batch"))
	if batch == "" || utf8.RuneCountInString(batch) > maxBatchLabel || !utf8.ValidString(batch) {
		refuse(fmt.Sprintf("Name the batch (1 to %d characters), like \"launch-promo\".", maxBatchLabel))
		return
	}
	count, err := strconv.Atoi(r.PostFormValue("count"))
	if err != nil || count < 1 || count > maxCodesPerBatch {
		refuse(fmt.Sprintf("Count must be a whole number from 1 to %d.", maxCodesPerBatch))
		return
	}
	amount, err := money.Parse(r.PostFormValue("amount"))
	if err != nil || amount <= 0 || amount > money.Max/1000 {
		refuse("Amount must be a positive decimal like 10 or 2.50.")
		return
	}
	now := c.now()
	var expires time.Time
	if e := r.PostFormValue("expires"); e != "" {
		d, err := time.Parse(time.DateOnly, e)
		if err != nil || !d.Add(day).After(now) {
			refuse("The expiry must be a date from today on, or empty for codes that never expire.")
			return
		}
		expires = d.Add(day)
	}
	codes := make([]store.RedeemCode, count)
	shown := make([]string, count)
	for i := range codes {
		code, hash := NewCode()
		shown[i] = code
		codes[i] = store.RedeemCode{ID: newID("code_"), Hash: hash, Batch: batch, Amount: amount, CreatedAt: now, ExpiresAt: expires}
	}
	if err := c.Store.CreateCodes(r.Context(), codes); err != nil {
		c.internal(w, r, err)
		return
	}
	c.log().InfoContext(r.Context(), "console: codes created", "admin", a.Name, "batch", batch, "count", count, "amount", amount.String())
	c.renderAdmin(w, r, s, a, web.Admin{Section: "codes", NewCodes: shown},
		&web.Flash{Kind: "ok", Message: fmt.Sprintf("Created %d codes of %s in batch %q. Copy them now: they are shown only once.", count, web.Money(amount, c.Currency), batch)},
		http.StatusCreated)
}

func (c *Console) testForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	name := r.PathValue("name")
	v := web.Admin{Section: "providers"}
	if c.Operator == nil || !slices.ContainsFunc(c.Operator.Providers(), func(p web.AdminProvider) bool { return p.Name == name }) {
		c.renderAdmin(w, r, s, a, v, &web.Flash{Kind: "error", Message: "No such provider."}, http.StatusNotFound)
		return
	}
	res := c.Operator.TestProvider(r.Context(), name)
	v.TestResult = &res
	c.renderAdmin(w, r, s, a, v, nil, http.StatusOK)
}
