package storetest

import (
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// testKeys covers CreateKey, KeyByHash, ListKeys and KeysOf.
func testKeys(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		mustCreateAccount(t, s, a)
		k := newKey(t, a, "mg-abcd1234", at(time.Minute))
		k.AccountName = "ignored on create"
		mustCreateKey(t, s, k)

		got, err := s.KeyByHash(ctx(t), k.Hash)
		if err != nil {
			t.Fatalf("KeyByHash: %v", err)
		}
		want := k
		want.AccountName = "alice"
		assertKey(t, "KeyByHash", got, want)
		if got.Revoked() {
			t.Errorf("new key reports Revoked()")
		}
	})

	t.Run("EmptyName", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		mustCreateAccount(t, s, a)
		k := newKey(t, a, "mg-abcd1234", at(0))
		k.Name = ""
		mustCreateKey(t, s, k)
		got, err := s.KeyByHash(ctx(t), k.Hash)
		if err != nil {
			t.Fatalf("KeyByHash: %v", err)
		}
		assertKey(t, "KeyByHash", got, k)
	})

	t.Run("CreateErrors", func(t *testing.T) {
		tests := []struct {
			name   string
			modify func(k *store.Key, first store.Key)
			want   error
		}{
			{"duplicate id", func(k *store.Key, first store.Key) { k.ID = first.ID }, store.ErrConflict},
			{"duplicate hash", func(k *store.Key, first store.Key) { k.Hash = first.Hash }, store.ErrConflict},
			{"unknown account", func(k *store.Key, _ store.Key) { k.AccountID = "acct_missing" }, store.ErrNotFound},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				s := newStore(t)
				a := newAccount(t, "alice", at(0))
				mustCreateAccount(t, s, a)
				first := newKey(t, a, "mg-first000", at(0))
				mustCreateKey(t, s, first)
				k := newKey(t, a, "mg-second00", at(time.Second))
				tc.modify(&k, first)
				if err := s.CreateKey(ctx(t), k); !errors.Is(err, tc.want) {
					t.Fatalf("CreateKey: got %v, want %v", err, tc.want)
				}
				keys, err := s.ListKeys(ctx(t))
				if err != nil {
					t.Fatalf("ListKeys: %v", err)
				}
				if len(keys) != 1 {
					t.Fatalf("ListKeys after failed create: %d keys, want 1", len(keys))
				}
				assertKey(t, "surviving key", keys[0], first)
			})
		}
	})

	t.Run("KeyByHashNotFound", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		mustCreateAccount(t, s, a)
		mustCreateKey(t, s, newKey(t, a, "mg-abcd1234", at(0)))
		other := sha256.Sum256([]byte("not a stored secret"))
		for _, h := range [][]byte{other[:], nil, {}} {
			if k, err := s.KeyByHash(ctx(t), h); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("KeyByHash(%x): got (%+v, %v), want ErrNotFound", h, k, err)
			}
		}
	})

	t.Run("List", func(t *testing.T) {
		s := newStore(t)
		empty, err := s.ListKeys(ctx(t))
		if err != nil {
			t.Fatalf("ListKeys on empty store: %v", err)
		}
		if len(empty) != 0 {
			t.Fatalf("ListKeys on empty store: %+v, want none", empty)
		}
		alice := newAccount(t, "alice", at(0))
		bob := newAccount(t, "bob", at(0))
		mustCreateAccount(t, s, alice)
		mustCreateAccount(t, s, bob)
		// Created out of order so that insertion order differs from age.
		k2 := newKey(t, bob, "mg-bbbb0002", at(2*time.Minute))
		k0 := newKey(t, alice, "mg-aaaa0000", at(0))
		k1 := newKey(t, alice, "mg-aaaa0001", at(time.Minute))
		k1.Group = "premium"
		k1.RevokedAt = at(time.Hour)
		for _, k := range []store.Key{k2, k0, k1} {
			mustCreateKey(t, s, k)
		}
		got, err := s.ListKeys(ctx(t))
		if err != nil {
			t.Fatalf("ListKeys: %v", err)
		}
		want := []store.Key{k0, k1, k2}
		if len(got) != len(want) {
			t.Fatalf("ListKeys: %d keys, want %d", len(got), len(want))
		}
		for i := range want {
			assertKey(t, "ListKeys["+want[i].Prefix+"]", got[i], want[i])
		}

		// KeysOf: one account's keys, revoked included, oldest first.
		for _, tc := range []struct {
			account string
			want    []store.Key
		}{
			{alice.ID, []store.Key{k0, k1}},
			{bob.ID, []store.Key{k2}},
			{"acct_missing", nil},
			{"", nil},
		} {
			got, err := s.KeysOf(ctx(t), tc.account)
			if err != nil {
				t.Fatalf("KeysOf(%q): %v", tc.account, err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("KeysOf(%q): %d keys, want %d", tc.account, len(got), len(tc.want))
			}
			for i := range tc.want {
				assertKey(t, "KeysOf["+tc.want[i].Prefix+"]", got[i], tc.want[i])
			}
		}
	})
}
