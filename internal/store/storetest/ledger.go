package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// fundedAccount creates an account named name with one unit topped up.
func fundedAccount(t *testing.T, s store.Store, name string) store.Account {
	t.Helper()
	a := newAccount(t, name, at(0))
	if err := s.CreateAccount(ctx(t), a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Post(ctx(t), store.LedgerEntry{AccountID: a.ID, Kind: store.KindTopUp, Amount: money.Unit, Time: at(0)}); err != nil {
		t.Fatal(err)
	}
	return a
}

// checkBalance fails unless the account's balance and spent are as given
// and the balance equals the sum of its ledger.
func checkBalance(t *testing.T, s store.Store, id string, balance, spent money.Micros) {
	t.Helper()
	a, err := s.AccountByID(ctx(t), id)
	if err != nil {
		t.Fatalf("AccountByID: %v", err)
	}
	sum, err := s.LedgerSum(ctx(t), id)
	if err != nil {
		t.Fatalf("LedgerSum: %v", err)
	}
	if a.Balance != balance || a.Spent != spent || sum != a.Balance {
		t.Errorf("balance %v spent %v ledger sum %v; want balance %v spent %v", a.Balance, a.Spent, sum, balance, spent)
	}
}

func testLedger(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("PostMovesBalance", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "acme", at(0))
		if err := s.CreateAccount(ctx(t), a); err != nil {
			t.Fatal(err)
		}
		checkBalance(t, s, a.ID, 0, 0)
		steps := []struct {
			kind   store.LedgerKind
			amount money.Micros
			ref    string
			want   money.Micros
			err    error
		}{
			{store.KindTopUp, 10 * money.Unit, "pay_1", 10 * money.Unit, nil},
			{store.KindTopUp, 10 * money.Unit, "pay_1", 10 * money.Unit, store.ErrConflict}, // same payment twice
			{store.KindBonus, 250, "", 10*money.Unit + 250, nil},
			{store.KindAdjustment, -50, "", 10*money.Unit + 200, nil},
			{store.KindRefund, 1, "", 10*money.Unit + 201, nil},
			{"gift", 1, "", 10*money.Unit + 201, errors.New("any")},
		}
		for i, st := range steps {
			e, err := s.Post(ctx(t), store.LedgerEntry{AccountID: a.ID, Kind: st.kind, Amount: st.amount,
				Ref: st.ref, Note: fmt.Sprintf("step %d", i), Time: at(time.Duration(i) * time.Second)})
			switch {
			case st.err == nil && err != nil:
				t.Fatalf("step %d: %v", i, err)
			case st.err != nil && err == nil:
				t.Fatalf("step %d: no error", i)
			case st.err == store.ErrConflict && !errors.Is(err, store.ErrConflict):
				t.Fatalf("step %d: %v, want ErrConflict", i, err)
			case err == nil && (e.BalanceAfter != st.want || e.ID == 0):
				t.Errorf("step %d: entry %+v, want balance after %v", i, e, st.want)
			}
		}
		checkBalance(t, s, a.ID, 10*money.Unit+201, 0)
		entries, err := s.ListLedger(ctx(t), a.ID)
		if err != nil || len(entries) != 4 {
			t.Fatalf("ListLedger: %d entries, %v", len(entries), err)
		}
		if e := entries[0]; e.Kind != store.KindTopUp || e.Ref != "pay_1" || e.Note != "step 0" || !e.Time.Equal(at(0)) {
			t.Errorf("first entry %+v", e)
		}
		if _, err := s.Post(ctx(t), store.LedgerEntry{AccountID: "acct_missing", Kind: store.KindTopUp, Amount: 1, Time: at(0)}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("post to a missing account: %v", err)
		}
	})

	t.Run("UsageChargesOnce", func(t *testing.T) {
		s := newStore(t)
		a := fundedAccount(t, s, "acme")
		k := newKey(t, a, "mg-ledg", at(0))
		if err := s.CreateKey(ctx(t), k); err != nil {
			t.Fatal(err)
		}
		rec := func(id string, cost money.Micros) store.UsageRecord {
			r := usageRecord(id, a.ID, at(time.Second))
			r.KeyID, r.Cost = k.ID, cost
			return r
		}
		batch := []store.UsageRecord{rec("req_1", 1500), rec("req_2", 0), rec("req_3", 2500)}
		for range 2 { // a retried batch charges nothing more
			if err := s.InsertUsage(ctx(t), batch); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.InsertUsage(ctx(t), []store.UsageRecord{rec("req_1", 9999), rec("req_4", 1)}); err != nil {
			t.Fatal(err)
		}
		checkBalance(t, s, a.ID, money.Unit-4001, 4001)
		got, err := s.KeyByID(ctx(t), k.ID)
		if err != nil || got.Spent != 4001 {
			t.Errorf("key spent %v, %v", got.Spent, err)
		}
		entries, _ := s.ListLedger(ctx(t), a.ID)
		if len(entries) != 4 || entries[1].Kind != store.KindCharge || entries[1].Amount != -1500 || entries[1].Ref != "req_1" {
			t.Errorf("ledger %+v", entries)
		}
		recs := listUsage(t, s, store.UsageFilter{AccountID: a.ID})
		if len(recs) != 4 || recs[0].Cost+recs[1].Cost+recs[2].Cost+recs[3].Cost != 4001 {
			t.Errorf("records %+v", recs)
		}
	})

	t.Run("ChargeToMissingAccountFails", func(t *testing.T) {
		// A charge needs its account's balance: a batch charging an
		// account the store does not have fails whole, for both ways in.
		s := newStore(t)
		a := newAccount(t, "known", at(0))
		if err := s.CreateAccount(ctx(t), a); err != nil {
			t.Fatal(err)
		}
		ok := usageRecord("req_ok", a.ID, at(time.Second))
		ok.KeyID, ok.Cost = "", 5
		lost := usageRecord("req_lost", "acct_missing", at(time.Second))
		lost.KeyID, lost.Cost = "", 7
		for name, write := range map[string]func(context.Context, []store.UsageRecord) error{
			"InsertUsage": s.InsertUsage, "AppendUsage": s.AppendUsage,
		} {
			if err := write(ctx(t), []store.UsageRecord{ok, lost}); err == nil {
				t.Errorf("%s charging a missing account: no error", name)
			}
		}
		if got := listUsage(t, s, store.UsageFilter{}); len(got) != 0 {
			t.Errorf("%d records stored by failed batches", len(got))
		}
		checkBalance(t, s, a.ID, 0, 0)
	})

	t.Run("AppendedThenReplayedChargesOnce", func(t *testing.T) {
		s := newStore(t)
		a := fundedAccount(t, s, "replay")
		rec := func(id string, cost money.Micros, sec int) store.UsageRecord {
			r := usageRecord(id, a.ID, at(time.Duration(sec)*time.Second))
			r.KeyID, r.Cost = "", cost
			return r
		}
		batch := []store.UsageRecord{rec("req_1", 1500, 1), rec("req_2", 0, 2), rec("req_3", 2500, 3)}
		if err := s.AppendUsage(ctx(t), batch); err != nil {
			t.Fatal(err)
		}
		checkBalance(t, s, a.ID, money.Unit-4000, 4000)
		// The journal hands the batch back after a crash, with one record
		// the crash kept from being stored: only that one is charged.
		if err := s.InsertUsage(ctx(t), append(batch, rec("req_4", 7, 2))); err != nil {
			t.Fatal(err)
		}
		checkBalance(t, s, a.ID, money.Unit-4007, 4007)
		if entries, _ := s.ListLedger(ctx(t), a.ID); len(entries) != 4 {
			t.Errorf("%d ledger entries, want 4 (one top-up, three charges): %+v", len(entries), entries)
		}
	})

	t.Run("LargeBatchChargesEachOnce", func(t *testing.T) {
		s := newStore(t)
		a := fundedAccount(t, s, "bulk")
		// More records than one statement takes, with an id repeated inside
		// the batch (charged once) and across the statement boundary.
		var batch []store.UsageRecord
		for i := range 450 {
			r := usageRecord(fmt.Sprintf("bulk_%03d", i), a.ID, at(time.Second))
			r.Cost = 10
			batch = append(batch, r)
		}
		batch = append(batch, batch[0], batch[399])
		if err := s.InsertUsage(ctx(t), batch); err != nil {
			t.Fatal(err)
		}
		checkBalance(t, s, a.ID, money.Unit-4500, 4500)
		if entries, _ := s.ListLedger(ctx(t), a.ID); len(entries) != 451 {
			t.Errorf("%d ledger entries, want 451 (one top-up, 450 charges)", len(entries))
		}
	})

	t.Run("ConcurrentPostsAddUp", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "acme", at(0))
		if err := s.CreateAccount(ctx(t), a); err != nil {
			t.Fatal(err)
		}
		const n = 50
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if i%2 == 0 {
					_, err := s.Post(ctx(t), store.LedgerEntry{AccountID: a.ID, Kind: store.KindTopUp, Amount: 3, Time: at(0)})
					if err != nil {
						t.Error(err)
					}
					return
				}
				r := usageRecord(fmt.Sprintf("req_%d", i), a.ID, at(0))
				r.KeyID, r.Cost = "", 1
				if err := s.InsertUsage(ctx(t), []store.UsageRecord{r}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		checkBalance(t, s, a.ID, 25*3-25, 25)
		entries, err := s.ListLedger(ctx(t), a.ID)
		if err != nil || len(entries) != n {
			t.Fatalf("ListLedger: %d entries, %v; want %d", len(entries), err, n)
		}
		CheckRunningSum(t, entries)
	})

	t.Run("KeyCapAndExpiryRoundTrip", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "acme", at(0))
		k := newKey(t, a, "mg-capx", at(0))
		k.SpendCap, k.ExpiresAt = 5*money.Unit, at(30*24*time.Hour)
		if err := s.CreateAccount(ctx(t), a); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateKey(ctx(t), k); err != nil {
			t.Fatal(err)
		}
		got, err := s.KeyByHash(ctx(t), k.Hash)
		if err != nil || got.SpendCap != k.SpendCap || !got.ExpiresAt.Equal(k.ExpiresAt) || got.Spent != 0 {
			t.Errorf("KeyByHash = %+v, %v", got, err)
		}
		if !got.Expired(at(31*24*time.Hour)) || got.Expired(at(time.Hour)) {
			t.Error("Expired is wrong")
		}
	})

	t.Run("BootstrapCredit", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "default", at(0))
		k := newKey(t, a, "mg-boot", at(0))
		if did, err := s.Bootstrap(ctx(t), a, k, 5*money.Unit); err != nil || !did {
			t.Fatalf("Bootstrap: %v %v", did, err)
		}
		checkBalance(t, s, a.ID, 5*money.Unit, 0)
		a2 := newAccount(t, "other", at(0))
		if did, _ := s.Bootstrap(ctx(t), a2, newKey(t, a2, "mg-boo2", at(0)), 5*money.Unit); did {
			t.Error("second bootstrap did something")
		}
		checkBalance(t, s, a.ID, 5*money.Unit, 0)
	})
}

