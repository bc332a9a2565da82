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
// stays in this process's memory for revealTTL under a random id, and the
// cookie carries only that id; it is taken (deleted) by the first read, so
// it is lost if the process restarts before the GET. Nothing secret is
// written to the store.

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// RevealCookie carries a just-created secret from a form's POST to the
// page it redirects to (see reveal).
const RevealCookie = "mg_reveal"

// Reveal kinds: which page may show a revealed payload.
const (
	RevealKey   = "key"   // a new API key: revealedKey JSON
	RevealCodes = "codes" // new redeem codes (admin page)
)

const (
	// revealTTL is how long a revealed payload waits for its GET.
	revealTTL = 2 * time.Minute
	// maxRevealInline is the largest payload carried in the cookie itself
	// (sealed and base64-encoded it stays well under a browser's 4 KB).
	maxRevealInline = 2048
	// maxRevealStash bounds the bytes held in memory for large payloads.
	maxRevealStash = 16 << 20
	// revealKeyLabel derives the reveal cookie's AES key from CookieKey.
	revealKeyLabel = "modelgate console reveal cookie AES-256-GCM key"
)

// errRevealFull: too many large payloads are waiting for their page.
var errRevealFull = errors.New("reveal: too many secrets waiting to be shown; retry in a minute")

// revealValue is the sealed content of the cookie.
type revealValue struct {
	Kind    string `json:"k"`
	Session string `json:"s"` // base64url SHA-256 of the session cookie
	Expires int64  `json:"e"` // unix seconds
	Payload []byte `json:"p,omitempty"`
	Stash   string `json:"i,omitempty"` // id in revealStash when Payload is too large
}

// revealStash holds payloads too large for the cookie; the zero value is
// ready to use.
type revealStash struct {
	mu    sync.Mutex
	items map[string]stashed
	size  int
}

type stashed struct {
	payload []byte
	expires time.Time
}

// put stores payload until expires and returns its id.
func (s *revealStash) put(payload []byte, now, expires time.Time) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, it := range s.items {
		if !now.Before(it.expires) {
			s.size -= len(it.payload)
			delete(s.items, id)
		}
	}
	if s.size+len(payload) > maxRevealStash {
		return "", errRevealFull
	}
	if s.items == nil {
		s.items = map[string]stashed{}
	}
	id := randomToken()
	s.items[id] = stashed{payload: payload, expires: expires}
	s.size += len(payload)
	return id, nil
}

// take removes and returns the payload stored under id, if not expired.
func (s *revealStash) take(id string, now time.Time) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[id]
	if !ok {
		return nil, false
	}
	delete(s.items, id)
	s.size -= len(it.payload)
	return it.payload, now.Before(it.expires)
}

// revealAEAD is AES-256-GCM under a key derived from CookieKey for the
// reveal cookie only.
func (c *Console) revealAEAD() (cipher.AEAD, error) {
	m := hmac.New(sha256.New, c.CookieKey)
	m.Write([]byte(revealKeyLabel))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("reveal cookie: %w", err)
	}
	return cipher.NewGCM(block)
}

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
		id, err := c.reveals.put(payload, now, exp)
		if err != nil {
			return err
		}
		v.Stash = id
	}
	plain, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("reveal: %w", err)
	}
	aead, err := c.revealAEAD()
	if err != nil {
		return err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	_, _ = rand.Read(nonce) // never fails (Go 1.24+)
	sealed := base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(RevealCookie)))
	http.SetCookie(w, &http.Cookie{Name: RevealCookie, Value: sealed, Path: sessionPath, MaxAge: int(revealTTL / time.Second),
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
	if v.Stash != "" {
		payload, ok = c.reveals.take(v.Stash, c.now()) // taken even when refused below: shown once at most
	}
	if !ok || v.Kind != kind || v.Session != sessionBinding(r) || c.now().Unix() >= v.Expires {
		return nil, false
	}
	return payload, true
}

// openReveal decrypts and decodes a reveal cookie's value.
func (c *Console) openReveal(s string) (revealValue, error) {
	aead, err := c.revealAEAD()
	if err != nil {
		return revealValue{}, err
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return revealValue{}, errors.New("reveal cookie: malformed")
	}
	n := aead.NonceSize()
	plain, err := aead.Open(nil, raw[:n], raw[n:], []byte(RevealCookie))
	if err != nil {
		return revealValue{}, errors.New("reveal cookie: does not decrypt")
	}
	var v revealValue
	if err := json.Unmarshal(plain, &v); err != nil {
		return revealValue{}, fmt.Errorf("reveal cookie: %w", err)
	}
	return v, nil
}
