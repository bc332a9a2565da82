package imagestore

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// signer makes and checks URL signatures.
type signer struct{ key []byte }

// Domains keep the two kinds of signature apart: one made for an image URL
// never passes CheckPath, nor one made by SignPath an image URL's Check,
// even for the same path and expiry.
const (
	imageDomain = "modelgate-image-url-v1"
	pathDomain  = "modelgate-signed-path-v1"
)

// mac is the signature of a path and an expiry: version-tagged so the
// format can change without old links being read the new way.
func (s signer) mac(domain, path string, exp int64) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(domain))
	m.Write([]byte{'\n'})
	m.Write([]byte(path))
	m.Write([]byte{'\n'})
	m.Write([]byte(strconv.FormatInt(exp, 10)))
	return m.Sum(nil)
}

func (s signer) sign(domain, path string, exp int64) string {
	return base64.RawURLEncoding.EncodeToString(s.mac(domain, path, exp))
}

func (s signer) check(domain, path, exp, sig string, now time.Time) error {
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || exp != strconv.FormatInt(e, 10) {
		return ErrForbidden
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(domain, path, e)) {
		return ErrForbidden
	}
	if now.Unix() >= e {
		return ErrExpired
	}
	return nil
}

// SignPath signs a gateway path (such as a video's download path,
// /v1/videos/generations/{task_id}/content) until exp, and returns the
// query to append to it: "exp={unix}&sig={mac}". The link is valid up to
// the second before exp; CheckPath verifies it.
func (s *Store) SignPath(path string, exp time.Time) string {
	e := exp.Unix()
	return "exp=" + strconv.FormatInt(e, 10) + "&sig=" + s.signer.sign(pathDomain, path, e)
}

// CheckPath verifies the exp and sig query values of a request for path
// (the URL path as served) signed by SignPath: ErrForbidden for a wrong or
// missing signature, or one made for another path; ErrExpired once exp has
// passed.
func (s *Store) CheckPath(path, exp, sig string) error {
	return s.signer.check(pathDomain, path, exp, sig, s.now())
}

// keyFile is where LoadKey keeps a generated key, inside the images
// directory (a dot file, which the sweeper leaves alone).
const keyFile = ".signing-key"

// LoadKey returns the HMAC key for URL signatures. With a configured
// secret the key is derived from it, so every replica given the same
// secret signs alike. Without one, a random key is generated once and kept
// in dir/.signing-key (mode 0600), so restarts keep old links valid and
// replicas sharing dir agree; replicas that share no directory must
// configure a secret.
func LoadKey(dir, secret string) ([]byte, error) {
	if secret != "" {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte("modelgate image URL signing key"))
		return m.Sum(nil), nil
	}
	path := filepath.Join(dir, keyFile)
	if k, err := readKey(path); err == nil {
		return k, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("imagestore: create %s: %w", dir, err)
	}
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		return nil, fmt.Errorf("imagestore: generate signing key: %w", err)
	}
	// Written whole to a temporary file, then linked into place: the link
	// fails if another process got there first, and then its key wins.
	tmp, err := os.CreateTemp(dir, ".signing-key-*")
	if err != nil {
		return nil, fmt.Errorf("imagestore: write signing key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(hex.EncodeToString(k[:]) + "\n")
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		return nil, fmt.Errorf("imagestore: write signing key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("imagestore: write signing key: %w", err)
	}
	return readKey(path)
}

func readKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(k) < 32 {
		return nil, fmt.Errorf("imagestore: %s is not a 64-digit hex key; delete it to generate a new one", path)
	}
	return k, nil
}
