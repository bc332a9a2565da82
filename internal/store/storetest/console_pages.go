package storetest

import (
	"crypto/sha256"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// This file covers what the console's pages added to accounts and keys
// (disabled and admin accounts, Key.LastUsedAt, Key.AccountDisabled) and
// the one-time login links; usage_pages.go covers the usage listing and
// stats.

// hashOf is the SHA-256 of secret.
func hashOf(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// accountReads returns the account id as AccountByID, AccountByName and
// ListAccounts see it, so every read is checked alike.
func accountReads(t *testing.T, s store.Store, a store.Account) map[string]store.Account {
	t.Helper()
	byID, err := s.AccountByID(ctx(t), a.ID)
	if err != nil {
		t.Fatalf("AccountByID: %v", err)
	}
	byName, err := s.AccountByName(ctx(t), a.Name)
	if err != nil {
		t.Fatalf("AccountByName: %v", err)
	}
	all, err := s.ListAccounts(ctx(t))
	listed := findIn(t, "ListAccounts", all, err, a.ID, func(x store.Account) string { return x.ID })
	return map[string]store.Account{"AccountByID": byID, "AccountByName": byName, "ListAccounts": listed}
}

// findIn returns the element of list (a listing that returned err) whose
// id is id, and fails the test when the listing failed or misses it.
func findIn[T any](t *testing.T, how string, list []T, err error, id string, idOf func(T) string) T {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", how, err)
	}
	for _, x := range list {
		if idOf(x) == id {
			return x
		}
	}
	t.Fatalf("%s misses %s", how, id)
	var zero T
	return zero
}

// keyReads returns the key k as KeyByHash, KeyByID, ListKeys and KeysOf
// see it.
func keyReads(t *testing.T, s store.Store, k store.Key) map[string]store.Key {
	t.Helper()
	byHash, err := s.KeyByHash(ctx(t), k.Hash)
	if err != nil {
		t.Fatalf("KeyByHash: %v", err)
	}
	byID, err := s.KeyByID(ctx(t), k.ID)
	if err != nil {
		t.Fatalf("KeyByID: %v", err)
	}
	keyID := func(x store.Key) string { return x.ID }
	all, err := s.ListKeys(ctx(t))
	listed := findIn(t, "ListKeys", all, err, k.ID, keyID)
	own, err := s.KeysOf(ctx(t), k.AccountID)
	owned := findIn(t, "KeysOf", own, err, k.ID, keyID)
	return map[string]store.Key{"KeyByHash": byHash, "KeyByID": byID, "ListKeys": listed, "KeysOf": owned}
}

// testAccountState covers SetAccountDisabled, SetAccountAdmin and what
// reads of accounts and keys report about them.
func testAccountState(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	alice, bob := newAccount(t, "alice", at(0)), newAccount(t, "bob", at(time.Second))
	mustCreateAccount(t, s, alice)
	mustCreateAccount(t, s, bob)
	aliceKey, bobKey := newKey(t, alice, "mg-alic", at(0)), newKey(t, bob, "mg-bobb", at(0))
	mustCreateKey(t, s, aliceKey)
	mustCreateKey(t, s, bobKey)

	// The steps run in order on the same store; each says what alice
	// looks like afterwards. bob is never touched.
	steps := []struct {
		name         string
		do           func() error
		wantErr      error
		wantDisabled time.Time
		wantAdmin    bool
	}{
		{name: "fresh"},
		{name: "disable", do: func() error { return s.SetAccountDisabled(ctx(t), alice.ID, at(time.Hour)) },
			wantDisabled: at(time.Hour)},
		{name: "disable again moves the time",
			do:           func() error { return s.SetAccountDisabled(ctx(t), alice.ID, at(2*time.Hour)) },
			wantDisabled: at(2 * time.Hour)},
		{name: "grant admin while disabled", do: func() error { return s.SetAccountAdmin(ctx(t), alice.ID, true) },
			wantDisabled: at(2 * time.Hour), wantAdmin: true},
		{name: "enable", do: func() error { return s.SetAccountDisabled(ctx(t), alice.ID, time.Time{}) },
			wantAdmin: true},
		{name: "grant admin twice", do: func() error { return s.SetAccountAdmin(ctx(t), alice.ID, true) },
			wantAdmin: true},
		{name: "take admin", do: func() error { return s.SetAccountAdmin(ctx(t), alice.ID, false) }},
		{name: "disable unknown", do: func() error { return s.SetAccountDisabled(ctx(t), "acct_nope", at(time.Hour)) },
			wantErr: store.ErrNotFound},
		{name: "enable unknown", do: func() error { return s.SetAccountDisabled(ctx(t), "acct_nope", time.Time{}) },
			wantErr: store.ErrNotFound},
		{name: "admin unknown", do: func() error { return s.SetAccountAdmin(ctx(t), "acct_nope", true) },
			wantErr: store.ErrNotFound},
		{name: "disable in a far zone",
			do: func() error {
				return s.SetAccountDisabled(ctx(t), alice.ID, at(3*time.Hour).In(time.FixedZone("x", -7*3600)))
			},
			wantDisabled: at(3 * time.Hour)},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.do != nil {
				wantErr(t, st.name, st.do(), st.wantErr)
			}
			for how, got := range accountReads(t, s, alice) {
				want := alice
				want.DisabledAt, want.Admin = st.wantDisabled, st.wantAdmin
				assertEqual(t, how+" alice", normAccount(got), normAccount(want))
				if got.Disabled() != !st.wantDisabled.IsZero() {
					t.Errorf("%s: alice.Disabled() = %v", how, got.Disabled())
				}
			}
			for how, got := range accountReads(t, s, bob) {
				assertEqual(t, how+" bob", normAccount(got), normAccount(bob))
			}
			for how, got := range keyReads(t, s, aliceKey) {
				want := aliceKey
				want.AccountDisabled = !st.wantDisabled.IsZero()
				assertKey(t, how+" alice's key", got, want)
			}
			for how, got := range keyReads(t, s, bobKey) {
				assertKey(t, how+" bob's key", got, bobKey)
			}
		})
	}
}