func testHolds(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	put := func(inst string, m map[string]money.Micros, when time.Time) {
		t.Helper()
		if err := s.PutHolds(ctx(t), inst, m, when); err != nil {
			t.Fatal(err)
		}
	}
	reserved := func(id string) money.Micros {
		t.Helper()
		v, err := s.Reserved(ctx(t), id)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	put("i1", map[string]money.Micros{"a": 10, "b": 5}, at(0))
	put("i2", map[string]money.Micros{"a": 7}, at(time.Minute))
	if reserved("a") != 17 || reserved("b") != 5 || reserved("c") != 0 {
		t.Errorf("reserved a=%v b=%v", reserved("a"), reserved("b"))
	}
	put("i1", map[string]money.Micros{"b": 1}, at(0)) // replaces, not adds
	if reserved("a") != 7 || reserved("b") != 1 {
		t.Errorf("after replace: a=%v b=%v", reserved("a"), reserved("b"))
	}
	dropped, err := s.DropHolds(ctx(t), "i3", at(30*time.Second))
	if err != nil || len(dropped) != 1 || dropped["b"] != 1 {
		t.Errorf("DropHolds = %v, %v", dropped, err)
	}
	if dropped, _ := s.DropHolds(ctx(t), "i2", at(time.Hour)); len(dropped) != 0 {
		t.Errorf("dropped the keeper's holds: %v", dropped)
	}
	if reserved("a") != 7 || reserved("b") != 0 {
		t.Errorf("after drop: a=%v b=%v", reserved("a"), reserved("b"))
	}
}

// CheckRunningSum fails unless entries, an account's whole ledger oldest
// first, have increasing ids and each balance_after is the running sum:
// posted entries and usage charges share one id order, whichever process
// wrote them. It returns the sum.
func CheckRunningSum(t *testing.T, entries []store.LedgerEntry) money.Micros {
	t.Helper()
	var running money.Micros
	for i, e := range entries {
		running += e.Amount
		if i > 0 && e.ID <= entries[i-1].ID {
			t.Errorf("entry %d: id %d after %d", i, e.ID, entries[i-1].ID)
		}
		if e.BalanceAfter != running {
			t.Errorf("entry %d (%s %v): balance after %v, running sum %v", i, e.Kind, e.Amount, e.BalanceAfter, running)
		}
	}
	return running
}
