package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/store"
)

// fakeKeys is a KeyLookup over a map, keeping store.Keys' contract on the
// version: revoke moves it, as the store's triggers do.
type fakeKeys struct {
	keys         map[string]store.Key // by string(hash)
	version      int64
	lookups      atomic.Int64
	versionReads atomic.Int64
	fail         error  // of KeyByHash
	versionFail  error  // of KeysVersion
	afterLookup  func() // runs once KeyByHash has read the key
}

func (f *fakeKeys) KeyByHash(_ context.Context, h []byte) (store.Key, error) {
	f.lookups.Add(1)
	if f.fail != nil {
		return store.Key{}, f.fail
	}
	k, ok := f.keys[string(h)]
	if !ok {
		return store.Key{}, store.ErrNotFound
	}
	if f.afterLookup != nil {
		f.afterLookup()
	}
	return k, nil
}

func (f *fakeKeys) KeysVersion(context.Context) (int64, error) {
	f.versionReads.Add(1)
	return f.version, f.versionFail
}

// revoke revokes the key with hash h at t and moves the version.
func (f *fakeKeys) revoke(h []byte, t time.Time) {
	k := f.keys[string(h)]
	k.RevokedAt = t
	f.keys[string(h)] = k
	f.version++
}

func TestAuthenticate(t *testing.T) {
	good, _, goodHash := apikey.Generate()
	revoked, _, revokedHash := apikey.Generate()
	disabled, _, disabledHash := apikey.Generate()
	keyOff, _, keyOffHash := apikey.Generate()
	unknown, _, _ := apikey.Generate()
	keys := &fakeKeys{keys: map[string]store.Key{
		string(goodHash):     {ID: "key_1", AccountID: "acct_1", Group: "basic", Hash: goodHash},
		string(revokedHash):  {ID: "key_2", AccountID: "acct_1", Group: "basic", Hash: revokedHash, RevokedAt: time.Unix(5, 0)},
		string(disabledHash): {ID: "key_3", AccountID: "acct_2", Group: "basic", Hash: disabledHash, AccountDisabled: true},
		string(keyOffHash):   {ID: "key_4", AccountID: "acct_1", Group: "basic", Hash: keyOffHash, DisabledAt: time.Unix(7, 0)},
	}}
	a := NewAuthenticator(keys, 0, nil)
	cases := []struct {
		name   string
		header string
		want   string // key id, or "" for 401
		msg    string // the 401's message, when not the generic one
	}{
		{"good", "Bearer " + good, "key_1", ""},
		{"missing", "", "", ""},
		{"malformed", "Token " + good, "", ""},
		{"unknown", "Bearer " + unknown, "", ""},
		{"revoked", "Bearer " + revoked, "", ""},
		{"account disabled", "Bearer " + disabled, "", ""},
		{"key disabled", "Bearer " + keyOff, "", "This API key is disabled."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := a.Authenticate(context.Background(), tc.header)
			if tc.want != "" {
				if err != nil || p.KeyID != tc.want || p.Group != "basic" || p.AccountID != "acct_1" {
					t.Fatalf("got %+v, %v", p, err)
				}
				return
			}
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != http.StatusUnauthorized || e.Code != apierr.CodeInvalidAPIKey {
				t.Fatalf("err = %v, want 401 invalid_api_key", err)
			}
			if want := cmp.Or(tc.msg, apierr.InvalidAPIKey(nil).Message); e.Message != want {
				t.Fatalf("message %q, want %q", e.Message, want)
			}
		})
	}
	// A disabled account's key is refused like a revoked one, and the
	// internal reason (logged, never shown) says why.
	if _, err := a.Authenticate(context.Background(), "Bearer "+disabled); err == nil ||
		!strings.Contains(apierr.From(err).Err.Error(), "acct_2") || !strings.Contains(apierr.From(err).Err.Error(), "disabled") {
		t.Fatalf("disabled account: %v, want a reason naming the disabled account", err)
	}
	keys.fail = errors.New("disk on fire")
	if _, err := a.Authenticate(context.Background(), "Bearer "+good); apierr.From(err).Status != http.StatusInternalServerError {
		t.Fatalf("store failure: %v", err)
	}
}

