package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// testLeaseHold checks the leases replicas take from a shared balance:
// granted within what the balance less the other instances' fresh holds
// covers, never below least, and, taken concurrently, never more in total
// than the balance.
func testLeaseHold(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Grants", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "acme", at(0))
		mustCreateAccount(t, s, a)
		if _, err := s.Post(ctx(t), store.LedgerEntry{AccountID: a.ID, Kind: store.KindTopUp, Amount: 100, Time: at(0)}); err != nil {
			t.Fatal(err)
		}
		fresh := at(time.Minute)
		for _, c := range []struct {
			inst        string
			least, want money.Micros
			stamp       time.Time
			granted     money.Micros
		}{
			{"i1", 30, 50, at(time.Minute), 50},     // all it wants
			{"i2", 40, 60, at(time.Minute), 40},     // 50 left: least, not all of it
			{"i3", 11, 20, at(time.Minute), 0},      // 10 left
			{"i1", 61, 61, at(time.Minute), 0},      // its own hold is not counted against it, others' are: 60 free
			{"i1", 20, 20, at(0), 20},               // lowered (and stamped before fresh: stale from now on)
			{"i3", 61, 61, at(time.Minute), 0},      // i2's 40 still counts
			{"i3", 60, 60, at(2 * time.Minute), 60}, // i1's stale 20 does not
			{"i2", 0, 0, at(2 * time.Minute), 0},    // released
			{"i1", 1, 100, at(2 * time.Minute), 1},  // 100 less i3's 60: least
		} {
			got, err := s.LeaseHold(ctx(t), c.inst, a.ID, c.least, c.want, c.stamp, fresh)
			if err != nil || got != c.granted {
				t.Errorf("LeaseHold(%s, %v..%v) = %v, %v; want %v", c.inst, c.least, c.want, got, err, c.granted)
			}
		}
		if v, err := s.Reserved(ctx(t), a.ID); err != nil || v != 61 {
			t.Errorf("Reserved = %v, %v; want 61", v, err)
		}
		if _, err := s.LeaseHold(ctx(t), "i1", "acct_missing", 1, 1, at(0), fresh); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("LeaseHold on a missing account: %v, want ErrNotFound", err)
		}
		if _, err := s.LeaseHold(ctx(t), "i1", a.ID, 5, 4, at(0), fresh); err == nil {
			t.Error("LeaseHold with want below least succeeded")
		}
	})

	t.Run("ConcurrentNeverExceedTheBalance", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "acme", at(0))
		mustCreateAccount(t, s, a)
		if _, err := s.Post(ctx(t), store.LedgerEntry{AccountID: a.ID, Kind: store.KindTopUp, Amount: 100, Time: at(0)}); err != nil {
			t.Fatal(err)
		}
		var granted atomic.Int64
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Go(func() {
				g, err := s.LeaseHold(ctx(t), fmt.Sprintf("i%d", i), a.ID, 15, 15, at(0), at(0))
				if err != nil {
					t.Error(err)
				}
				granted.Add(int64(g))
			})
		}
		wg.Wait()
		if g := granted.Load(); g != 90 {
			t.Errorf("granted %d in total to 12 instances asking 15 each of 100, want 90 (six leases)", g)
		}
	})
}
