// Package apikey creates and recognises the gateway's API keys. A key is
// "sk-mg-" followed by 32 base62 characters (about 190 bits of entropy);
// only its SHA-256 is ever stored, which is enough for secrets this random.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"strings"
)

// Prefix starts every key, so secret scanners and humans can recognise one.
const Prefix = "sk-mg-"

const (
	alphabet   = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	secretLen  = 32
	displayLen = len(Prefix) + 6
	maxLen     = 256
)

// Generate returns a new secret, its display prefix, and its hash.
func Generate() (secret, display string, hash []byte) {
	b := make([]byte, 0, len(Prefix)+secretLen)
	b = append(b, Prefix...)
	var buf [64]byte
	for len(b) < cap(b) {
		_, _ = rand.Read(buf[:]) // crypto/rand.Read never fails on supported platforms
		for _, c := range buf {
			if c < 248 && len(b) < cap(b) { // 248 = 4*62: reject to keep the draw uniform
				b = append(b, alphabet[c%62])
			}
		}
	}
	s := string(b)
	return s, s[:displayLen], Hash(s)
}

// Hash is the stored form of a secret.
func Hash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// FromHeader extracts the secret from an Authorization header value
// ("Bearer sk-..."), returning "" when the header cannot hold a key.
func FromHeader(v string) string {
	scheme, token, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	token = strings.TrimSpace(token)
	if len(token) < len(Prefix) || len(token) > maxLen || !strings.HasPrefix(token, "sk-") {
		return ""
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c >= 0x7f {
			return ""
		}
	}
	return token
}
