package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// CodeKeyRevoked answers a change to a revoked key (409).
const CodeKeyRevoked = "key_revoked"

// keyPatchFields are the members PATCH /console/api/keys/{id} takes.
var keyPatchFields = []string{"name", "spend_cap", "expires_at", "disabled"}

// patchKey is PATCH /console/api/keys/{id}: {name?, spend_cap? (decimal
// string or null), expires_at? (RFC 3339 or null), disabled?}; it answers
// the key as GET /console/api/keys shows it.
func (c *Console) patchKey(w http.ResponseWriter, r *http.Request, _ store.Session, a store.Account) {
	u, e := decodeKeyPatch(w, r, c.now())
	if e != nil {
		fail(w, e)
		return
	}
	k, e := c.changeKey(r.Context(), a, r.PathValue("id"), u)
	if e != nil {
		fail(w, e)
		return
	}
	spent, err := c.monthSpent(r.Context(), a.ID)
	if err != nil {
		fail(w, apierr.Internal(err))
		return
	}
	j := c.keyJSON(k, true)
	j.MonthSpent = spent[k.ID].String()
	writeJSON(w, http.StatusOK, j)
}

// decodeKeyPatch reads a PATCH body: a JSON object whose members are all
// in keyPatchFields; null clears a cap or an expiry.
func decodeKeyPatch(w http.ResponseWriter, r *http.Request, now time.Time) (store.KeyUpdate, *apierr.Error) {
	var u store.KeyUpdate
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return u, &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest,
				Code: apierr.CodeRequestTooLarge, Message: "The request body is too large."}
		}
		return u, apierr.Invalid("", "Could not read the request body.")
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil || dec.More() || m == nil {
		return u, apierr.Invalid("", "The body must be a JSON object like {\"name\": \"laptop\", \"spend_cap\": \"25\", \"expires_at\": null, \"disabled\": false}.")
	}
	for k := range m {
		if !slices.Contains(keyPatchFields, k) {
			return u, apierr.Broken(apierr.CodeUnknownParameter, k, "Unknown member %q: a key takes name, spend_cap, expires_at and disabled.", k)
		}
	}
	null := func(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
	if raw, ok := m["name"]; ok {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || null(raw) {
			return u, apierr.Invalid("name", "name must be a string.")
		}
		n, e := cleanKeyName(s)
		if e != nil {
			return u, e
		}
		u.Name = &n
	}
	if raw, ok := m["spend_cap"]; ok {
		var v money.Micros // null clears the cap
		if !null(raw) {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return u, badCap()
			}
			var e *apierr.Error
			if v, e = parseCap(s); e != nil {
				return u, e
			}
		}
		u.SpendCap = &v
	}
	if raw, ok := m["expires_at"]; ok {
		var t time.Time // null clears the expiry
		if !null(raw) {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return u, badExpiry()
			}
			var e *apierr.Error
			if t, e = parseExpiry(s, now); e != nil {
				return u, e
			}
		}
		u.ExpiresAt = &t
	}
	if raw, ok := m["disabled"]; ok {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil || null(raw) {
			return u, apierr.Invalid("disabled", "disabled must be true or false.")
		}
		u.Disabled = &b
	}
	return u, nil
}

// changeKey applies u to the account's key id: another account's key (or
// none) is a 404, a revoked one a 409.
func (c *Console) changeKey(ctx context.Context, a store.Account, id string, u store.KeyUpdate) (store.Key, *apierr.Error) {
	k, err := c.Store.UpdateKey(ctx, a.ID, id, u, c.now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Key{}, notFound("No such key.")
	case errors.Is(err, store.ErrConflict):
		return store.Key{}, &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: CodeKeyRevoked,
			Message: "This key is revoked: a revoked key cannot be changed or enabled again. Create a new key instead."}
	case err != nil:
		return store.Key{}, apierr.Internal(err)
	}
	c.log().InfoContext(ctx, "console: key changed", "account", a.Name, "key", k.ID)
	return k, nil
}

// cleanKeyName trims s and checks it is valid UTF-8 of at most MaxKeyName
// characters without control characters. Markup is allowed: it is stored
// as text and escaped wherever it is shown.
func cleanKeyName(s string) (string, *apierr.Error) {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxKeyName || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", apierr.Invalid("name", "name must be at most %d characters of text, without control characters.", MaxKeyName)
	}
	return s, nil
}

func badCap() *apierr.Error {
	return apierr.Invalid("spend_cap", "spend_cap must be a decimal amount of 0 or more with at most 6 decimals, like \"25\" or \"0.5\" (null or \"\" for no cap).")
}

// parseCap reads a spend cap: "" or "0" is no cap.
func parseCap(s string) (money.Micros, *apierr.Error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	v, err := money.Parse(s)
	if err != nil || v < 0 {
		return 0, badCap()
	}
	return v, nil
}

func badExpiry() *apierr.Error {
	return apierr.Invalid("expires_at", "expires_at must be an RFC 3339 time in the future, like 2030-01-02T15:04:05Z (null for never).")
}

// parseExpiry reads an RFC 3339 time after now.
func parseExpiry(s string, now time.Time) (time.Time, *apierr.Error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || !t.After(now) {
		return time.Time{}, badExpiry()
	}
	return t.UTC(), nil
}

// monthSpent is what each of the account's keys spent this UTC calendar
// month, by key id.
func (c *Console) monthSpent(ctx context.Context, accountID string) (map[string]money.Micros, error) {
	now := c.now()
	since := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	st, err := c.Store.UsageStats(ctx, accountID, since, now.Truncate(day).Add(day))
	if err != nil {
		return nil, err
	}
	out := make(map[string]money.Micros, len(st.ByKey))
	for _, g := range st.ByKey {
		out[g.Key] = g.Cost
	}
	return out, nil
}
