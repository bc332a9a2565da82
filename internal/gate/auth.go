// Package gate is the policy in front of routing: it authenticates API keys
// (with a short-lived in-memory cache so the hot path reads no database;
// in-process callers such as the console's playground may name a key by id
// instead, see WithKeyID) and
// decides which models a key's group may use and which rate limits its
// requests count against (internal/ratelimit counts them).
package gate

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
	// Limits are the key's own rate limits (zero fields: the group's).
	Limits Limits
}

// Limits are rate limits: requests and tokens per minute, and requests
// running at once; 0 is no limit.
type Limits struct {
	RPM         int64
	TPM         int64
	Concurrency int64
}

// Or is l with each limit l does not set taken from group: a key's own
// limit overrides its group's.
func (l Limits) Or(group Limits) Limits {
	if l.RPM == 0 {
		l.RPM = group.RPM
	}
	if l.TPM == 0 {
		l.TPM = group.TPM
	}
	if l.Concurrency == 0 {
		l.Concurrency = group.Concurrency
	}
	return l
}

// Any reports whether l sets any limit.
func (l Limits) Any() bool { return l != Limits{} }

// KeyLookup finds keys by the hash of their secret or by id (for
// WithKeyID) and tells when any key may have changed (store.Store has all
// three; see store.Keys.KeysVersion).
type KeyLookup interface {
	KeyByHash(ctx context.Context, hash []byte) (store.Key, error)
	KeyByID(ctx context.Context, id string) (store.Key, error)
	KeysVersion(ctx context.Context) (int64, error)
}

// Authenticator verifies Authorization headers. A verified key is cached,
// so revoking a key (or disabling its account) takes effect within TTL on
// every replica; failures are never cached, so a new key works at once.
//
// A cached key is trusted for TTL after it was read. Past that, the
// Authenticator does not read the key again but the store's keys version,
// once per TTL for all keys: a key read after the version was v is still
// as read while the version is v, and its entry is trusted for another
// TTL. Only a change (any key revoked, any account disabled) makes the
// cached keys be read again. With many tenants this is one small read a
// second instead of one key lookup per key and second.
type Authenticator struct {
	keys       KeyLookup
	ttl        time.Duration
	now        func() time.Time
	maxEntries int

	mu    sync.RWMutex
	cache map[[sha256.Size]byte]cached
	// latest is the newest keys version Watch has seen: an entry read
	// under an older one is not cached (it may be a key just revoked).
	latest atomic.Int64

	// verMu serialises reads of the keys version; version was read at
	// versionAt (zero: never, or the read failed).
	verMu     sync.Mutex
	version   int64
	versionAt time.Time
}

