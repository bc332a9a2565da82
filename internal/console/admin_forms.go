package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/console/web"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// The operator's forms. Each answers 303 to a GET page with ?done=…; a
// refused one renders the page it came from with the reason and a 4xx.

// accountURL is the operator's page of the account called name.
func accountURL(name string) string { return "/console/admin/accounts/" + url.PathEscape(name) }

// formTarget is the account the path's {id} names; when there is none it
// answers the accounts section with a 404 and returns false.
func (c *Console) formTarget(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) (store.Account, bool) {
	target, err := c.Store.AccountByID(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		c.renderAdmin(w, r, s, a, web.Admin{Section: "accounts"}, &web.Flash{Kind: "error", Message: c.text(r, "err.admin_no_account")}, http.StatusNotFound)
		return target, false
	} else if err != nil {
		c.internal(w, r, err)
		return target, false
	}
	return target, true
}

// refuseOn renders target's page with msg and status.
func (c *Console) refuseOn(w http.ResponseWriter, r *http.Request, s store.Session, a, target store.Account, status int, msg string) {
	c.renderAccount(w, r, s, a, target, &web.Flash{Kind: "error", Message: msg}, status)
}

func (c *Console) adjustForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	target, ok := c.formTarget(w, r, s, a)
	if !ok {
		return
	}
	refuse := func(msg string) { c.refuseOn(w, r, s, a, target, http.StatusBadRequest, msg) }
	amount, err := money.Parse(strings.TrimPrefix(strings.TrimSpace(r.PostFormValue("amount")), "+"))
	if err != nil || amount == 0 || amount > money.Max/1000 || amount < -money.Max/1000 {
		refuse(c.text(r, "err.admin_amount"))
		return
	}
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if reason == "" || utf8.RuneCountInString(reason) > maxReason || !utf8.ValidString(reason) {
		refuse(c.text(r, "err.admin_reason", maxReason))
		return
	}
	if target.Balance+amount < 0 {
		refuse(c.text(r, "err.admin_below_zero", web.Money(target.Balance, c.Currency)))
		return
	}
	ctx := r.Context()
	_, err = c.Store.Post(ctx, store.LedgerEntry{AccountID: target.ID, Kind: store.KindAdjustment, Amount: amount,
		Ref: newID("adjust_"), Note: "console, by " + a.Name + ": " + reason, Time: c.now()})
	if err != nil {
		c.internal(w, r, err)
		return
	}
	c.credited(target.ID)
	c.log().InfoContext(ctx, "console: balance adjusted", "admin", a.Name, "account", target.Name, "amount", amount.String(), "reason", reason)
	http.Redirect(w, r, accountURL(target.Name)+"?done=adjusted", http.StatusSeeOther)
}

func (c *Console) disableForm(disable bool) userHandler {
	return func(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
		target, ok := c.formTarget(w, r, s, a)
		if !ok {
			return
		}
		var at time.Time
		done := "enabled"
		if disable {
			at, done = c.now(), "disabled"
		}
		if disable && target.ID == a.ID {
			c.refuseOn(w, r, s, a, target, http.StatusBadRequest, c.text(r, "err.admin_disable_self"))
			return
		}
		if err := c.Store.SetAccountDisabled(r.Context(), target.ID, at); err != nil {
			c.internal(w, r, err)
			return
		}
		c.log().InfoContext(r.Context(), "console: account "+done, "admin", a.Name, "account", target.Name)
		http.Redirect(w, r, accountURL(target.Name)+"?done="+done, http.StatusSeeOther)
	}
}

// adminKeyForm disables, enables or revokes any account's key
// ({op} is disable, enable or revoke).
func (c *Console) adminKeyForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	target, ok := c.formTarget(w, r, s, a)
	if !ok {
		return
	}
	ctx := r.Context()
	op, keyID := r.PathValue("op"), r.PathValue("key")
	k, err := c.Store.KeyByID(ctx, keyID)
	if errors.Is(err, store.ErrNotFound) || err == nil && k.AccountID != target.ID || !slices.Contains([]string{"disable", "enable", "revoke"}, op) {
		c.refuseOn(w, r, s, a, target, http.StatusNotFound, c.text(r, "err.admin_no_key"))
		return
	} else if err != nil {
		c.internal(w, r, err)
		return
	}
	if k.Revoked() {
		c.refuseOn(w, r, s, a, target, http.StatusConflict, c.text(r, "err.admin_key_revoked"))
		return
	}
	now := c.now()
	switch op {
	case "revoke":
		_, err = c.Store.RevokeKey(ctx, k.ID, now)
	default:
		off := op == "disable"
		_, err = c.Store.UpdateKey(ctx, target.ID, k.ID, store.KeyUpdate{Disabled: &off}, now)
	}
	if errors.Is(err, store.ErrConflict) {
		c.refuseOn(w, r, s, a, target, http.StatusConflict, c.text(r, "err.admin_key_revoked"))
		return
	} else if err != nil {
		c.internal(w, r, err)
		return
	}
	c.log().InfoContext(ctx, "console: key "+op+"d by an admin", "admin", a.Name, "account", target.Name, "key", k.ID)
	http.Redirect(w, r, accountURL(target.Name)+"?done=key-"+op+"d", http.StatusSeeOther)
}

