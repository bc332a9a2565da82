package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/identity"
	"github.com/modelgate/modelgate/internal/store"
)

// maxNameTries bounds the "-2", "-3"… suffixes tried for a new account name.
const maxNameTries = 100

func (c *Console) redirectURL(r *http.Request, name string) string {
	return c.base(r) + "/console/callback/" + name
}

// login starts a sign-in: the flow goes into the sealed cookie, the
// browser to the provider.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	p, ok := c.Providers[name]
	if !ok {
		fail(w, notFound(fmt.Sprintf("No sign-in provider named %q.", name)))
		return
	}
	// ?link=1 from a signed-in user links the identity to their account
	// instead of signing in; the flow cookie remembers whose session asked.
	var link string
	if r.URL.Query().Get("link") == "1" {
		s, _, err := c.session(r)
		if err != nil {
			http.Redirect(w, r, "/console/", http.StatusFound)
			return
		}
		link = s.ID
	}
	flow, authURL, err := p.Begin(r.Context(), c.redirectURL(r, name))
	if err != nil {
		c.log().ErrorContext(r.Context(), "console: sign-in could not start", "provider", name, "err", err)
		fail(w, &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeServer, Code: CodeSignInFailed,
			Message: "The sign-in provider is not available; try again later.", Err: err})
		return
	}
	payload, err := json.Marshal(flowCookie{Flow: flow, Link: link})
	var sealed string
	if err == nil {
		sealed, err = c.seal(payload)
	}
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: FlowCookie, Value: sealed, Path: flowPath,
		MaxAge: int(identity.FlowTTL / time.Second), HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, authURL, http.StatusFound)
}

// flowCookie is the sealed flow cookie's content: the provider's flow and,
// when the sign-in links an identity, the asking session's id.
type flowCookie struct {
	identity.Flow
	Link string `json:"link,omitempty"`
}

// linkIdentity adds the identity in cl to the account of the session that
// started the flow, which must still be the browser's session.
func (c *Console) linkIdentity(w http.ResponseWriter, r *http.Request, sessionID string, cl identity.Claims) {
	s, a, err := c.session(r)
	if err != nil || s.ID != sessionID {
		c.errorPage(w, http.StatusBadRequest, c.bare(r), "title.linking_failed", "page.linking_session")
		return
	}
	now := c.now()
	id := store.Identity{Provider: cl.Provider, Subject: cl.Subject, AccountID: a.ID, Login: cl.Login, Email: cl.Email,
		CreatedAt: now, LastSeenAt: now}
	err = c.Store.LinkIdentity(r.Context(), id)
	if errors.Is(err, store.ErrConflict) {
		if got, gerr := c.Store.IdentityByKey(r.Context(), cl.Provider, cl.Subject); gerr == nil && got.AccountID == a.ID {
			http.Redirect(w, r, "/console/?done=linked", http.StatusFound) // linked already
			return
		}
		c.errorPage(w, http.StatusConflict, c.layout(r, s, a, "title.linking_failed", "overview"), "page.linked_elsewhere", "page.linked_elsewhere_msg")
		return
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	c.log().InfoContext(r.Context(), "console: identity linked", "provider", cl.Provider, "account", a.Name)
	http.Redirect(w, r, "/console/?done=linked", http.StatusFound)
}

// callback ends a sign-in. Every refusal is the same 400; the reason is
// logged.
func (c *Console) callback(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	// The flow cookie is single-use whatever happens next.
	http.SetCookie(w, &http.Cookie{Name: FlowCookie, Value: "", Path: flowPath, MaxAge: -1,
		HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteLaxMode})
	refuse := func(reason string, err error) {
		c.log().WarnContext(r.Context(), "console: sign-in refused", "provider", name, "reason", reason, "err", err)
		fail(w, &apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest, Code: CodeSignInFailed,
			Message: "Sign-in failed; start again from the console.", Err: err})
	}
	p, ok := c.Providers[name]
	if !ok {
		refuse("unknown provider", nil)
		return
	}
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		refuse("provider error", fmt.Errorf("%s: %s", e, q.Get("error_description")))
		return
	}
	ck, err := r.Cookie(FlowCookie)
	if err != nil {
		refuse("no flow cookie", err)
		return
	}
	payload, err := c.open(ck.Value)
	if err != nil {
		refuse("bad flow cookie", err)
		return
	}
	var fc flowCookie
	if err := json.Unmarshal(payload, &fc); err != nil {
		refuse("bad flow cookie", err)
		return
	}
	claims, err := p.Finish(r.Context(), fc.Flow, c.redirectURL(r, name), q.Get("code"), q.Get("state"))
	if err != nil {
		refuse("finish", err)
		return
	}
	if fc.Link != "" {
		c.linkIdentity(w, r, fc.Link, claims)
		return
	}
	acct, err := c.accountFor(r.Context(), claims)
	if err != nil {
		c.log().ErrorContext(r.Context(), "console: sign-in account", "provider", name, "subject", claims.Subject, "err", err)
		fail(w, apierr.Internal(err))
		return
	}
	if err := c.startSession(r.Context(), w, r, acct); err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	c.log().InfoContext(r.Context(), "console: signed in", "provider", name, "account", acct.Name)
	http.Redirect(w, r, "/console/", http.StatusFound)
}

// accountFor returns the account of the identity in claims, signing up a
// new one on the first sign-in, and records the sign-in.
func (c *Console) accountFor(ctx context.Context, cl identity.Claims) (store.Account, error) {
	now := c.now()
	id, err := c.Store.IdentityByKey(ctx, cl.Provider, cl.Subject)
	if errors.Is(err, store.ErrNotFound) {
		id, err = c.signUp(ctx, cl, now)
	}
	if err != nil {
		return store.Account{}, err
	}
	id.Login, id.Email, id.LastSeenAt = cl.Login, cl.Email, now
	if err := c.Store.TouchIdentity(ctx, id); err != nil {
		return store.Account{}, err
	}
	return c.Store.AccountByID(ctx, id.AccountID)
}

// signUp creates the account "<provider>:<login or subject>" (with "-2",
// "-3"… when the name is taken) together with the identity.
func (c *Console) signUp(ctx context.Context, cl identity.Claims, now time.Time) (store.Identity, error) {
	handle := cl.Login
	if handle == "" {
		handle = cl.Subject
	}
	base := cl.Provider + ":" + handle
	for i := 1; i <= maxNameTries; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		a := store.Account{ID: newID("acct_"), Name: name, CreatedAt: now}
		id := store.Identity{Provider: cl.Provider, Subject: cl.Subject, AccountID: a.ID, Login: cl.Login, Email: cl.Email,
			CreatedAt: now, LastSeenAt: now}
		err := c.Store.SignUp(ctx, a, id)
		if err == nil {
			c.log().InfoContext(ctx, "console: signed up", "provider", cl.Provider, "account", name)
			return id, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return store.Identity{}, err
		}
		// Either the name is taken or a concurrent sign-in created the
		// identity first; then that one wins.
		if got, err := c.Store.IdentityByKey(ctx, cl.Provider, cl.Subject); err == nil {
			return got, nil
		}
	}
	return store.Identity{}, fmt.Errorf("console: no free account name for %q after %d tries", base, maxNameTries)
}
