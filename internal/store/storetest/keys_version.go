package storetest

import (
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// testKeysVersion covers KeysVersion: every change that can make a key stop
// authenticating moves it, and the writes the gateway makes all the time
// (a batch of usage with its charges, a credit, a new key) leave it alone,
// or a cache revalidating by it would read every key again each time.
func testKeysVersion(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a := fundedAccount(t, s, "alice")
	k := newKey(t, a, "mg-version1", at(0))
	k.SpendCap = money.Unit
	mustCreateKey(t, s, k)
	b := fundedAccount(t, s, "bob")

	charged := func(id string, d time.Duration) store.UsageRecord {
		r := usageRecord(id, a.ID, at(d))
		r.KeyID, r.Cost = k.ID, 1500
		return r
	}
	// The steps run in order on the same store; moves says whether the
	// version must change (true) or stay (false).
	steps := []struct {
		name  string
		do    func(t *testing.T)
		moves bool
	}{
		{"a new account", func(t *testing.T) { mustCreateAccount(t, s, newAccount(t, "carol", at(0))) }, false},
		{"a new key", func(t *testing.T) { mustCreateKey(t, s, newKey(t, b, "mg-version2", at(0))) }, false},
		{"appended usage with charges", func(t *testing.T) {
			if err := s.AppendUsage(ctx(t), []store.UsageRecord{charged("req-v1", time.Minute), charged("req-v2", 2*time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"inserted usage with charges", func(t *testing.T) { insertUsage(t, s, []store.UsageRecord{charged("req-v3", 3*time.Minute)}) }, false},
		{"a credit", func(t *testing.T) {
			if _, err := s.Post(ctx(t), store.LedgerEntry{AccountID: a.ID, Kind: store.KindTopUp, Amount: money.Unit, Time: at(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"the admin role", func(t *testing.T) {
			if err := s.SetAccountAdmin(ctx(t), b.ID, true); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"the key's account disabled", func(t *testing.T) {
			if err := s.SetAccountDisabled(ctx(t), a.ID, at(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"the account enabled again", func(t *testing.T) {
			if err := s.SetAccountDisabled(ctx(t), a.ID, time.Time{}); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"the key's rate limits changed", func(t *testing.T) {
			if _, err := s.SetKeyLimits(ctx(t), k.ID, store.KeyLimits{RPM: 3}); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"the key revoked", func(t *testing.T) {
			if _, err := s.RevokeKey(ctx(t), k.ID, at(2*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	last := keysVersion(t, s)
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.do(t)
			v := keysVersion(t, s)
			if moved := v != last; moved != st.moves {
				t.Errorf("KeysVersion %d → %d: moved %t, want %t", last, v, moved, st.moves)
			}
			last = v
		})
	}
}

func keysVersion(t *testing.T, s store.Store) int64 {
	t.Helper()
	v, err := s.KeysVersion(ctx(t))
	if err != nil {
		t.Fatalf("KeysVersion: %v", err)
	}
	return v
}
