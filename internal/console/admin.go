package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/modelgate/modelgate/internal/console/web"
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
)

var adminSections = []string{"providers", "models", "groups", "accounts", "codes", "errors"}

func (c *Console) adminRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /console/admin", c.page(c.admin(c.adminPage)))
	m.HandleFunc("GET /console/admin/accounts/{name}", c.page(c.admin(c.accountPage)))
	m.HandleFunc("GET /console/admin/accounts/{account}/ledger", c.page(c.admin(c.accountView("title.ledger", "ledger", c.ledgerView))))
	m.HandleFunc("GET /console/admin/accounts/{account}/usage", c.page(c.admin(c.accountView("title.usage", "usage", c.usageView))))
	m.HandleFunc("POST /console/admin/accounts/{id}/adjust", c.form(c.admin(c.adjustForm)))
	m.HandleFunc("POST /console/admin/accounts/{id}/disable", c.form(c.admin(c.disableForm(true))))
	m.HandleFunc("POST /console/admin/accounts/{id}/enable", c.form(c.admin(c.disableForm(false))))
	m.HandleFunc("POST /console/admin/accounts/{id}/grant-admin", c.form(c.admin(c.grantAdminForm)))
	m.HandleFunc("POST /console/admin/accounts/{id}/revoke-admin", c.form(c.admin(c.revokeAdminForm)))
	m.HandleFunc("POST /console/admin/accounts/{id}/keys/{key}/{op}", c.form(c.admin(c.adminKeyForm)))
	m.HandleFunc("POST /console/admin/codes", c.form(c.admin(c.codesForm)))
	m.HandleFunc("POST /console/admin/providers/{name}/test", c.form(c.admin(c.testForm)))

	api := func(h userHandler) userHandler { return c.adminAPI(h) }
	m.HandleFunc("GET /console/api/admin/accounts", c.user(false, api(c.apiAccounts)))
	m.HandleFunc("GET /console/api/admin/accounts/{account}", c.user(false, api(c.apiAccount)))
	m.HandleFunc("GET /console/api/admin/accounts/{account}/usage", c.user(false, api(c.asAccount(c.usage))))
	m.HandleFunc("GET /console/api/admin/accounts/{account}/ledger", c.user(false, api(c.asAccount(c.ledger))))
	m.HandleFunc("GET /console/api/admin/accounts/{account}/ledger.csv", c.user(false, api(c.asAccount(c.ledgerCSV))))
	m.HandleFunc("GET /console/api/admin/accounts/{account}/usage.csv", c.user(false, api(c.asAccount(c.usageCSV))))
	m.HandleFunc("POST /console/api/admin/accounts/{account}/role", c.user(true, api(c.apiRole)))
	m.HandleFunc("GET /console/api/admin/errors", c.user(false, api(c.apiErrors)))
	m.HandleFunc("GET /console/api/admin/providers", c.user(false, api(c.apiProviders)))
	m.HandleFunc("GET /console/api/admin/codes", c.user(false, api(c.apiCodes)))
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

// adminAPI is admin for the JSON API: to others the calls do not exist
// (404 in the /v1 error shape).
func (c *Console) adminAPI(h userHandler) userHandler {
	return func(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
		if s.Role != store.RoleAdmin {
			fail(w, notFound(fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)))
			return
		}
		h(w, r, s, a)
	}
}

// asAccount runs a user's own handler (usage, ledger) for the account the
// path's {account} names, so an operator sees what that user sees.
func (c *Console) asAccount(h userHandler) userHandler {
	return func(w http.ResponseWriter, r *http.Request, s store.Session, _ store.Account) {
		target, e := c.accountNamed(r.Context(), r.PathValue("account"))
		if e != nil {
			fail(w, e)
			return
		}
		h(w, r, s, target)
	}
}

func (c *Console) adminPage(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	section := r.URL.Query().Get("section")
	if !slices.Contains(adminSections, section) {
		section = "providers"
	}
	v := web.Admin{Section: section}
	switch section {
	case "codes":
		v.NewCodes, v.NewBatch = c.revealedCodes(w, r)
	case "providers":
		v.TestResult = c.revealedTest(w, r)
	}
	c.renderAdmin(w, r, s, a, v, c.flashFrom(r), http.StatusOK)
}

// renderAdmin fills the section v.Section of v and renders it. The
// accounts and errors sections read their search, filters and page from
// the query; a bad one is shown as the refusal, with a 400.
func (c *Console) renderAdmin(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account, v web.Admin, flash *web.Flash, status int) {
	ctx := r.Context()
	v.Layout = c.layout(r, s, a, "title.admin", "admin")
	v.Flash = flash
	q := r.URL.Query()
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
		v.Query = q.Get("q")
		aq, e := accountsQuery(q)
		if e != nil {
			v.Flash, status = c.errFlash(r, e), e.Status
			break
		}
		var next string
		v.Accounts, _, next, err = c.adminAccountList(ctx, aq)
		v.FirstURL, v.NextURL = pageURLs(q, "/console/admin", next, "section", "q")
	case "codes":
		v.Batches, err = c.codeBatches(ctx)
	case "errors":
		v.ErrAccount, v.ErrModel = q.Get("account"), q.Get("model")
		f, e := c.errorsQuery(ctx, q)
		if e != nil {
			v.Flash, status = c.errFlash(r, e), e.Status
			break
		}
		var next string
		v.Errors, next, err = c.adminErrors(r, f, v.Lang)
		v.FirstURL, v.NextURL = pageURLs(q, "/console/admin", next, "section", "account", "model")
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	c.Pages.Render(w, status, "admin", v)
}

// pageURLs are the links to the first page (when q is past it) and to the
// next (when next is set), keeping the query's parameters keep.
func pageURLs(q url.Values, path, next string, keep ...string) (first, nextURL string) {
	v := url.Values{}
	for _, k := range keep {
		if x := q.Get(k); x != "" {
			v.Set(k, x)
		}
	}
	if q.Get("cursor") != "" {
		first = path + "?" + v.Encode()
	}
	if next != "" {
		v.Set("cursor", next)
		nextURL = path + "?" + v.Encode()
	}
	return first, nextURL
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