func TestAuthenticateCache(t *testing.T) {
	secret, _, hash := apikey.Generate()
	keys := &fakeKeys{keys: map[string]store.Key{string(hash): {ID: "key_1", Hash: hash}}}
	now := time.Unix(1000, 0)
	a := NewAuthenticator(keys, 5*time.Second, func() time.Time { return now })
	for range 3 {
		if _, err := a.Authenticate(context.Background(), "Bearer "+secret); err != nil {
			t.Fatal(err)
		}
	}
	if n := keys.lookups.Load(); n != 1 {
		t.Fatalf("store read %d times within the TTL, want 1", n)
	}
	// Revocation is seen once the entry expires.
	keys.revoke(hash, now)
	now = now.Add(6 * time.Second)
	if _, err := a.Authenticate(context.Background(), "Bearer "+secret); err == nil {
		t.Fatal("revoked key still accepted after the TTL")
	}
}

// Past the TTL, cached keys are revalidated by one read of the keys version
// per TTL, not looked up again, unless the version moved; a key revoked is
// refused at its first use after the TTL either way.
func TestAuthenticateRevalidates(t *testing.T) {
	const ttl = 5 * time.Second
	var (
		secrets [3]string
		hashes  [3][]byte
	)
	keys := &fakeKeys{keys: map[string]store.Key{}}
	for i := range secrets {
		secret, _, hash := apikey.Generate()
		secrets[i], hashes[i] = secret, hash
		keys.keys[string(hash)] = store.Key{ID: fmt.Sprintf("key_%d", i), Hash: hash}
	}
	now := time.Unix(1000, 0)
	a := NewAuthenticator(keys, ttl, func() time.Time { return now })

	// The steps run in order: change happens first, then the clock moves
	// by wait and every key authenticates once; ok is which keys are let
	// in, lookups and versionReads how many of each the step made.
	steps := []struct {
		name                  string
		wait                  time.Duration
		change                func()
		ok                    [3]bool
		lookups, versionReads int64
	}{
		{name: "first use", ok: [3]bool{true, true, true}, lookups: 3, versionReads: 1},
		{name: "within the TTL", wait: time.Second, ok: [3]bool{true, true, true}},
		{name: "past the TTL, nothing changed", wait: ttl, ok: [3]bool{true, true, true}, versionReads: 1},
		{name: "again", wait: ttl, ok: [3]bool{true, true, true}, versionReads: 1},
		{name: "a key revoked: all are read again", wait: ttl, change: func() { keys.revoke(hashes[1], now) },
			ok: [3]bool{true, false, true}, lookups: 3, versionReads: 1},
		{name: "the revoked key is never cached", wait: time.Second, ok: [3]bool{true, false, true}, lookups: 1},
		{name: "the version cannot be read: look every key up", wait: ttl, change: func() { keys.versionFail = errors.New("locked") },
			ok: [3]bool{true, false, true}, lookups: 3, versionReads: 3},
		{name: "and cache none", wait: time.Millisecond, ok: [3]bool{true, false, true}, lookups: 3, versionReads: 3},
		// The entries the failure left were read at the version read now:
		// still valid, so only the revoked key is looked up.
		{name: "readable again", change: func() { keys.versionFail = nil },
			ok: [3]bool{true, false, true}, lookups: 1, versionReads: 1},
		{name: "cached again", wait: time.Second, ok: [3]bool{true, false, true}, lookups: 1},
	}
	for _, st := range steps {
		if st.change != nil {
			st.change()
		}
		now = now.Add(st.wait)
		lookups, versionReads := keys.lookups.Load(), keys.versionReads.Load()
		for i, secret := range secrets {
			_, err := a.Authenticate(context.Background(), "Bearer "+secret)
			if (err == nil) != st.ok[i] {
				t.Errorf("%s: key %d: err %v, want accepted %t", st.name, i, err, st.ok[i])
			}
		}
		if n := keys.lookups.Load() - lookups; n != st.lookups {
			t.Errorf("%s: %d key lookups, want %d", st.name, n, st.lookups)
		}
		if n := keys.versionReads.Load() - versionReads; n != st.versionReads {
			t.Errorf("%s: %d version reads, want %d", st.name, n, st.versionReads)
		}
	}
}