// cached is a verified key: p was read while the keys version was version
// (or later), and is trusted until until.
type cached struct {
	p       Principal
	version int64
	until   time.Time
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
// 401 *apierr.Error that never says which check failed. When ctx comes
// from WithKeyID, the header is ignored: the principal is that key's.
func (a *Authenticator) Authenticate(ctx context.Context, header string) (Principal, error) {
	if id, ok := ctx.Value(keyIDKey{}).(string); ok {
		return a.byID(ctx, id, a.now())
	}
	secret := apikey.FromHeader(header)
	if secret == "" {
		return Principal{}, apierr.InvalidAPIKey(errors.New("missing or malformed Authorization header"))
	}
	sum := sha256.Sum256([]byte(secret))
	now := a.now()
	if a.ttl <= 0 {
		return a.lookup(ctx, sum, now)
	}
	a.mu.RLock()
	c, ok := a.cache[sum]
	a.mu.RUnlock()
	if ok && now.Before(c.until) {
		return c.p, expired(c.p, now)
	}
	// Read (or reuse) the version before the key, so that a change made
	// while the key is read moves it past what the entry records.
	v, at, vok := a.keysVersion(ctx, now)
	if ok && vok && c.version == v {
		a.put(sum, cached{p: c.p, version: v, until: at.Add(a.ttl)})
		return c.p, expired(c.p, now)
	}
	p, err := a.lookup(ctx, sum, now)
	if err == nil && vok {
		a.put(sum, cached{p: p, version: v, until: now.Add(a.ttl)})
	}
	return p, err
}

// lookup reads and verifies the key whose secret hashes to sum.
func (a *Authenticator) lookup(ctx context.Context, sum [sha256.Size]byte, now time.Time) (Principal, error) {
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
	return verify(k, now)
}

// verify applies to a key read from the store every check a request's key
// must pass, and returns its principal.
func verify(k store.Key, now time.Time) (Principal, error) {
	if k.Revoked() {
		return Principal{}, apierr.InvalidAPIKey(fmt.Errorf("key %s is revoked", k.ID))
	}
	if k.Disabled() {
		e := apierr.InvalidAPIKey(fmt.Errorf("key %s is disabled", k.ID))
		e.Message = "This API key is disabled."
		return Principal{}, e
	}
	if k.AccountDisabled {
		return Principal{}, apierr.InvalidAPIKey(fmt.Errorf("account %s of key %s is disabled", k.AccountID, k.ID))
	}
	p := Principal{KeyID: k.ID, AccountID: k.AccountID, Group: k.Group, SpendCap: k.SpendCap, ExpiresAt: k.ExpiresAt,
		Limits: Limits{RPM: k.Limits.RPM, TPM: k.Limits.TPM, Concurrency: k.Limits.Concurrency}}
	if err := expired(p, now); err != nil {
		return Principal{}, err
	}
	return p, nil
}

// keysVersion returns the store's keys version and when it was read,
// reading it again when the copy is TTL old; ok is false when it could not
// be read (then nothing is revalidated or cached: every key is looked up).
func (a *Authenticator) keysVersion(ctx context.Context, now time.Time) (v int64, at time.Time, ok bool) {
	a.verMu.Lock()
	defer a.verMu.Unlock()
	if !a.versionAt.IsZero() && now.Sub(a.versionAt) < a.ttl {
		return a.version, a.versionAt, true
	}
	v, err := a.keys.KeysVersion(ctx)
	if err != nil {
		a.versionAt = time.Time{}
		return 0, time.Time{}, false
	}
	a.version, a.versionAt = v, now
	return v, now, true
}

// put caches c under sum, bounded by maxEntries, unless Watch has seen a
// newer keys version than the one c was read under.
func (a *Authenticator) put(sum [sha256.Size]byte, c cached) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c.version < a.latest.Load() {
		return
	}
	if len(a.cache) >= a.maxEntries {
		clear(a.cache) // crude but bounded; entries are cheap to refill
	}
	a.cache[sum] = c
}

// Watch reads the keys version every interval until ctx ends and, when it
// changed (a key revoked, changed or deleted, an account disabled, by this
// replica, another, or the CLI), forgets every cached key at once, so the
// change holds within about interval whatever the cache's TTL. Its first
// read does the same (a key may have changed before it). Failed reads are
// retried at the next tick; the TTL still bounds the cache meanwhile.
func (a *Authenticator) Watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	seen := false
	for {
		if v, err := a.keys.KeysVersion(ctx); err == nil && (!seen || v != a.latest.Load()) {
			a.invalidate(v)
			seen = true
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// invalidate records keys version v as the latest, then empties the cache
// and the copy of the version.
func (a *Authenticator) invalidate(v int64) {
	a.latest.Store(v)
	a.verMu.Lock()
	a.versionAt = time.Time{}
	a.verMu.Unlock()
	a.mu.Lock()
	clear(a.cache)
	a.mu.Unlock()
}

// expired is the 401 for a key past its expiry, checked on every request
// (cached keys included), so a key stops working the moment it expires.
func expired(p Principal, now time.Time) error {
	if !p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt) {
		return apierr.InvalidAPIKey(fmt.Errorf("key %s expired at %s", p.KeyID, p.ExpiresAt.Format(time.RFC3339)))
	}
	return nil
}
