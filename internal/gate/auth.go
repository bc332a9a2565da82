// Package gate is the policy in front of routing: it authenticates API keys
// (with a short-lived in-memory cache so the hot path reads no database) and
// decides which models a key's group may use. Balances, spend caps and rate
// limits join it in later issues.
package gate

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// Principal is who a request acts for.
type Principal struct {
	KeyID     string
	AccountID string
	Group     string
	SpendCap  money.Micros // 0: none
	ExpiresAt time.Time    // zero: never
}

// KeyLookup finds keys by the hash of their secret (store.Store has it).
type KeyLookup interface {
	KeyByHash(ctx context.Context, hash []byte) (store.Key, error)
}

// Authenticator verifies Authorization headers. A verified key is cached for
// TTL, so revoking a key takes effect within TTL on every replica; failures
// are never cached, so a new key works at once.
type Authenticator struct {
	keys       KeyLookup
	ttl        time.Duration
	now        func() time.Time
	maxEntries int

	mu    sync.RWMutex
	cache map[[sha256.Size]byte]cached
}

type cached struct {
	p     Principal
	until time.Time
}

// NewAuthenticator returns an authenticator; ttl <= 0 disables the cache.
func NewAuthenticator(keys KeyLookup, ttl time.Duration, now func() time.Time) *Authenticator {
	if now == nil {
		now = time.Now
	}
	return &Authenticator{keys: keys, ttl: ttl, now: now, maxEntries: 100_000,
		cache: make(map[[sha256.Size]byte]cached)}
}

// Authenticate returns the principal for an Authorization header value or a
// 401 *apierr.Error that never says which check failed.
func (a *Authenticator) Authenticate(ctx context.Context, header string) (Principal, error) {
	secret := apikey.FromHeader(header)
	if secret == "" {
		return Principal{}, apierr.InvalidAPIKey(errors.New("missing or malformed Authorization header"))
	}
	sum := sha256.Sum256([]byte(secret))
	now := a.now()
	if a.ttl > 0 {
		a.mu.RLock()
		c, ok := a.cache[sum]
		a.mu.RUnlock()
		if ok && now.Before(c.until) {
			return c.p, expired(c.p, now)
		}
	}
	k, err := a.keys.KeyByHash(ctx, sum[:])
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, apierr.InvalidAPIKey(errors.New("unknown key"))
	}
	if err != nil {
		return Principal{}, apierr.Internal(fmt.Errorf("gate: look up key: %w", err))
	}
	if subtle.ConstantTimeCompare(k.Hash, sum[:]) != 1 {
		return Principal{}, apierr.InvalidAPIKey(errors.New("hash mismatch"))
	}
	if k.Revoked() {
		return Principal{}, apierr.InvalidAPIKey(fmt.Errorf("key %s is revoked", k.ID))
	}
	if k.AccountDisabled {
		return Principal{}, apierr.InvalidAPIKey(fmt.Errorf("account %s of key %s is disabled", k.AccountID, k.ID))
	}
	p := Principal{KeyID: k.ID, AccountID: k.AccountID, Group: k.Group, SpendCap: k.SpendCap, ExpiresAt: k.ExpiresAt}
	if err := expired(p, now); err != nil {
		return Principal{}, err
	}
	if a.ttl > 0 {
		a.mu.Lock()
		if len(a.cache) >= a.maxEntries {
			clear(a.cache) // crude but bounded; entries are cheap to refill
		}
		a.cache[sum] = cached{p: p, until: now.Add(a.ttl)}
		a.mu.Unlock()
	}
	return p, nil
}

// expired is the 401 for a key past its expiry, checked on every request
// (cached keys included), so a key stops working the moment it expires.
func expired(p Principal, now time.Time) error {
	if !p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt) {
		return apierr.InvalidAPIKey(fmt.Errorf("key %s expired at %s", p.KeyID, p.ExpiresAt.Format(time.RFC3339)))
	}
	return nil
}
