package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// revokeFixture is a store holding keys whose prefixes exercise every way a
// revoke ref can match, or must not.
type revokeFixture struct {
	s    store.Store
	keys map[string]store.Key // by prefix
}

// revokePrefixes returns the prefixes of the fixture's keys.
func revokePrefixes() []string {
	return []string{
		"mg-abcd1111",
		"mg-abcd2222",
		"mg-xyz_3333", // literal underscore: "mg-xyz_" must match only this one
		"mg-XYZa4444", // matches "mg-xyz_" if '_' or case were not literal
		"mg-50%x5555", // literal percent
	}
}

// newRevokeFixture stores one account and a key for each revokePrefixes entry.
func newRevokeFixture(t *testing.T, newStore func(t *testing.T) store.Store) revokeFixture {
	t.Helper()
	f := revokeFixture{s: newStore(t), keys: map[string]store.Key{}}
	a := newAccount(t, "alice", at(0))
	mustCreateAccount(t, f.s, a)
	for i, p := range revokePrefixes() {
		k := newKey(t, a, p, at(time.Duration(i)*time.Second))
		mustCreateKey(t, f.s, k)
		f.keys[p] = k
	}
	return f
}

// testRevokeKey covers RevokeKey's matching rules and its idempotence.
func testRevokeKey(t *testing.T, newStore func(t *testing.T) store.Store) {
	revokedAt := at(24 * time.Hour)
	tests := []struct {
		name string
		ref  func(f revokeFixture) string
		want string // prefix of the key expected to be revoked; "" when an error is expected
		err  error
	}{
		{"by id", func(f revokeFixture) string { return f.keys["mg-abcd1111"].ID }, "mg-abcd1111", nil},
		{"by full prefix", fixed("mg-abcd2222"), "mg-abcd2222", nil},
		{"by unique prefix", fixed("mg-abcd1"), "mg-abcd1111", nil},
		{"by four-byte prefix", fixed("mg-5"), "mg-50%x5555", nil},
		{"literal underscore", fixed("mg-xyz_"), "mg-xyz_3333", nil},
		{"literal percent", fixed("mg-50%"), "mg-50%x5555", nil},
		{"ambiguous prefix", fixed("mg-abcd"), "", store.ErrAmbiguous},
		{"ambiguous common prefix", fixed("mg-a"), "", store.ErrAmbiguous},
		{"not found", fixed("mg-nope"), "", store.ErrNotFound},
		{"percent is not a wildcard", fixed("mg-%"), "", store.ErrNotFound},
		{"underscore is not a wildcard", fixed("mg-____"), "", store.ErrNotFound},
		{"backslash is literal", fixed(`mg-\`), "", store.ErrNotFound},
		{"prefix is case-sensitive", fixed("mg-ABCD1"), "", store.ErrNotFound},
		{"too short for a prefix", fixed("mg-"), "", store.ErrNotFound},
		{"empty ref", fixed(""), "", store.ErrNotFound},
		{"id prefix is not a ref", func(f revokeFixture) string { return f.keys["mg-abcd1111"].ID[:8] }, "", store.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newRevokeFixture(t, newStore)
			ref := tc.ref(f)
			got, err := f.s.RevokeKey(ctx(t), ref, revokedAt)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("RevokeKey(%q): got (%+v, %v), want %v", ref, got, err, tc.err)
				}
			} else {
				if err != nil {
					t.Fatalf("RevokeKey(%q): %v", ref, err)
				}
				want := f.keys[tc.want]
				want.RevokedAt = revokedAt
				assertKey(t, "revoked key", got, want)
			}
			// Exactly the expected key, and no other, is revoked in the store.
			keys, err := f.s.ListKeys(ctx(t))
			if err != nil {
				t.Fatalf("ListKeys: %v", err)
			}
			if len(keys) != len(revokePrefixes()) {
				t.Fatalf("ListKeys: %d keys, want %d", len(keys), len(revokePrefixes()))
			}
			for _, k := range keys {
				if wantRevoked := k.Prefix == tc.want; k.Revoked() != wantRevoked {
					t.Errorf("key %q: Revoked() = %v, want %v", k.Prefix, k.Revoked(), wantRevoked)
				}
			}
		})
	}

	t.Run("twice keeps first time", func(t *testing.T) {
		f := newRevokeFixture(t, newStore)
		k := f.keys["mg-abcd1111"]
		first, second := at(time.Hour), at(2*time.Hour)
		if _, err := f.s.RevokeKey(ctx(t), k.ID, first); err != nil {
			t.Fatalf("first RevokeKey: %v", err)
		}
		got, err := f.s.RevokeKey(ctx(t), "mg-abcd1", second)
		if err != nil {
			t.Fatalf("second RevokeKey: %v", err)
		}
		want := k
		want.RevokedAt = first
		assertKey(t, "second RevokeKey result", got, want)
		stored, err := f.s.KeyByHash(ctx(t), k.Hash)
		if err != nil {
			t.Fatalf("KeyByHash: %v", err)
		}
		assertKey(t, "stored key", stored, want)
	})

	t.Run("revoked key still found by hash", func(t *testing.T) {
		f := newRevokeFixture(t, newStore)
		k := f.keys["mg-xyz_3333"]
		if _, err := f.s.RevokeKey(ctx(t), k.ID, revokedAt); err != nil {
			t.Fatalf("RevokeKey: %v", err)
		}
		got, err := f.s.KeyByHash(ctx(t), k.Hash)
		if err != nil {
			t.Fatalf("KeyByHash of revoked key: %v", err)
		}
		if !got.Revoked() || !got.RevokedAt.Equal(revokedAt) {
			t.Fatalf("KeyByHash: RevokedAt = %v, want %v", got.RevokedAt, revokedAt)
		}
		other, err := f.s.KeyByHash(ctx(t), f.keys["mg-XYZa4444"].Hash)
		if err != nil {
			t.Fatalf("KeyByHash of other key: %v", err)
		}
		if other.Revoked() {
			t.Fatalf("other key revoked too: %+v", other)
		}
	})
}

// fixed returns a ref function that ignores the fixture.
func fixed(ref string) func(revokeFixture) string {
	return func(revokeFixture) string { return ref }
}
