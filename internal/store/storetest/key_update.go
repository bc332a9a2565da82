package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

func testUpdateKey(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a := newAccount(t, "acme", at(0))
	b := newAccount(t, "bmce", at(0))
	mustCreateAccount(t, s, a)
	mustCreateAccount(t, s, b)
	k := newKey(t, a, "mg-upd1", at(0))
	mustCreateKey(t, s, k)
	version := func() int64 {
		t.Helper()
		v, err := s.KeysVersion(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	name, cap5, capNone := "renamed", money.Micros(5*money.Unit), money.Micros(0)
	expires, never := at(48*time.Hour), time.Time{}
	yes, no := true, false

	steps := []struct {
		name    string
		account string
		u       store.KeyUpdate
		at      time.Time
		edit    func(*store.Key) // what the key becomes
		moves   bool             // KeysVersion moves
	}{
		{"nothing", a.ID, store.KeyUpdate{}, at(time.Hour), func(*store.Key) {}, false},
		{"rename", a.ID, store.KeyUpdate{Name: &name}, at(time.Hour), func(k *store.Key) { k.Name = name }, false},
		{"cap", a.ID, store.KeyUpdate{SpendCap: &cap5}, at(time.Hour), func(k *store.Key) { k.SpendCap = cap5 }, true},
		{"expiry, as operator", "", store.KeyUpdate{ExpiresAt: &expires}, at(time.Hour), func(k *store.Key) { k.ExpiresAt = expires }, true},
		{"disable", a.ID, store.KeyUpdate{Disabled: &yes}, at(2 * time.Hour), func(k *store.Key) { k.DisabledAt = at(2 * time.Hour) }, true},
		{"disable again keeps the time", a.ID, store.KeyUpdate{Disabled: &yes}, at(3 * time.Hour), func(*store.Key) {}, false},
		{"clear cap and expiry, enable", a.ID, store.KeyUpdate{SpendCap: &capNone, ExpiresAt: &never, Disabled: &no}, at(4 * time.Hour),
			func(k *store.Key) { k.SpendCap, k.ExpiresAt, k.DisabledAt = 0, time.Time{}, time.Time{} }, true},
	}
	want := k
	for _, st := range steps {
		before := version()
		got, err := s.UpdateKey(ctx(t), st.account, k.ID, st.u, st.at)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		st.edit(&want)
		assertKey(t, st.name, got, want)
		read, err := s.KeyByHash(ctx(t), k.Hash)
		if err != nil {
			t.Fatal(err)
		}
		assertKey(t, st.name+" (read again)", read, want)
		if read.Disabled() != !want.DisabledAt.IsZero() {
			t.Errorf("%s: Disabled() = %v", st.name, read.Disabled())
		}
		if moved := version() != before; st.moves && !moved {
			t.Errorf("%s: KeysVersion did not move", st.name)
		}
	}
	keys, err := s.KeysOf(ctx(t), a.ID)
	if err != nil || len(keys) != 1 {
		t.Fatalf("KeysOf: %v, %v", keys, err)
	}
	assertKey(t, "KeysOf", keys[0], want)

	// A key created disabled reads so.
	off := newKey(t, a, "mg-upd2", at(0))
	off.DisabledAt = at(time.Minute)
	mustCreateKey(t, s, off)
	if got, err := s.KeyByID(ctx(t), off.ID); err != nil || !got.DisabledAt.Equal(off.DisabledAt) {
		t.Errorf("created disabled: %+v, %v", got, err)
	}

	neg := money.Micros(-1)
	for _, tc := range []struct {
		name, account, id string
		u                 store.KeyUpdate
		want              error // nil: any error
	}{
		{"another account's key", b.ID, k.ID, store.KeyUpdate{Name: &name}, store.ErrNotFound},
		{"unknown key", "", "key_missing", store.KeyUpdate{Name: &name}, store.ErrNotFound},
		{"negative cap", a.ID, k.ID, store.KeyUpdate{SpendCap: &neg}, nil},
	} {
		_, err := s.UpdateKey(ctx(t), tc.account, tc.id, tc.u, at(5*time.Hour))
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := s.RevokeKey(ctx(t), k.ID, at(6*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateKey(ctx(t), a.ID, k.ID, store.KeyUpdate{Disabled: &no}, at(7*time.Hour)); !errors.Is(err, store.ErrConflict) {
		t.Errorf("revoked key: %v, want ErrConflict", err)
	}
	if got, _ := s.KeyByID(ctx(t), k.ID); got.Name != name || !got.DisabledAt.IsZero() {
		t.Errorf("revoked key changed: %+v", got)
	}
}
