package storetest

import (
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// testAccounts covers CreateAccount, AccountByName, AccountByID, ListAccounts.
func testAccounts(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		mustCreateAccount(t, s, a)

		byName, err := s.AccountByName(ctx(t), "alice")
		if err != nil {
			t.Fatalf("AccountByName: %v", err)
		}
		assertEqual(t, "AccountByName", normAccount(byName), normAccount(a))

		byID, err := s.AccountByID(ctx(t), a.ID)
		if err != nil {
			t.Fatalf("AccountByID: %v", err)
		}
		assertEqual(t, "AccountByID", normAccount(byID), normAccount(a))
	})

	t.Run("Conflict", func(t *testing.T) {
		tests := []struct {
			name   string
			modify func(dup *store.Account, first store.Account)
		}{
			{"same name", func(dup *store.Account, first store.Account) { dup.Name = first.Name }},
			{"same id", func(dup *store.Account, first store.Account) { dup.ID = first.ID }},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				s := newStore(t)
				first := newAccount(t, "alice", at(0))
				mustCreateAccount(t, s, first)
				dup := newAccount(t, "bob", at(time.Second))
				tc.modify(&dup, first)
				err := s.CreateAccount(ctx(t), dup)
				if !errors.Is(err, store.ErrConflict) {
					t.Fatalf("CreateAccount duplicate: got %v, want ErrConflict", err)
				}
				all, err := s.ListAccounts(ctx(t))
				if err != nil {
					t.Fatalf("ListAccounts: %v", err)
				}
				if len(all) != 1 {
					t.Fatalf("ListAccounts after conflict: %d accounts, want 1", len(all))
				}
				assertEqual(t, "surviving account", normAccount(all[0]), normAccount(first))
			})
		}
	})

	t.Run("NotFound", func(t *testing.T) {
		s := newStore(t)
		mustCreateAccount(t, s, newAccount(t, "alice", at(0)))
		tests := []struct {
			name   string
			lookup func() (store.Account, error)
		}{
			{"by name", func() (store.Account, error) { return s.AccountByName(ctx(t), "nobody") }},
			{"by name case", func() (store.Account, error) { return s.AccountByName(ctx(t), "ALICE") }},
			{"by id", func() (store.Account, error) { return s.AccountByID(ctx(t), "acct_missing") }},
			{"by empty id", func() (store.Account, error) { return s.AccountByID(ctx(t), "") }},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				a, err := tc.lookup()
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("got (%+v, %v), want ErrNotFound", a, err)
				}
			})
		}
	})

	t.Run("List", func(t *testing.T) {
		s := newStore(t)
		empty, err := s.ListAccounts(ctx(t))
		if err != nil {
			t.Fatalf("ListAccounts on empty store: %v", err)
		}
		if len(empty) != 0 {
			t.Fatalf("ListAccounts on empty store: %+v, want none", empty)
		}
		var want []store.Account
		for i, name := range []string{"carol", "alice", "bob"} {
			a := newAccount(t, name, at(time.Duration(i)*time.Minute))
			mustCreateAccount(t, s, a)
			want = append(want, normAccount(a))
		}
		got, err := s.ListAccounts(ctx(t))
		if err != nil {
			t.Fatalf("ListAccounts: %v", err)
		}
		for i := range got {
			got[i] = normAccount(got[i])
		}
		byID := func(as []store.Account) {
			sort.Slice(as, func(i, j int) bool { return as[i].ID < as[j].ID })
		}
		byID(got)
		byID(want)
		assertEqual(t, "ListAccounts", got, want)
	})
}