// testKeyLastUsed covers Key.LastUsedAt as InsertUsage keeps it.
func testKeyLastUsed(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a := newAccount(t, "alice", at(0))
	mustCreateAccount(t, s, a)
	k1, k2, k3 := newKey(t, a, "mg-key1", at(0)), newKey(t, a, "mg-key2", at(0)), newKey(t, a, "mg-key3", at(0))
	for _, k := range []store.Key{k1, k2, k3} {
		mustCreateKey(t, s, k)
	}
	rec := func(id string, k store.Key, d time.Duration) store.UsageRecord {
		r := usageRecord(id, a.ID, at(d))
		r.KeyID = k.ID
		return r
	}
	noKey := usageRecord("req-nokey", a.ID, at(9*time.Hour))
	noKey.KeyID = ""
	unknownKey := usageRecord("req-unknown", a.ID, at(9*time.Hour))
	unknownKey.KeyID = "key_unknown"

	// The steps run in order on the same store; want is each key's
	// LastUsedAt afterwards (zero: never used).
	steps := []struct {
		name  string
		batch []store.UsageRecord
		want  [3]time.Time
	}{
		{name: "never used"},
		{name: "max of a batch", batch: []store.UsageRecord{
			rec("r1", k1, time.Hour), rec("r2", k1, 3*time.Hour), rec("r3", k1, 2*time.Hour), rec("r4", k2, 30*time.Minute),
		}, want: [3]time.Time{at(3 * time.Hour), at(30 * time.Minute)}},
		{name: "older batch keeps it", batch: []store.UsageRecord{rec("r5", k1, time.Hour+time.Minute)},
			want: [3]time.Time{at(3 * time.Hour), at(30 * time.Minute)}},
		// A replay of stored records, with other keys: nothing moves.
		{name: "stored duplicate skipped", batch: []store.UsageRecord{rec("r3", k2, 2*time.Hour), rec("r4", k3, 30*time.Minute)},
			want: [3]time.Time{at(3 * time.Hour), at(30 * time.Minute)}},
		{name: "duplicate within a batch skipped", batch: []store.UsageRecord{
			rec("r6", k3, time.Hour), rec("r6", k3, 5*time.Hour),
		}, want: [3]time.Time{at(3 * time.Hour), at(30 * time.Minute), at(time.Hour)}},
		{name: "records without a known key touch none", batch: []store.UsageRecord{noKey, unknownKey},
			want: [3]time.Time{at(3 * time.Hour), at(30 * time.Minute), at(time.Hour)}},
		{name: "newer batch moves it", batch: []store.UsageRecord{
			rec("r7", k1, 4*time.Hour), rec("r8", k2, 20*time.Minute), rec("r9", k3, 2*time.Hour),
		}, want: [3]time.Time{at(4 * time.Hour), at(30 * time.Minute), at(2 * time.Hour)}},
		{name: "same time again", batch: []store.UsageRecord{rec("r10", k1, 4*time.Hour)},
			want: [3]time.Time{at(4 * time.Hour), at(30 * time.Minute), at(2 * time.Hour)}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if len(st.batch) > 0 {
				insertUsage(t, s, st.batch)
			}
			for i, k := range []store.Key{k1, k2, k3} {
				for how, got := range keyReads(t, s, k) {
					if !got.LastUsedAt.Equal(st.want[i]) || got.LastUsedAt.IsZero() != st.want[i].IsZero() {
						t.Errorf("%s %s: LastUsedAt %v, want %v", how, k.Prefix, got.LastUsedAt, st.want[i])
					}
				}
			}
		})
	}
}

