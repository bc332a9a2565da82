package console

import (
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/store"
)

// How much of an account its operator page shows; the rest is in the
// account's ledger and usage listings.
const (
	accountLedgerRows = 10
	accountUsageRows  = 10
	accountTopUps     = 10
)

// accountPage serves /console/admin/accounts/{name}: one customer whole.
func (c *Console) accountPage(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	target, e := c.accountNamed(r.Context(), r.PathValue("name"))
	if e != nil {
		if e.Status == http.StatusNotFound {
			c.errorPage(w, http.StatusNotFound, c.layout(r, s, a, "title.not_found", "admin"), "page.not_found", "page.no_account_msg")
			return
		}
		c.internal(w, r, e)
		return
	}
	c.renderAccount(w, r, s, a, target, c.flashFrom(r), http.StatusOK)
}

// renderAccount renders target's page for operator a.
func (c *Console) renderAccount(w http.ResponseWriter, r *http.Request, s store.Session, a, target store.Account, flash *web.Flash, status int) {
	ctx := r.Context()
	row, e := c.accountRow(ctx, target.Name)
	if e != nil {
		c.internal(w, r, e)
		return
	}
	keys, err := c.Store.KeysOf(ctx, target.ID)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	v := web.AdminAccountPage{Layout: c.layout(r, s, a, "title.admin_account", "admin"), Held: target.Held, Self: target.ID == a.ID,
		UsageURL:  "/console/admin/accounts/" + pathName(target.Name) + "/usage",
		LedgerURL: "/console/admin/accounts/" + pathName(target.Name) + "/ledger"}
	v.Title = target.Name
	v.Flash = flash
	live := 0
	names := map[string]string{}
	for i := len(keys) - 1; i >= 0; i-- { // newest first
		k := keys[i]
		names[k.ID] = keyLabel(k)
		if !k.Revoked() {
			live++
		}
		v.Keys = append(v.Keys, web.AdminKey{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Group: k.Group, Status: c.keyStatus(k),
			CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, SpendCap: k.SpendCap, Spent: k.Spent})
	}
	v.Target = c.adminAccountOf(row, live)
	for _, id := range row.Identities {
		v.Identities = append(v.Identities, web.Identity{Provider: id.Provider, Login: id.Login, Email: id.Email, LastSeenAt: id.LastSeenAt})
	}
	tops, err := c.Store.ListTopUps(ctx, target.ID)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	for i, t := range tops {
		if i == accountTopUps {
			break
		}
		row := web.TopUp{ID: t.ID, Amount: t.Amount, Bonus: t.Bonus, Method: t.Method, Status: string(t.Status), CreatedAt: t.CreatedAt, PaidAt: t.PaidAt}
		if t.Status == store.TopUpPaid {
			row.Amount = t.Credited
		}
		v.TopUps = append(v.TopUps, row)
	}
	entries, _, err := c.Store.LedgerPage(ctx, store.LedgerQuery{AccountID: target.ID, Limit: accountLedgerRows, GroupCharges: true})
	if err != nil {
		c.internal(w, r, err)
		return
	}
	for _, en := range entries {
		v.Ledger = append(v.Ledger, ledgerRow(en))
	}
	recs, err := c.Store.ListUsage(ctx, store.UsageFilter{AccountID: target.ID, Limit: accountUsageRows})
	if err != nil {
		c.internal(w, r, err)
		return
	}
	for _, u := range recs {
		v.Usage = append(v.Usage, web.UsageRow{RequestID: u.RequestID, CreatedAt: u.Time, Model: u.Model, Endpoint: u.Endpoint,
			KeyName: names[u.KeyID], PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, Cost: u.Cost,
			Status: u.Status, ErrorCode: u.ErrorCode})
	}
	t, err := c.totals30(r, target.ID)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	v.Totals = web.Day{Requests: t.Requests, PromptTokens: t.PromptTokens, CompletionTokens: t.CompletionTokens, Cost: t.Cost}
	c.Pages.Render(w, status, "admin_account", v)
}

