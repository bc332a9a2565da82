package console

import (
	"crypto/sha256"
	"errors"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/store"
)

// The one-time admin sign-in link `modelgate admin login-link` prints:
// GET shows a confirmation page, POST uses the link.

// AdminLinkTTL is how long a link from `modelgate admin login-link` works.
const AdminLinkTTL = 15 * time.Minute

// DefaultAdminAccount is the account a login link signs in as by default.
const DefaultAdminAccount = "admin"

// NewLoginLink makes a link secret and its stored record; the URL to print
// is base + "/console/admin-link?token=" + secret.
func NewLoginLink(account string, now time.Time) (string, store.LoginLink) {
	secret := randomToken()
	sum := sha256.Sum256([]byte(secret))
	return secret, store.LoginLink{ID: newID("link_"), Hash: sum[:], Account: account, CreatedAt: now, ExpiresAt: now.Add(AdminLinkTTL)}
}

// adminLinkConfirm is GET /console/admin-link: a page whose button posts
// the token. Opening the link changes nothing, so a link preview, a mail
// scanner or a HEAD request cannot use it up before the operator does.
func (c *Console) adminLinkConfirm(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	if !tokenShaped(token) {
		c.errorPage(w, http.StatusBadRequest, c.bare(r), "page.link_invalid", "page.link_incomplete")
		return
	}
	c.Pages.Render(w, http.StatusOK, "adminlink", web.AdminLink{Layout: c.bare(r), Token: token})
}

// linkIncomplete is the refusal of a token that is missing or cannot be one.
const linkIncomplete = "page.link_incomplete"

// tokenShaped reports whether s could be a link's token (randomToken's
// form, with some slack): a guard before anything is hashed or looked up.
func tokenShaped(s string) bool { return s != "" && len(s) <= 100 }

// adminLinkUse is POST /console/admin-link: it burns the link, signs the
// browser in as the link's account with the admin role (creating the
// account when missing) and goes to the admin pages.
func (c *Console) adminLinkUse(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	token := r.PostFormValue("token")
	refused := func(msg string) {
		c.errorPage(w, http.StatusBadRequest, c.bare(r), "page.link_invalid", msg)
	}
	if !tokenShaped(token) {
		refused(linkIncomplete)
		return
	}
	sum := sha256.Sum256([]byte(token))
	l, err := c.Store.UseLoginLink(ctx, sum[:], c.now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		refused("page.link_unknown")
		return
	case errors.Is(err, store.ErrConflict):
		refused("page.link_used")
		return
	case err != nil:
		c.internal(w, r, err)
		return
	}
	acct, err := c.Store.AccountByName(ctx, l.Account)
	if errors.Is(err, store.ErrNotFound) {
		acct = store.Account{ID: newID("acct_"), Name: l.Account, CreatedAt: c.now()}
		if err = c.Store.CreateAccount(ctx, acct); errors.Is(err, store.ErrConflict) {
			acct, err = c.Store.AccountByName(ctx, l.Account)
		}
	}
	if err == nil {
		err = c.Store.SetAccountAdmin(ctx, acct.ID, true)
		acct.Admin = true
	}
	if err == nil {
		err = c.startSession(ctx, w, r, acct)
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	c.log().InfoContext(ctx, "console: admin signed in with a login link", "account", acct.Name, "link", l.ID)
	http.Redirect(w, r, "/console/admin", http.StatusSeeOther)
}
