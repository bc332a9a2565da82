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

// login starts a sign-in: the flow goes into the signed cookie, the
// browser to the provider.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	p, ok := c.Providers[name]
	if !ok {
		fail(w, notFound(fmt.Sprintf("No sign-in provider named %q.", name)))
		return
	}
	flow, authURL, err := p.Begin(r.Context(), c.redirectURL(r, name))
	if err != nil {
		c.log().ErrorContext(r.Context(), "console: sign-in could not start", "provider", name, "err", err)
		fail(w, &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeServer, Code: CodeSignInFailed,
			Message: "The sign-in provider is not available; try again later.", Err: err})
		return
	}
	payload, err := json.Marshal(flow)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: FlowCookie, Value: c.sign(payload), Path: flowPath,
		MaxAge: int(identity.FlowTTL / time.Second), HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, authURL, http.StatusFound)
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
	payload, err := c.verify(ck.Value)
	if err != nil {
		refuse("bad flow cookie", err)
		return
	}
	var flow identity.Flow
	if err := json.Unmarshal(payload, &flow); err != nil {
		refuse("bad flow cookie", err)
		return
	}
	claims, err := p.Finish(r.Context(), flow, c.redirectURL(r, name), q.Get("code"), q.Get("state"))
	if err != nil {
		refuse("finish", err)
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