// pathName is an account name as a path segment.
func pathName(name string) string { return accountURL(name)[len("/console/admin/accounts/"):] }

// totals30 sums the account's usage of the last 30 UTC days.
func (c *Console) totals30(r *http.Request, accountID string) (store.UsageTotals, error) {
	since, until := c.statsRange(defaultStatsDays)
	st, err := c.Store.UsageStats(r.Context(), accountID, since, until)
	var t store.UsageTotals
	for _, d := range st.Daily {
		t.Requests += d.Requests
		t.PromptTokens += d.PromptTokens
		t.CompletionTokens += d.CompletionTokens
		t.Cost += d.Cost
	}
	return t, err
}

type adminKeyJSON struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	Group      string     `json:"group"`
	Status     string     `json:"status"` // active, disabled, revoked or expired
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	SpendCap   *string    `json:"spend_cap"`
	Spent      string     `json:"spent"`
}

type accountDetailJSON struct {
	accountJSON
	Held   string         `json:"held"`
	Spent  string         `json:"spent"`
	Keys   []adminKeyJSON `json:"keys"`
	TopUps []topUpJSON    `json:"topups"` // the newest ten
	// Totals are the last 30 days' usage.
	Totals struct {
		Days int `json:"days"`
		totalsJSON
	} `json:"totals"`
}

// apiAccount serves GET /console/api/admin/accounts/{account}.
func (c *Console) apiAccount(w http.ResponseWriter, r *http.Request, _ store.Session, _ store.Account) {
	ctx := r.Context()
	row, e := c.accountRow(ctx, r.PathValue("account"))
	if e != nil {
		fail(w, e)
		return
	}
	keys, err := c.Store.KeysOf(ctx, row.ID)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	tops, err := c.Store.ListTopUps(ctx, row.ID)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	t, err := c.totals30(r, row.ID)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	j := accountDetailJSON{accountJSON: c.accountJSONOf(row), Held: row.Held.String(), Spent: row.Spent.String(),
		Keys: []adminKeyJSON{}, TopUps: []topUpJSON{}}
	for i := len(keys) - 1; i >= 0; i-- {
		k := keys[i]
		kj := c.keyJSON(k, false)
		j.Keys = append(j.Keys, adminKeyJSON{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Group: k.Group, Status: c.keyStatus(k),
			CreatedAt: kj.CreatedAt, LastUsedAt: kj.LastUsedAt, ExpiresAt: kj.ExpiresAt, SpendCap: kj.SpendCap, Spent: k.Spent.String()})
	}
	for i, tp := range tops {
		if i == accountTopUps {
			break
		}
		j.TopUps = append(j.TopUps, topUpOf(tp))
	}
	j.Totals.Days, j.Totals.totalsJSON = defaultStatsDays, totalsOf(t)
	writeJSON(w, http.StatusOK, j)
}

type batchJSON struct {
	Batch     string     `json:"batch"`
	Label     string     `json:"label"`
	Amount    string     `json:"amount"`
	Count     int        `json:"count"`
	Redeemed  int        `json:"redeemed"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// apiCodes serves GET /console/api/admin/codes: the code batches, newest
// first, with how many of their codes were redeemed. A batch is named by
// its label (batch and label are the same).
func (c *Console) apiCodes(w http.ResponseWriter, r *http.Request, _ store.Session, _ store.Account) {
	bs, err := c.codeBatches(r.Context())
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	data := make([]batchJSON, 0, len(bs))
	for _, b := range bs {
		j := batchJSON{Batch: b.Batch, Label: b.Batch, Amount: b.Amount.String(), Count: b.Count, Redeemed: b.Redeemed,
			CreatedAt: b.CreatedAt.UTC()}
		if !b.ExpiresAt.IsZero() {
			t := b.ExpiresAt.UTC()
			j.ExpiresAt = &t
		}
		data = append(data, j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}
