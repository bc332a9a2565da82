package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/store"
)

// MaxKeyName is the longest key name, in characters.
const MaxKeyName = 100

type meJSON struct {
	Account   string   `json:"account"` // the account's name ("github:octocat")
	Name      string   `json:"name"`    // the person: the login of the identity signed in last
	Email     string   `json:"email"`   // the most recently used identity's verified email, or ""
	Role      string   `json:"role"`
	Balance   string   `json:"balance"`
	Currency  string   `json:"currency"`
	CSRFToken string   `json:"csrf_token"`
	Groups    []string `json:"groups"`   // groups keys may be bound to
	Disabled  bool     `json:"disabled"` // the account is disabled (see enabled)
}

func (c *Console) me(w http.ResponseWriter, r *http.Request, s store.Session, a store.Account) {
	ids, err := c.Store.ListIdentities(r.Context(), a.ID)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	// The identity signed in last gives the person's name and email.
	var name, email string
	var seen time.Time
	for _, id := range ids {
		if !id.LastSeenAt.Before(seen) {
			name, seen = id.Login, id.LastSeenAt
			if id.Email != "" {
				email = id.Email
			}
		}
	}
	groups := c.Groups
	if groups == nil {
		groups = []string{}
	}
	writeJSON(w, http.StatusOK, meJSON{Account: a.Name, Name: name, Email: email, Role: s.Role,
		Balance: a.Balance.String(), Currency: c.Currency, CSRFToken: s.CSRF, Groups: groups, Disabled: a.Disabled()})
}

type keyJSON struct {
	ID         string     `json:"id"`
	Key        string     `json:"key,omitempty"` // the secret, only in the answer to its creation
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	Group      string     `json:"group"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	SpendCap   *string    `json:"spend_cap"`
	Disabled   bool       `json:"disabled"`
	// MonthSpent is what the key spent this UTC calendar month (list and
	// PATCH answers; not on creation).
	MonthSpent string `json:"month_spent,omitempty"`
	Status     string `json:"status,omitempty"` // active, disabled, expired or revoked; not on creation
}

func (c *Console) keyJSON(k store.Key, withStatus bool) keyJSON {
	j := keyJSON{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Group: k.Group, CreatedAt: k.CreatedAt.UTC(), Disabled: k.Disabled()}
	if !k.ExpiresAt.IsZero() {
		t := k.ExpiresAt.UTC()
		j.ExpiresAt = &t
	}
	if !k.LastUsedAt.IsZero() {
		t := k.LastUsedAt.UTC()
		j.LastUsedAt = &t
	}
	if k.SpendCap > 0 {
		s := k.SpendCap.String()
		j.SpendCap = &s
	}
	if withStatus {
		j.Status = c.keyStatus(k)
	}
	return j
}

// keyStatus is the key's state as the list shows it: revoked, disabled,
// expired or active (the first that applies).
func (c *Console) keyStatus(k store.Key) string {
	switch {
	case k.Revoked():
		return "revoked"
	case k.Disabled():
		return "disabled"
	case k.Expired(c.now()):
		return "expired"
	}
	return "active"
}

func (c *Console) listKeys(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	own, err := c.Store.KeysOf(r.Context(), a.ID)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	spent, err := c.monthSpent(r.Context(), a.ID)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	data := []keyJSON{}
	for _, k := range own {
		j := c.keyJSON(k, true)
		j.MonthSpent = spent[k.ID].String()
		data = append(data, j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

type createKeyRequest struct {
	Name      string  `json:"name"`
	Group     string  `json:"group"`
	ExpiresAt *string `json:"expires_at"`
	SpendCap  *string `json:"spend_cap"`
}

func (c *Console) createKey(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	var req createKeyRequest
	if e := decode(w, r, &req); e != nil {
		fail(w, e)
		return
	}
	j, e := c.newKey(r.Context(), a, req)
	if e != nil {
		fail(w, e)
		return
	}
	writeJSON(w, http.StatusCreated, j)
}

// newKey validates req and creates the key; the answer carries the secret.
func (c *Console) newKey(ctx context.Context, a store.Account, req createKeyRequest) (keyJSON, *apierr.Error) {
	name, e := cleanKeyName(req.Name)
	if e != nil {
		return keyJSON{}, e
	}
	if !slices.Contains(c.Groups, req.Group) {
		return keyJSON{}, apierr.Invalid("group", "group must be one of the groups listed by /console/api/me.")
	}
	now := c.now()
	k := store.Key{ID: newID("key_"), AccountID: a.ID, Group: req.Group, Name: name, CreatedAt: now}
	if req.SpendCap != nil {
		if k.SpendCap, e = parseCap(*req.SpendCap); e != nil {
			return keyJSON{}, e
		}
	}
	if req.ExpiresAt != nil && *req.ExpiresAt != "" {
		if k.ExpiresAt, e = parseExpiry(*req.ExpiresAt, now); e != nil {
			return keyJSON{}, e
		}
	}
	secret, display, hash := apikey.Generate()
	k.Prefix, k.Hash = display, hash
	if err := c.Store.CreateKey(ctx, k); err != nil {
		return keyJSON{}, apierr.Internal(err)
	}
	c.log().InfoContext(ctx, "console: key created", "account", a.Name, "key", k.ID)
	j := c.keyJSON(k, false)
	j.Key = secret
	return j, nil
}

func (c *Console) revokeKey(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	if e := c.dropKey(r.Context(), a, r.PathValue("id")); e != nil {
		fail(w, e)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// dropKey revokes the account's key id; another account's key is a 404.
// The gateway's key cache (auth_cache_ttl, 1 s by default) bounds how long
// the key keeps working.
func (c *Console) dropKey(ctx context.Context, a store.Account, id string) *apierr.Error {
	k, err := c.Store.KeyByID(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && k.AccountID != a.ID:
		return notFound("No such key.")
	case err != nil:
		return apierr.Internal(err)
	}
	if _, err := c.Store.RevokeKey(ctx, k.ID, c.now()); err != nil {
		return apierr.Internal(err)
	}
	c.log().InfoContext(ctx, "console: key revoked", "account", a.Name, "key", k.ID)
	return nil
}

// decode reads a JSON object of at most maxBody bytes into v, refusing
// unknown members and trailing data.
func decode(w http.ResponseWriter, r *http.Request, v any) *apierr.Error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest,
				Code: apierr.CodeRequestTooLarge, Message: "The request body is too large."}
		}
		return apierr.Invalid("", "Could not read the request body.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || dec.More() {
		return apierr.Invalid("", "The body must be a JSON object like {\"name\": \"laptop\", \"group\": \"default\"}.")
	}
	return nil
}
