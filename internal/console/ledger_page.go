package console

import (
	"net/http"
	"net/url"

	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/store"
)

// ledgerRoutes adds the balance history: its page and its JSON and CSV.
func (c *Console) ledgerRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /console/ledger", c.page(c.ledgerPageHTML))
	m.HandleFunc("GET /console/api/ledger", c.user(false, c.ledger))
	m.HandleFunc("GET /console/api/ledger.csv", c.user(false, c.ledgerCSV))
}

// ledgerPageKinds are the kind filter's choices on the page (hold and
// release never have entries, so the page does not offer them).
var ledgerPageKinds = []string{apiTopUp, apiBonus, apiCode, apiAdjustment, apiRefund, apiUsage}

// overviewCredits are the kinds the overview's top-up card lists.
var overviewCredits = []store.LedgerKind{store.KindTopUp, store.KindCode, store.KindBonus, store.KindAdjustment, store.KindRefund}

// overviewCreditRows is how many credits the overview lists.
const overviewCreditRows = 6

// ledgerPageHTML is /console/ledger: a page of the balance history, usage
// charges grouped per UTC day, filtered by one kind.
func (c *Console) ledgerPageHTML(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	c.ledgerView(w, r, c.layout(r, s, a, "title.ledger", "ledger"), a, "/console/ledger", "/console/api/ledger.csv")
}

// accountView is the handler of /console/admin/accounts/{account}/<page>:
// the user's own page (view) for the account the path names, as its user
// sees it, under the operator's layout; its form, paging and CSV links
// stay under the account's admin paths.
func (c *Console) accountView(titleKey, page string, view func(w http.ResponseWriter, r *http.Request, l web.Layout, a store.Account, base, csv string)) userHandler {
	return func(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
		target, e := c.accountNamed(r.Context(), r.PathValue("account"))
		if e != nil {
			c.errorPage(w, e.Status, c.layout(r, s, a, "title.not_found", "admin"), "page.not_found", e.Message)
			return
		}
		l := c.layout(r, s, a, titleKey, "admin")
		l.Title += " · " + target.Name
		name := pathName(target.Name)
		view(w, r, l, target, "/console/admin/accounts/"+name+"/"+page, "/console/api/admin/accounts/"+name+"/"+page+".csv")
	}
}

// ledgerView renders a page of a's balance history with layout l; base is
// the page's own path (for its paging links), csv the export's.
func (c *Console) ledgerView(w http.ResponseWriter, r *http.Request, l web.Layout, a store.Account, base, csv string) {
	q := r.URL.Query()
	v := web.Ledger{Layout: l, Kinds: ledgerPageKinds, Held: a.Held, Action: base}
	filters := url.Values{}
	if k := q.Get("kind"); k != "" {
		filters.Set("kind", k)
		v.Kind = k
	}
	// Only the kind filter and the cursor come from the page's own links;
	// anything else in the query is ignored.
	pq := url.Values{"kind": filters["kind"], "cursor": q["cursor"]}
	f, e := c.ledgerQuery(pq, a.ID)
	if e != nil {
		v.Kind = ""
		v.Flash = c.errFlash(r, e)
		c.Pages.Render(w, e.Status, "ledger", v)
		return
	}
	f.q.GroupCharges = true
	entries, next, err := c.ledgerPage(r, f)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	for _, x := range entries {
		v.Rows = append(v.Rows, ledgerRow(x))
	}
	v.CSVURL = csv
	if len(filters) > 0 {
		v.CSVURL += "?" + filters.Encode()
	}
	if q.Get("cursor") != "" {
		v.FirstURL = base
		if len(filters) > 0 {
			v.FirstURL += "?" + filters.Encode()
		}
	}
	if next != "" {
		nq := url.Values{"cursor": {next}}
		if k := filters.Get("kind"); k != "" {
			nq.Set("kind", k)
		}
		v.NextURL = base + "?" + nq.Encode()
	}
	c.Pages.Render(w, http.StatusOK, "ledger", v)
}

// ledgerRow is an entry as the pages show it.
func ledgerRow(e store.LedgerEntry) web.LedgerRow {
	row := web.LedgerRow{ID: e.ID, Time: e.Time, Kind: apiKind(e.Kind), Amount: e.Amount, BalanceAfter: e.BalanceAfter,
		Count: max(e.Count, 1), Reason: entryReason(e)}
	if e.Kind == store.KindCharge && row.Count == 1 {
		row.Ref = e.Ref
	}
	return row
}

// recentCredits are the account's latest credits and corrections, newest
// first, for the overview's top-up card.
func (c *Console) recentCredits(r *http.Request, a store.Account) ([]web.LedgerRow, error) {
	entries, _, err := c.ledgerBatch(r, ledgerFilter{q: store.LedgerQuery{AccountID: a.ID, Kinds: overviewCredits,
		Limit: overviewCreditRows}})
	if err != nil {
		return nil, err
	}
	rows := make([]web.LedgerRow, 0, len(entries))
	for _, x := range entries {
		rows = append(rows, ledgerRow(x))
	}
	return rows, nil
}