// newCodes is what the codes form reveals to the page it redirects to.
type newCodes struct {
	Batch string   `json:"batch"`
	Codes []string `json:"codes"`
}

// revealedCodes are the codes the codes form just created, shown once,
// and their batch's label.
func (c *Console) revealedCodes(w http.ResponseWriter, r *http.Request) ([]string, string) {
	b, ok := c.revealed(w, r, RevealCodes)
	var nc newCodes
	if !ok || json.Unmarshal(b, &nc) != nil {
		return nil, ""
	}
	return nc.Codes, nc.Batch
}

func (c *Console) codesForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	refuse := func(msg string) {
		c.renderAdmin(w, r, s, a, web.Admin{Section: "codes"}, &web.Flash{Kind: "error", Message: msg}, http.StatusBadRequest)
	}
	batch := strings.TrimSpace(r.PostFormValue("batch"))
	if batch == "" || utf8.RuneCountInString(batch) > maxBatchLabel || !utf8.ValidString(batch) {
		refuse(c.text(r, "err.admin_batch", maxBatchLabel))
		return
	}
	count, err := strconv.Atoi(r.PostFormValue("count"))
	if err != nil || count < 1 || count > maxCodesPerBatch {
		refuse(c.text(r, "err.admin_count", maxCodesPerBatch))
		return
	}
	amount, err := money.Parse(r.PostFormValue("amount"))
	if err != nil || amount <= 0 || amount > money.Max/1000 {
		refuse(c.text(r, "err.admin_code_amount"))
		return
	}
	now := c.now()
	var expires time.Time
	if e := r.PostFormValue("expires"); e != "" {
		d, err := time.Parse(time.DateOnly, e)
		if err != nil || !d.Add(day).After(now) {
			refuse(c.text(r, "err.admin_code_expiry"))
			return
		}
		expires = d.Add(day) // the codes work through the chosen day (UTC)
	}
	codes := make([]store.RedeemCode, count)
	shown := newCodes{Batch: batch, Codes: make([]string, count)}
	for i := range codes {
		code, hash := NewCode()
		shown.Codes[i] = code
		codes[i] = store.RedeemCode{ID: newID("code_"), Hash: hash, Batch: batch, Amount: amount, CreatedAt: now, ExpiresAt: expires}
	}
	payload, err := json.Marshal(shown)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	// Reveal first: when the codes cannot be handed to the page, none are
	// stored, so no code exists that nobody has seen.
	if err := c.reveal(w, r, RevealCodes, payload); err != nil {
		refuse(err.Error())
		return
	}
	if err := c.Store.CreateCodes(r.Context(), codes); err != nil {
		http.SetCookie(w, &http.Cookie{Name: RevealCookie, Value: "", Path: sessionPath, MaxAge: -1, HttpOnly: true,
			Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
		c.internal(w, r, err)
		return
	}
	c.log().InfoContext(r.Context(), "console: codes created", "admin", a.Name, "batch", batch, "count", count, "amount", amount.String())
	http.Redirect(w, r, "/console/admin?section=codes&done=codes-created", http.StatusSeeOther)
}

// testForm sends a provider a test request and answers 303 to the
// providers page, which shows how it went once (the result rides in the
// reveal cookie, like a new key): a reload does not send the test again.
func (c *Console) testForm(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	name := r.PathValue("name")
	v := web.Admin{Section: "providers"}
	if c.Operator == nil || !slices.ContainsFunc(c.Operator.Providers(), func(p web.AdminProvider) bool { return p.Name == name }) {
		c.renderAdmin(w, r, s, a, v, &web.Flash{Kind: "error", Message: c.text(r, "err.admin_no_provider")}, http.StatusNotFound)
		return
	}
	res := c.Operator.TestProvider(r.Context(), name)
	b, err := json.Marshal(res)
	if err == nil {
		err = c.reveal(w, r, RevealTest, b)
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	http.Redirect(w, r, "/console/admin?section=providers", http.StatusSeeOther)
}

// revealedTest is the result of the test request the providers page was
// redirected after, once; nil when there is none.
func (c *Console) revealedTest(w http.ResponseWriter, r *http.Request) *web.TestResult {
	b, ok := c.revealed(w, r, RevealTest)
	if !ok {
		return nil
	}
	var res web.TestResult
	if json.Unmarshal(b, &res) != nil {
		return nil
	}
	return &res
}
