package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// keyRoutes adds /console/keys and its forms. Every form answers 303 back
// to /console/keys; a refused one re-renders the page with the reason.
func (c *Console) keyRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /console/keys", c.page(c.keysPage))
	m.HandleFunc("POST /console/keys", c.form(c.enabledForm(c.createKeyForm)))
	m.HandleFunc("POST /console/keys/{id}", c.form(c.updateKeyForm))
	m.HandleFunc("POST /console/keys/{id}/disable", c.form(c.switchKeyForm(true)))
	m.HandleFunc("POST /console/keys/{id}/enable", c.form(c.switchKeyForm(false)))
	m.HandleFunc("POST /console/keys/{id}/revoke", c.form(c.revokeKeyForm))
}

// revealedKey is the RevealKey payload: a key just created.
type revealedKey struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
}

// keysPage shows the keys; on the first GET after a creation, the new
// secret too (once: a reload shows the list without it).
func (c *Console) keysPage(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	v := web.Keys{Form: web.KeyForm{Group: firstOr(c.Groups)}}
	flash := c.flashFrom(r)
	if b, ok := c.revealed(w, r, RevealKey); ok {
		var nk revealedKey
		if err := json.Unmarshal(b, &nk); err == nil && nk.Secret != "" {
			v.NewKey = &web.NewKey{Name: nk.Name, Secret: nk.Secret}
			flash = &web.Flash{Kind: "ok", Message: c.text(r, "flash.key_created")}
		}
	}
	c.renderKeys(w, r, s, a, v, flash, http.StatusOK)
}

func firstOr(xs []string) string {
	if len(xs) > 0 {
		return xs[0]
	}
	return ""
}

// keyEdit is a refused edit form, echoed in its row.
type keyEdit struct {
	id   string
	form web.KeyForm
}

func (c *Console) renderKeys(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account, v web.Keys, flash *web.Flash, status int) {
	c.renderKeysEdit(w, r, s, a, v, flash, status, keyEdit{})
}

// renderKeysEdit is renderKeys with a refused edit's values in its row.
func (c *Console) renderKeysEdit(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account, v web.Keys, flash *web.Flash, status int, edit keyEdit) {
	keys, err := c.ownKeys(r, a)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	month, err := c.monthSpent(r.Context(), a.ID)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	v.Layout = c.layout(r, s, a, "title.keys", "keys")
	v.Flash = flash
	v.Groups = c.Groups
	v.GroupInfo = c.groupInfo()
	for _, k := range keys {
		row := web.Key{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Group: k.Group, CreatedAt: k.CreatedAt,
			LastUsedAt: k.LastUsedAt, ExpiresAt: k.ExpiresAt, LastDay: lastDay(k.ExpiresAt), SpendCap: k.SpendCap,
			Spent: k.Spent, MonthSpent: month[k.ID], Disabled: k.Disabled(), Status: c.keyStatus(k)}
		row.Edit = web.KeyForm{Name: k.Name, SpendCap: capValue(k.SpendCap)}
		if !row.LastDay.IsZero() {
			row.Edit.Expires = row.LastDay.Format(time.DateOnly)
		}
		if k.ID == edit.id {
			row.Edit, row.EditOpen = edit.form, true
		}
		v.Keys = append(v.Keys, row)
	}
	c.Pages.Render(w, status, "keys", v)
}

// groupInfo describes the groups a key may be bound to (their models and
// price ratio), as the operator configured them.
func (c *Console) groupInfo() []web.AdminGroup {
	if c.Operator == nil {
		return nil
	}
	all := map[string]web.AdminGroup{}
	for _, g := range c.Operator.Groups() {
		all[g.Name] = g
	}
	var out []web.AdminGroup
	for _, name := range c.Groups {
		if g, ok := all[name]; ok {
			out = append(out, g)
		}
	}
	return out
}

// The expiry date in the forms is a UTC day: the key works through it and
// stops at the next midnight UTC. lastDay is the inverse, so the list and
// the edit form show the day that was picked.

// endOfDay reads a picked date ("2026-12-28") as the instant the key stops
// working: the end of that day, UTC.
func endOfDay(date string) (time.Time, bool) {
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return time.Time{}, false
	}
	return d.Add(day), true
}

// lastDay is the UTC day an expiry instant ends: the day a key expiring
// at midnight worked through (the zero time stays zero).
func lastDay(expires time.Time) time.Time {
	if expires.IsZero() {
		return expires
	}
	return expires.UTC().Add(-time.Nanosecond).Truncate(day)
}

// formFlash turns a refusal into a flash in the page's language: the
// key forms' known refusals have catalogue texts, others their message.
func (c *Console) formFlash(r *http.Request, e *apierr.Error) *web.Flash {
	key := map[string]string{"name": "form.key_name", "spend_cap": "form.key_spend_cap", "expires_at": "form.key_expires",
		"group": "form.key_group"}[e.Param]
	if e.Code == CodeKeyRevoked {
		key = "form.key_revoked"
	}
	if key == "" {
		return c.errFlash(r, e)
	}
	if key == "form.key_name" {
		return &web.Flash{Kind: "error", Message: c.text(r, key, MaxKeyName)}
	}
	return &web.Flash{Kind: "error", Message: c.text(r, key)}
}

