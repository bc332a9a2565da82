package console

// A form that creates a secret (an API key, a batch of redeem codes) answers
// 303 like every form, so the secret must reach the page the browser is sent
// to without being recreated by a reload of that page. reveal hands it over:
//
//   - The POST handler calls c.reveal(w, r, kind, payload) and redirects.
//   - The GET page calls c.revealed(w, r, kind): the first GET after the
//     redirect gets the payload and clears the cookie; a reload gets nothing.
//
// The payload travels in mg_reveal, an HttpOnly, SameSite=Strict cookie
// scoped to /console/ that lives revealTTL, sealed with AES-256-GCM under a
// key of its own (derived from CookieKey) and bound to the kind, to the
// session (the SHA-256 of the session cookie) and to an expiry inside the
// sealed value: another session, another page, a changed or stale cookie
// reveal nothing. A payload too large for a cookie (a batch of 1000 codes)
// is sealed the same way and kept in the store (store.Console.PutReveal)
// for revealTTL under a random id, and the cookie carries only that id;
// whichever replica serves the GET takes it (deletes it) on the first read.
// The store holds it encrypted under a key only the console has.

import (
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// RevealCookie carries a just-created secret from a form's POST to the
// page it redirects to (see reveal).
const RevealCookie = "mg_reveal"

// Reveal kinds: which page may show a revealed payload.
const (
	RevealKey   = "key"   // a new API key: revealedKey JSON
	RevealCodes = "codes" // new redeem codes (admin page)
	RevealTest  = "test"  // a provider test's result (admin page)
)

const (
	// revealTTL is how long a revealed payload waits for its GET.
	revealTTL = 2 * time.Minute
	// maxRevealInline is the largest payload carried in the cookie itself
	// (sealed and base64-encoded it stays well under a browser's 4 KB).
	maxRevealInline = 2048
	// revealKeyLabel derives the reveal cookie's AES key from CookieKey.
	revealKeyLabel = "modelgate console reveal cookie AES-256-GCM key"
)

// revealValue is the sealed content of the cookie.
type revealValue struct {
	Kind    string `json:"k"`
	Session string `json:"s"` // base64url SHA-256 of the session cookie
	Expires int64  `json:"e"` // unix seconds
	Payload []byte `json:"p,omitempty"`
	Stash   string `json:"i,omitempty"` // the store's reveal id when Payload is too large
}

// revealAEAD is AES-256-GCM under a key derived from CookieKey for the
// reveal cookie only.
func (c *Console) revealAEAD() (cipher.AEAD, error) { return c.derivedAEAD(revealKeyLabel) }

// sessionBinding is what ties a reveal to the browser's session: the
// SHA-256 of its session cookie ("" without one).
func sessionBinding(r *http.Request) string {
	ck, err := r.Cookie(SessionCookie)
	if err != nil || ck.Value == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(ck.Value))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// reveal sets the cookie that hands payload to the next GET of a page
// calling revealed with the same kind, for this session only. Call it
// before writing the redirect.
func (c *Console) reveal(w http.ResponseWriter, r *http.Request, kind string, payload []byte) error {
	bind := sessionBinding(r)
	if bind == "" {
		return errors.New("reveal: no session")
	}
	now := c.now()
	exp := now.Add(revealTTL)
	v := revealValue{Kind: kind, Session: bind, Expires: exp.Unix()}
	if len(payload) <= maxRevealInline {
		v.Payload = payload
	} else {
		id := randomToken()
		sealed, err := c.sealReveal(payload, revealStashAD+id)
		if err != nil {
			return err
		}
		if err := c.Store.PutReveal(r.Context(), id, sealed, now, exp); err != nil {
			return fmt.Errorf("reveal: %w", err)
		}
		v.Stash = id
	}
	plain, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("reveal: %w", err)
	}
	sealed, err := c.sealReveal(plain, RevealCookie)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: RevealCookie, Value: base64.RawURLEncoding.EncodeToString(sealed), Path: sessionPath, MaxAge: int(revealTTL / time.Second),
		HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
	return nil
}

// revealed returns the payload a form revealed for kind to this session,
// once: the cookie is cleared as it is read. A missing, tampered, expired
// cookie or one of another session gives false (and is cleared); one of
// another kind is left for its own page.
func (c *Console) revealed(w http.ResponseWriter, r *http.Request, kind string) ([]byte, bool) {
	ck, err := r.Cookie(RevealCookie)
	if err != nil || ck.Value == "" {
		return nil, false
	}
	v, err := c.openReveal(ck.Value)
	if err == nil && v.Kind != kind && v.Session == sessionBinding(r) && c.now().Unix() < v.Expires {
		return nil, false // another page's, still valid: leave it
	}
	http.SetCookie(w, &http.Cookie{Name: RevealCookie, Value: "", Path: sessionPath, MaxAge: -1,
		HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
	if err != nil {
		return nil, false
	}
	payload, ok := v.Payload, true
	if v.Stash != "" && v.Kind == kind && v.Session == sessionBinding(r) {
		payload, ok = c.takeStashed(r, v.Stash)
	}
	if !ok || v.Kind != kind || v.Session != sessionBinding(r) || c.now().Unix() >= v.Expires {
		return nil, false
	}
	return payload, true
}

// revealStashAD prefixes a stored payload's id in its additional data, so
// a sealed payload opens only under its own id.
const revealStashAD = "modelgate console reveal stash "

// sealReveal encrypts plain with the reveal key, bound to ad:
// nonce || ciphertext.
func (c *Console) sealReveal(plain []byte, ad string) ([]byte, error) {
	aead, err := c.revealAEAD()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	_, _ = rand.Read(nonce) // never fails (Go 1.24+)
	return aead.Seal(nonce, nonce, plain, []byte(ad)), nil
}

// unsealReveal opens what sealReveal made with the same ad.
func (c *Console) unsealReveal(raw []byte, ad string) ([]byte, error) {
	aead, err := c.revealAEAD()
	if err != nil {
		return nil, err
	}
	if len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, errors.New("reveal: malformed")
	}
	n := aead.NonceSize()
	plain, err := aead.Open(nil, raw[:n], raw[n:], []byte(ad))
	if err != nil {
		return nil, errors.New("reveal: does not decrypt")
	}
	return plain, nil
}

// takeStashed takes the stored payload id from the store (deleting it:
// shown once at most) and opens it.
func (c *Console) takeStashed(r *http.Request, id string) ([]byte, bool) {
	sealed, err := c.Store.TakeReveal(r.Context(), id, c.now())
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			c.log().ErrorContext(r.Context(), "console: take reveal", "err", err)
		}
		return nil, false
	}
	payload, err := c.unsealReveal(sealed, revealStashAD+id)
	return payload, err == nil
}

// openReveal decrypts and decodes a reveal cookie's value.
func (c *Console) openReveal(s string) (revealValue, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return revealValue{}, errors.New("reveal cookie: malformed")
	}
	plain, err := c.unsealReveal(raw, RevealCookie)
	if err != nil {
		return revealValue{}, fmt.Errorf("reveal cookie: %w", err)
	}
	var v revealValue
	if err := json.Unmarshal(plain, &v); err != nil {
		return revealValue{}, fmt.Errorf("reveal cookie: %w", err)
	}
	return v, nil
}