// testLoginLinks covers CreateLoginLink and UseLoginLink.
func testLoginLinks(t *testing.T, newStore func(t *testing.T) store.Store) {
	newLink := func(t *testing.T, expires time.Time) store.LoginLink {
		return store.LoginLink{ID: "link_" + randHex(t, 8), Hash: hashOf(randHex(t, 16)), Account: "ops",
			CreatedAt: at(0), ExpiresAt: expires}
	}
	norm := func(l store.LoginLink) store.LoginLink {
		l.CreatedAt, l.ExpiresAt, l.UsedAt = utc(l.CreatedAt), utc(l.ExpiresAt), utc(l.UsedAt)
		return l
	}

	cases := []struct {
		name    string
		expires time.Duration   // the link's ExpiresAt is at(expires)
		before  []time.Duration // earlier uses at at(d), each expected to succeed
		useAt   time.Duration
		unknown bool // use a hash that was never stored
		wantErr error
	}{
		{name: "first use", expires: time.Hour, useAt: time.Minute},
		{name: "just before expiry", expires: time.Hour, useAt: time.Hour - time.Microsecond},
		{name: "second use", expires: time.Hour, before: []time.Duration{time.Minute}, useAt: 2 * time.Minute,
			wantErr: store.ErrConflict},
		{name: "used then expired", expires: time.Hour, before: []time.Duration{time.Minute}, useAt: 2 * time.Hour,
			wantErr: store.ErrConflict},
		{name: "at expiry", expires: time.Hour, useAt: time.Hour, wantErr: store.ErrNotFound},
		{name: "expired", expires: time.Hour, useAt: 2 * time.Hour, wantErr: store.ErrNotFound},
		{name: "unknown", expires: time.Hour, useAt: time.Minute, unknown: true, wantErr: store.ErrNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			l := newLink(t, at(tc.expires))
			if err := s.CreateLoginLink(ctx(t), l); err != nil {
				t.Fatalf("CreateLoginLink: %v", err)
			}
			for _, d := range tc.before {
				if _, err := s.UseLoginLink(ctx(t), l.Hash, at(d)); err != nil {
					t.Fatalf("earlier UseLoginLink: %v", err)
				}
			}
			hash := l.Hash
			if tc.unknown {
				hash = hashOf("never stored")
			}
			got, err := s.UseLoginLink(ctx(t), hash, at(tc.useAt))
			wantErr(t, "UseLoginLink", err, tc.wantErr)
			if tc.wantErr != nil {
				return
			}
			want := l
			want.UsedAt = at(tc.useAt)
			assertEqual(t, "used link", norm(got), norm(want))
			if _, err := s.UseLoginLink(ctx(t), l.Hash, at(tc.useAt)); !errors.Is(err, store.ErrConflict) {
				t.Errorf("using it again: %v, want ErrConflict", err)
			}
		})
	}

	t.Run("Conflicts", func(t *testing.T) {
		s := newStore(t)
		l := newLink(t, at(time.Hour))
		if err := s.CreateLoginLink(ctx(t), l); err != nil {
			t.Fatalf("CreateLoginLink: %v", err)
		}
		sameID, sameHash := newLink(t, at(time.Hour)), newLink(t, at(time.Hour))
		sameID.ID, sameHash.Hash = l.ID, l.Hash
		for name, dup := range map[string]store.LoginLink{"same id": sameID, "same hash": sameHash} {
			wantErr(t, "CreateLoginLink "+name, s.CreateLoginLink(ctx(t), dup), store.ErrConflict)
		}
	})

	t.Run("Race", func(t *testing.T) {
		const n = 8
		s := newStore(t)
		l := newLink(t, at(time.Hour))
		if err := s.CreateLoginLink(ctx(t), l); err != nil {
			t.Fatalf("CreateLoginLink: %v", err)
		}
		var (
			wg             sync.WaitGroup
			mu             sync.Mutex
			wins, conflict int
		)
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				_, err := s.UseLoginLink(ctx(t), l.Hash, at(time.Duration(i+1)*time.Second))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, store.ErrConflict):
					conflict++
				default:
					t.Errorf("UseLoginLink: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		if wins != 1 || conflict != n-1 {
			t.Errorf("%d uses won and %d got ErrConflict, want 1 and %d", wins, conflict, n-1)
		}
	})
}
