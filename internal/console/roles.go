package console

import (
	"context"
	"errors"
	"net/http"
	"strings"

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

// adminGrants maps the accounts console.admins makes admin to the entry
// that does, for the accounts page (one lookup per entry, not per account).
func (c *Console) adminGrants(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	for _, a := range c.Admins {
		provider, subject, ok := strings.Cut(a, ":")
		if !ok || subject == "" {
			continue
		}
		id, err := c.Store.IdentityByKey(ctx, provider, subject)
		if errors.Is(err, store.ErrNotFound) {
			continue // nobody signed in with it yet
		}
		if err != nil {
			return nil, err
		}
		if _, dup := out[id.AccountID]; !dup {
			out[id.AccountID] = a
		}
	}
	return out, nil
}

// revokeAdminForm clears an account's admin flag. An admin cannot revoke
// their own role (so the last one cannot lock everybody out by a slip);
// the role console.admins grants stays until the configuration changes,
// and the page says so.
func (c *Console) revokeAdminForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	ctx := r.Context()
	refuse := func(status int, msg string) {
		c.renderAdmin(w, r, s, a, web.Admin{Section: "accounts"}, &web.Flash{Kind: "error", Message: msg}, status)
	}
	id := r.PathValue("id")
	if id == a.ID {
		refuse(http.StatusBadRequest, "You cannot revoke your own admin role; ask another admin, or run `modelgate admin revoke`.")
		return
	}
	target, err := c.Store.AccountByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		refuse(http.StatusNotFound, "No such account.")
		return
	} else if err != nil {
		c.internal(w, r, err)
		return
	}
	if err := c.Store.SetAccountAdmin(ctx, target.ID, false); err != nil {
		c.internal(w, r, err)
		return
	}
	c.log().InfoContext(ctx, "console: admin role revoked", "admin", a.Name, "account", target.Name)
	by, err := c.adminBy(ctx, target.ID)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	if by != "" {
		refuse(http.StatusConflict, "The account's admin flag is cleared, but console.admins still grants it the role through "+by+
			": remove that entry from the configuration and restart the gateway.")
		return
	}
	http.Redirect(w, r, "/console/admin?section=accounts&done=admin-revoked", http.StatusSeeOther)
}
