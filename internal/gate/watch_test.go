package gate

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/store"
)

// lockedKeys is a KeyLookup safe for Watch's goroutine: one key, revoked
// on demand with the version moved, as the store's triggers do.
type lockedKeys struct {
	mu      sync.Mutex
	key     store.Key
	version int64
	// stale, when set, is what KeyByHash returns instead of the key: a
	// read that raced a revocation.
	stale *store.Key
}

func (l *lockedKeys) KeyByHash(_ context.Context, h []byte) (store.Key, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if string(h) != string(l.key.Hash) {
		return store.Key{}, store.ErrNotFound
	}
	if l.stale != nil {
		return *l.stale, nil
	}
	return l.key, nil
}

func (l *lockedKeys) KeyByID(context.Context, string) (store.Key, error) {
	return store.Key{}, store.ErrNotFound
}

func (l *lockedKeys) KeysVersion(context.Context) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.version, nil
}

func (l *lockedKeys) revoke() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.key.RevokedAt = time.Unix(1, 0)
	l.version++
}

// TestWatchRevokesWithinTheInterval: with an hour's TTL, a key revoked
// elsewhere is refused once Watch has seen the version move, and a lookup
// that read the key before the revocation does not cache it afterwards.
func TestWatchRevokesWithinTheInterval(t *testing.T) {
	secret, _, hash := apikey.Generate()
	keys := &lockedKeys{key: store.Key{ID: "key_1", Hash: hash}}
	a := NewAuthenticator(keys, time.Hour, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Watch(ctx, 5*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()

	if _, err := a.Authenticate(context.Background(), "Bearer "+secret); err != nil {
		t.Fatal(err)
	}
	keys.revoke()
	deadline := time.Now().Add(10 * time.Second) // a bound on a hang, not a timing claim
	for {
		if _, err := a.Authenticate(context.Background(), "Bearer "+secret); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("revoked key still accepted: Watch did not empty the cache")
		}
		time.Sleep(time.Millisecond)
	}

	// A read of the key from before the revocation, finishing after Watch
	// saw it, answers this once but is not cached under the old version.
	old := keys.key
	old.RevokedAt = time.Time{}
	keys.mu.Lock()
	keys.stale = &old
	keys.mu.Unlock()
	a.put([32]byte(hash[:32]), cached{p: Principal{KeyID: "key_1"}, version: 0, until: time.Now().Add(time.Hour)})
	a.mu.RLock()
	n := len(a.cache)
	a.mu.RUnlock()
	if n != 0 {
		t.Errorf("an entry read under version 0 was cached after Watch saw version 1")
	}
}
