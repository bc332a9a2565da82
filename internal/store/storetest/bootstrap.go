package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// testBootstrap covers Bootstrap: once per database, atomic, race-free.
func testBootstrap(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Once", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "admin", at(0))
		k := newKey(t, a, "mg-boot0001", at(0))
		did, err := s.Bootstrap(ctx(t), a, k, 0)
		if err != nil || !did {
			t.Fatalf("first Bootstrap: got (%v, %v), want (true, nil)", did, err)
		}
		gotA, err := s.AccountByName(ctx(t), "admin")
		if err != nil {
			t.Fatalf("AccountByName after Bootstrap: %v", err)
		}
		assertEqual(t, "bootstrapped account", normAccount(gotA), normAccount(a))
		gotK, err := s.KeyByHash(ctx(t), k.Hash)
		if err != nil {
			t.Fatalf("KeyByHash after Bootstrap: %v", err)
		}
		assertKey(t, "bootstrapped key", gotK, k)

		a2 := newAccount(t, "admin2", at(time.Hour))
		k2 := newKey(t, a2, "mg-boot0002", at(time.Hour))
		did, err = s.Bootstrap(ctx(t), a2, k2, 0)
		if err != nil || did {
			t.Fatalf("second Bootstrap: got (%v, %v), want (false, nil)", did, err)
		}
		if _, err := s.AccountByName(ctx(t), "admin2"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second Bootstrap inserted its account: %v", err)
		}
		if _, err := s.KeyByHash(ctx(t), k2.Hash); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second Bootstrap inserted its key: %v", err)
		}
	})

	t.Run("FailedBootstrapLeavesNoTrace", func(t *testing.T) {
		s := newStore(t)
		taken := newAccount(t, "admin", at(0))
		mustCreateAccount(t, s, taken)

		// The account name is taken: the whole bootstrap must roll back.
		a := newAccount(t, "admin", at(time.Minute))
		k := newKey(t, a, "mg-boot0001", at(time.Minute))
		did, err := s.Bootstrap(ctx(t), a, k, 0)
		if did || !errors.Is(err, store.ErrConflict) {
			t.Fatalf("Bootstrap with a taken name: got (%v, %v), want (false, ErrConflict)", did, err)
		}
		if _, err := s.KeyByHash(ctx(t), k.Hash); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("failed Bootstrap left its key: %v", err)
		}

		// So the database is still not bootstrapped.
		a2 := newAccount(t, "root", at(time.Hour))
		k2 := newKey(t, a2, "mg-boot0002", at(time.Hour))
		did, err = s.Bootstrap(ctx(t), a2, k2, 0)
		if err != nil || !did {
			t.Fatalf("Bootstrap after a failed one: got (%v, %v), want (true, nil)", did, err)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		s := newStore(t)
		const n = 8
		type result struct {
			did bool
			err error
			a   store.Account
			k   store.Key
		}
		results := make([]result, n)
		c := ctx(t)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			a := newAccount(t, fmt.Sprintf("admin%d", i), at(0))
			k := newKey(t, a, fmt.Sprintf("mg-boot%04d", i), at(0))
			wg.Go(func() {
				<-start
				did, err := s.Bootstrap(c, a, k, 0)
				results[i] = result{did: did, err: err, a: a, k: k}
			})
		}
		close(start)
		wg.Wait()

		var winners []result
		for i, r := range results {
			if r.err != nil {
				t.Errorf("Bootstrap #%d: %v", i, r.err)
			}
			if r.did {
				winners = append(winners, r)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("%d Bootstrap calls returned true, want exactly 1", len(winners))
		}
		accounts, err := s.ListAccounts(ctx(t))
		if err != nil {
			t.Fatalf("ListAccounts: %v", err)
		}
		keys, err := s.ListKeys(ctx(t))
		if err != nil {
			t.Fatalf("ListKeys: %v", err)
		}
		if len(accounts) != 1 || len(keys) != 1 {
			t.Fatalf("after concurrent Bootstrap: %d accounts, %d keys; want 1 and 1", len(accounts), len(keys))
		}
		assertEqual(t, "account", normAccount(accounts[0]), normAccount(winners[0].a))
		assertKey(t, "key", keys[0], winners[0].k)
	})
}
