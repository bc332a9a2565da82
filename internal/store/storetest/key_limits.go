package storetest

import (
	"errors"
	"testing"

	"github.com/modelgate/modelgate/internal/store"
)

// testKeyLimits covers a key's own rate limits: set at creation, read back
// by every read, replaced (and cleared) by SetKeyLimits by ID or prefix.
func testKeyLimits(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a := fundedAccount(t, s, "alice")
	k := newKey(t, a, "mg-limits1", at(0))
	k.Limits = store.KeyLimits{RPM: 60, TPM: 10_000, Concurrency: 2}
	mustCreateKey(t, s, k)
	plain := newKey(t, a, "mg-plain01", at(0))
	mustCreateKey(t, s, plain)

	read := func(t *testing.T, k store.Key) store.KeyLimits {
		t.Helper()
		byHash, err := s.KeyByHash(ctx(t), k.Hash)
		if err != nil {
			t.Fatal(err)
		}
		byID, err := s.KeyByID(ctx(t), k.ID)
		if err != nil {
			t.Fatal(err)
		}
		if byHash.Limits != byID.Limits {
			t.Fatalf("KeyByHash limits %+v, KeyByID %+v", byHash.Limits, byID.Limits)
		}
		return byID.Limits
	}
	if got := read(t, k); got != k.Limits {
		t.Fatalf("created limits read back as %+v, want %+v", got, k.Limits)
	}
	if got := read(t, plain); got != (store.KeyLimits{}) {
		t.Fatalf("a key without limits reads %+v", got)
	}
	steps := []struct {
		name    string
		ref     string
		limits  store.KeyLimits
		wantErr error
		want    store.KeyLimits
	}{
		{"by id", k.ID, store.KeyLimits{RPM: 3}, nil, store.KeyLimits{RPM: 3}},
		{"by prefix", "mg-limits", store.KeyLimits{TPM: 500, Concurrency: 1}, nil, store.KeyLimits{TPM: 500, Concurrency: 1}},
		{"cleared", k.ID, store.KeyLimits{}, nil, store.KeyLimits{}},
		{"unknown key", "mg-nope", store.KeyLimits{RPM: 1}, store.ErrNotFound, store.KeyLimits{}},
		{"negative", k.ID, store.KeyLimits{RPM: -1}, errors.New("any"), store.KeyLimits{}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			got, err := s.SetKeyLimits(ctx(t), st.ref, st.limits)
			switch {
			case st.wantErr == nil && err != nil:
				t.Fatalf("SetKeyLimits: %v", err)
			case st.wantErr != nil && err == nil:
				t.Fatalf("SetKeyLimits(%+v) succeeded, want an error", st.limits)
			case st.wantErr == store.ErrNotFound && !errors.Is(err, store.ErrNotFound):
				t.Fatalf("SetKeyLimits: %v, want ErrNotFound", err)
			case err != nil:
				return
			}
			if got.ID != k.ID || got.Limits != st.want {
				t.Fatalf("SetKeyLimits returned %s %+v, want %s %+v", got.ID, got.Limits, k.ID, st.want)
			}
			if r := read(t, k); r != st.want {
				t.Fatalf("read back %+v, want %+v", r, st.want)
			}
		})
	}
	if got := read(t, plain); got != (store.KeyLimits{}) {
		t.Fatalf("another key's limits changed to %+v", got)
	}
}
