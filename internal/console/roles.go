package console

import (
	"context"
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/store"
)

// The admin role has two sources, both read on every request:
//
//   - the account's own admin flag (store.Account.Admin), set by a used
//     login link and cleared by `modelgate admin revoke` or the accounts
//     page;
//   - console.admins, whose entries are provider:subject, the stable id of
//     one sign-in (github:4242), never a login or an account name: an
//     account's name comes from the login chosen at its first sign-in,
//     which anyone can pick.

// AdminEntry is the console.admins entry that grants the admin role to
// one of ids, or "" when none does.
func AdminEntry(admins []string, ids []store.Identity) string {
	for _, a := range admins {
		provider, subject, ok := strings.Cut(a, ":")
		if !ok || subject == "" {
			continue
		}
		for _, id := range ids {
			if id.Provider == provider && id.Subject == subject {
				return a
			}
		}
	}
	return ""
}

// roleOf is the console role of account a: admin when the account is
// flagged admin or one of its sign-ins is in console.admins.
func (c *Console) roleOf(ctx context.Context, a store.Account) (string, error) {
	if a.Admin {
		return store.RoleAdmin, nil
	}
	by, err := c.adminBy(ctx, a.ID)
	if err != nil || by == "" {
		return store.RoleUser, err
	}
	return store.RoleAdmin, nil
}

// adminBy is the console.admins entry granting the admin role to one of
// the account's sign-ins, or "".
func (c *Console) adminBy(ctx context.Context, accountID string) (string, error) {
	if len(c.Admins) == 0 {
		return "", nil
	}
	ids, err := c.Store.ListIdentities(ctx, accountID)
	if err != nil {
		return "", err
	}
	return AdminEntry(c.Admins, ids), nil
}

// revokeAdminForm clears an account's admin flag. An admin cannot revoke
// their own role (so the last one cannot lock everybody out by a slip);
// the role console.admins grants stays until the configuration changes,
// and the page says so (409).
func (c *Console) revokeAdminForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	target, ok := c.formTarget(w, r, s, a)
	if !ok {
		return
	}
	status, msg, err := c.setAdmin(r, a, target, false)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	if status != http.StatusOK {
		c.refuseOn(w, r, s, a, target, status, msg)
		return
	}
	http.Redirect(w, r, accountURL(target.Name)+"?done=admin-revoked", http.StatusSeeOther)
}

// grantAdminForm sets an account's admin flag.
func (c *Console) grantAdminForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	target, ok := c.formTarget(w, r, s, a)
	if !ok {
		return
	}
	if _, _, err := c.setAdmin(r, a, target, true); err != nil {
		c.internal(w, r, err)
		return
	}
	http.Redirect(w, r, accountURL(target.Name)+"?done=admin-granted", http.StatusSeeOther)
}

// setAdmin grants or takes target's admin flag for operator a. A refusal
// comes back as a status and a message in r's language: 400 for a's own
// removal (nothing changes), 409 when the flag is cleared but
// console.admins still grants the role.
func (c *Console) setAdmin(r *http.Request, a, target store.Account, admin bool) (int, string, error) {
	ctx := r.Context()
	if !admin && target.ID == a.ID {
		return http.StatusBadRequest, c.text(r, "err.admin_revoke_self"), nil
	}
	if err := c.Store.SetAccountAdmin(ctx, target.ID, admin); err != nil {
		return 0, "", err
	}
	if admin {
		c.log().InfoContext(ctx, "console: admin role granted", "admin", a.Name, "account", target.Name)
		return http.StatusOK, "", nil
	}
	c.log().InfoContext(ctx, "console: admin role revoked", "admin", a.Name, "account", target.Name)
	by, err := c.adminBy(ctx, target.ID)
	if err != nil {
		return 0, "", err
	}
	if by != "" {
		return http.StatusConflict, c.text(r, "err.admin_config_grant", by), nil
	}
	return http.StatusOK, "", nil
}

// apiRole serves POST /console/api/admin/accounts/{account}/role
// {"admin": true|false}: the account as the account list shows it.
func (c *Console) apiRole(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	var req struct {
		Admin *bool `json:"admin"`
	}
	if e := decode(w, r, &req); e != nil {
		fail(w, e)
		return
	}
	if req.Admin == nil {
		fail(w, apierr.Invalid("admin", "admin must be true or false."))
		return
	}
	ctx := r.Context()
	row, e := c.accountRow(ctx, r.PathValue("account"))
	if e != nil {
		fail(w, e)
		return
	}
	status, _, err := c.setAdmin(r, a, row.Account, *req.Admin)
	switch {
	case err != nil:
		fail(w, apierr.Internal(err))
		return
	case status == http.StatusBadRequest:
		fail(w, apierr.Invalid("admin", "%s", c.Pages.Text(web.En, "err.admin_revoke_self")))
		return
	case status == http.StatusConflict:
		by, _ := c.adminBy(ctx, row.ID)
		fail(w, &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "granted_by_config",
			Param: "admin", Message: c.Pages.Text(web.En, "err.admin_config_grant", by)})
		return
	}
	row.Admin = *req.Admin
	writeJSON(w, http.StatusOK, c.accountJSONOf(row))
}
