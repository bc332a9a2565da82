package console

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/store"
)

// Bounds of the operator's account list.
const (
	defaultAccountPage = 50
	maxAccountPage     = 500
	maxAccountQuery    = 200
	accountCursorTag   = "acct|"
)

// accountsQuery reads q, limit and cursor of the account list. The cursor
// is opaque: the last name of the previous page, encoded.
func accountsQuery(q url.Values) (store.AccountQuery, *apierr.Error) {
	aq := store.AccountQuery{Q: strings.TrimSpace(q.Get("q")), Limit: defaultAccountPage}
	if len(aq.Q) > maxAccountQuery {
		return aq, apierr.Invalid("q", "q must be at most %d characters.", maxAccountQuery)
	}
	n, e := limitParam(q, aq.Limit, maxAccountPage)
	if e != nil {
		return aq, e
	}
	aq.Limit = n
	if cs := q.Get("cursor"); cs != "" {
		b, err := base64.RawURLEncoding.DecodeString(cs)
		name, ok := strings.CutPrefix(string(b), accountCursorTag)
		if err != nil || !ok || name == "" {
			return aq, apierr.Invalid("cursor", "cursor must be the next_cursor of a previous page.")
		}
		aq.After = name
	}
	return aq, nil
}

// searchAccounts is one page of the accounts aq selects and the cursor of
// the next ("" at the end).
func (c *Console) searchAccounts(ctx context.Context, aq store.AccountQuery) ([]store.AccountRow, string, error) {
	want := aq.Limit
	aq.Limit++ // one more tells whether there is a next page
	rows, err := c.Store.SearchAccounts(ctx, aq)
	if err != nil || len(rows) <= want {
		return rows, "", err
	}
	rows = rows[:want]
	return rows, base64.RawURLEncoding.EncodeToString([]byte(accountCursorTag + rows[want-1].Name)), nil
}

// adminAccountOf is a row of the accounts list; keys counts its live keys.
func (c *Console) adminAccountOf(x store.AccountRow, keys int) web.AdminAccount {
	v := web.AdminAccount{ID: x.ID, Name: x.Name, Balance: x.Balance, Spent: x.Spent, Keys: keys, Disabled: x.Disabled(),
		Admin: x.Admin, AdminBy: AdminEntry(c.Admins, x.Identities), CreatedAt: x.CreatedAt}
	var seen time.Time
	for _, id := range x.Identities {
		v.Logins = append(v.Logins, id.Provider+":"+id.Login)
		if id.Email != "" && !id.LastSeenAt.Before(seen) {
			v.Email, seen = id.Email, id.LastSeenAt
		}
	}
	return v
}

// liveKeys counts an account's keys that are not revoked.
func (c *Console) liveKeys(ctx context.Context, accountID string) (int, error) {
	ks, err := c.Store.KeysOf(ctx, accountID)
	n := 0
	for _, k := range ks {
		if !k.Revoked() {
			n++
		}
	}
	return n, err
}

// adminAccountPage is one page of the accounts list for the page and the
// API, and the next page's cursor.
func (c *Console) adminAccountList(ctx context.Context, aq store.AccountQuery) ([]web.AdminAccount, []store.AccountRow, string, error) {
	rows, next, err := c.searchAccounts(ctx, aq)
	if err != nil {
		return nil, nil, "", err
	}
	out := make([]web.AdminAccount, 0, len(rows))
	for _, x := range rows {
		n, err := c.liveKeys(ctx, x.ID)
		if err != nil {
			return nil, nil, "", err
		}
		out = append(out, c.adminAccountOf(x, n))
	}
	return out, rows, next, nil
}

type identityJSON struct {
	Provider string `json:"provider"`
	Subject  string `json:"subject"`
	Login    string `json:"login"`
	Email    string `json:"email"`
}

type accountJSON struct {
	Account    string         `json:"account"` // the name
	Name       string         `json:"name"`    // the newest sign-in's login
	Email      string         `json:"email"`
	Identities []identityJSON `json:"identities"`
	Role       string         `json:"role"`
	AdminBy    string         `json:"admin_by,omitempty"` // the console.admins entry granting the role
	Balance    string         `json:"balance"`
	Disabled   bool           `json:"disabled"`
	CreatedAt  time.Time      `json:"created_at"`
}

func (c *Console) accountJSONOf(x store.AccountRow) accountJSON {
	j := accountJSON{Account: x.Name, Identities: []identityJSON{}, Role: store.RoleUser, Balance: x.Balance.String(),
		Disabled: x.Disabled(), CreatedAt: x.CreatedAt.UTC(), AdminBy: AdminEntry(c.Admins, x.Identities)}
	if x.Admin || j.AdminBy != "" {
		j.Role = store.RoleAdmin
	}
	var seen time.Time
	for _, id := range x.Identities {
		j.Identities = append(j.Identities, identityJSON{Provider: id.Provider, Subject: id.Subject, Login: id.Login, Email: id.Email})
		if !id.LastSeenAt.Before(seen) {
			j.Name, seen = id.Login, id.LastSeenAt
			if id.Email != "" {
				j.Email = id.Email
			}
		}
	}
	return j
}

// apiAccounts serves GET /console/api/admin/accounts: accounts whose name,
// sign-in login or subject, or e-mail contain q, by name, paged.
func (c *Console) apiAccounts(w http.ResponseWriter, r *http.Request, _ store.Session, _ store.Account) {
	aq, e := accountsQuery(r.URL.Query())
	if e != nil {
		fail(w, e)
		return
	}
	rows, next, err := c.searchAccounts(r.Context(), aq)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	data := make([]accountJSON, 0, len(rows))
	for _, x := range rows {
		data = append(data, c.accountJSONOf(x))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "next_cursor": cursorOrNil(next)})
}

// accountRow is the account called name with its identities; a 404 when
// there is none.
func (c *Console) accountRow(ctx context.Context, name string) (store.AccountRow, *apierr.Error) {
	a, e := c.accountNamed(ctx, name)
	if e != nil {
		return store.AccountRow{}, e
	}
	ids, err := c.Store.ListIdentities(ctx, a.ID)
	if err != nil {
		return store.AccountRow{}, apierr.Internal(err)
	}
	return store.AccountRow{Account: a, Identities: ids}, nil
}