// A key revoked just after its lookup read it (the version moved after
// the Authenticator read it) is refused once the TTL has passed: the entry
// records the version read before the key, not after.
func TestAuthenticateRevokedDuringLookup(t *testing.T) {
	secret, _, hash := apikey.Generate()
	keys := &fakeKeys{keys: map[string]store.Key{string(hash): {ID: "key_1", Hash: hash}}}
	now := time.Unix(1000, 0)
	keys.afterLookup = func() { keys.afterLookup = nil; keys.revoke(hash, now) }
	a := NewAuthenticator(keys, 5*time.Second, func() time.Time { return now })
	if _, err := a.Authenticate(context.Background(), "Bearer "+secret); err != nil {
		t.Fatalf("first use (read before the revocation): %v", err)
	}
	now = now.Add(6 * time.Second)
	if _, err := a.Authenticate(context.Background(), "Bearer "+secret); err == nil {
		t.Fatal("key revoked during its lookup still accepted after the TTL")
	}
}

// An expiring key works until its expiry and is refused from then on, even
// while it sits in the cache.
func TestAuthenticateExpiry(t *testing.T) {
	secret, _, hash := apikey.Generate()
	now := time.Unix(1000, 0)
	keys := &fakeKeys{keys: map[string]store.Key{string(hash): {ID: "key_1", Hash: hash, ExpiresAt: now.Add(time.Minute), SpendCap: 7}}}
	a := NewAuthenticator(keys, time.Hour, func() time.Time { return now })
	p, err := a.Authenticate(context.Background(), "Bearer "+secret)
	if err != nil || p.SpendCap != 7 || !p.ExpiresAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("before expiry: %+v, %v", p, err)
	}
	for _, d := range []time.Duration{time.Minute, time.Hour * 2} { // cached, then read again
		now = time.Unix(1000, 0).Add(d)
		_, err := a.Authenticate(context.Background(), "Bearer "+secret)
		if e := apierr.From(err); err == nil || e.Status != http.StatusUnauthorized || e.Code != apierr.CodeInvalidAPIKey {
			t.Fatalf("after %v: %v", d, err)
		}
	}
}

func TestPolicy(t *testing.T) {
	p := NewPolicy(map[string][]string{
		"default": {"*"},
		"basic":   {"gpt-4o-mini", "deepseek-*"},
		"broken":  {"[", "demo-chat"},
		"llama":   {"meta-llama/*"},
	}, []string{"gpt-4o", "gpt-4o-mini", "deepseek-chat", "demo-chat", "meta-llama/llama-4-scout"})
	cases := []struct {
		group, model string
		want         bool
	}{
		{"default", "gpt-4o", true},
		{"default", "unknown", false},
		{"default", "meta-llama/llama-4-scout", true}, // a lone * matches ids with a slash
		{"llama", "meta-llama/llama-4-scout", true},
		{"basic", "meta-llama/llama-4-scout", false},
		{"basic", "gpt-4o-mini", true},
		{"basic", "deepseek-chat", true},
		{"basic", "gpt-4o", false},
		{"broken", "demo-chat", true},
		{"broken", "gpt-4o", false},
		{"nosuchgroup", "gpt-4o", false},
	}
	for _, tc := range cases {
		if got := p.Allows(tc.group, tc.model); got != tc.want {
			t.Errorf("Allows(%q, %q) = %v, want %v", tc.group, tc.model, got, tc.want)
		}
	}
}