func (c *Console) createKeyForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	f := web.KeyForm{Name: r.PostFormValue("name"), Group: r.PostFormValue("group"), Expires: r.PostFormValue("expires"),
		SpendCap: r.PostFormValue("spend_cap")}
	req := createKeyRequest{Name: f.Name, Group: f.Group, SpendCap: &f.SpendCap}
	if f.Expires != "" {
		end, ok := endOfDay(f.Expires)
		if !ok {
			c.renderKeys(w, r, s, a, web.Keys{Form: f}, c.formFlash(r, badExpiry()), http.StatusBadRequest)
			return
		}
		x := end.Format(time.RFC3339)
		req.ExpiresAt = &x
	}
	j, e := c.newKey(r.Context(), a, req)
	if e != nil {
		c.renderKeys(w, r, s, a, web.Keys{Form: f}, c.formFlash(r, e), e.Status)
		return
	}
	b, _ := json.Marshal(revealedKey{Name: j.Name, Secret: j.Key})
	if err := c.reveal(w, r, RevealKey, b); err != nil {
		// Never lose a secret: show it on this answer instead.
		c.log().ErrorContext(r.Context(), "console: reveal key", "err", err)
		c.renderKeys(w, r, s, a, web.Keys{NewKey: &web.NewKey{Name: j.Name, Secret: j.Key}, Form: web.KeyForm{Group: j.Group}},
			&web.Flash{Kind: "ok", Message: c.text(r, "flash.key_created")}, http.StatusCreated)
		return
	}
	http.Redirect(w, r, "/console/keys", http.StatusSeeOther)
}

// updateKeyForm is the edit form: name, spend_cap ("" clears) and expires
// (a UTC date, "" clears; the date already set is kept as it is, even when
// past, so a rename of an expired key works).
func (c *Console) updateKeyForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	id := r.PathValue("id")
	k, err := c.Store.KeyByID(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || err == nil && k.AccountID != a.ID {
		c.noKeyPage(w, r, s, a)
		return
	} else if err != nil {
		c.internal(w, r, err)
		return
	}
	f := web.KeyForm{Name: r.PostFormValue("name"), Expires: r.PostFormValue("expires"), SpendCap: r.PostFormValue("spend_cap")}
	refuse := func(e *apierr.Error) {
		c.renderKeysEdit(w, r, s, a, web.Keys{Form: web.KeyForm{Group: firstOr(c.Groups)}}, c.formFlash(r, e), e.Status, keyEdit{id, f})
	}
	var u store.KeyUpdate
	name, e := cleanKeyName(f.Name)
	if e != nil {
		refuse(e)
		return
	}
	u.Name = &name
	capv, e := parseCap(f.SpendCap)
	if e != nil {
		refuse(e)
		return
	}
	u.SpendCap = &capv
	switch cur := lastDay(k.ExpiresAt); {
	case f.Expires == "":
		u.ExpiresAt = &time.Time{}
	case !cur.IsZero() && f.Expires == cur.Format(time.DateOnly):
		// unchanged
	default:
		end, ok := endOfDay(f.Expires)
		if !ok || !end.After(c.now()) {
			refuse(badExpiry())
			return
		}
		u.ExpiresAt = &end
	}
	if _, e := c.changeKey(r.Context(), a, id, u); e != nil {
		if e.Status == http.StatusNotFound {
			c.noKeyPage(w, r, s, a)
			return
		}
		refuse(e)
		return
	}
	http.Redirect(w, r, "/console/keys?done=key-updated", http.StatusSeeOther)
}

// switchKeyForm disables (or enables) a key.
func (c *Console) switchKeyForm(disable bool) userHandler {
	return func(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
		if _, e := c.changeKey(r.Context(), a, r.PathValue("id"), store.KeyUpdate{Disabled: &disable}); e != nil {
			if e.Status == http.StatusNotFound {
				c.noKeyPage(w, r, s, a)
				return
			}
			c.renderKeys(w, r, s, a, web.Keys{Form: web.KeyForm{Group: firstOr(c.Groups)}}, c.formFlash(r, e), e.Status)
			return
		}
		done := "key-enabled"
		if disable {
			done = "key-disabled"
		}
		http.Redirect(w, r, "/console/keys?done="+done, http.StatusSeeOther)
	}
}

func (c *Console) revokeKeyForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	if e := c.dropKey(r.Context(), a, r.PathValue("id")); e != nil {
		if e.Status == http.StatusNotFound {
			c.noKeyPage(w, r, s, a)
			return
		}
		c.renderKeys(w, r, s, a, web.Keys{Form: web.KeyForm{Group: firstOr(c.Groups)}}, c.errFlash(r, e), e.Status)
		return
	}
	http.Redirect(w, r, "/console/keys?done=revoked", http.StatusSeeOther)
}

// noKeyPage answers a form about a key that is not the user's (404).
func (c *Console) noKeyPage(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	c.errorPage(w, http.StatusNotFound, c.layout(r, s, a, "title.not_found", "keys"), "page.no_key", "page.no_key_msg")
}

// capValue is a spend cap as the edit form shows it ("" for none).
func capValue(m money.Micros) string {
	if m <= 0 {
		return ""
	}
	return web.Amount(m)
}
