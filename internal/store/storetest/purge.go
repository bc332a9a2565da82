package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// purge calls PurgeUsage or fails the test.
func purge(t *testing.T, s store.Store, before time.Time, limit int) int {
	t.Helper()
	n, err := s.PurgeUsage(ctx(t), before, limit)
	if err != nil {
		t.Fatalf("PurgeUsage(%v, %d): %v", before, limit, err)
	}
	return n
}

// testPurgeUsage covers PurgeUsage: the retention of usage records, which
// must leave every amount of money where it was.
func testPurgeUsage(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("BeforeOnly", func(t *testing.T) {
		s := newStore(t)
		var recs []store.UsageRecord
		for i, id := range []string{"h-3", "h-2", "h-1", "h0", "h+1"} {
			recs = append(recs, usageRecord(id, "acct_a", at(time.Duration(i-3)*time.Hour)))
		}
		insertUsage(t, s, recs)
		if n := purge(t, s, at(0), 100); n != 3 {
			t.Errorf("purged %d, want 3", n)
		}
		// before is exclusive: the record at exactly at(0) stays.
		if ids := requestIDs(listUsage(t, s, store.UsageFilter{})); fmt.Sprint(ids) != "[h+1 h0]" {
			t.Errorf("left %v, want [h+1 h0]", ids)
		}
		if n := purge(t, s, at(0), 100); n != 0 {
			t.Errorf("purged %d on the second pass, want 0", n)
		}
	})

	t.Run("EmptyAndZero", func(t *testing.T) {
		s := newStore(t)
		if n := purge(t, s, at(0), 10); n != 0 {
			t.Errorf("purged %d from an empty store", n)
		}
		insertUsage(t, s, []store.UsageRecord{usageRecord("r", "acct_a", at(0))})
		if n := purge(t, s, time.Time{}, 10); n != 0 {
			t.Errorf("a zero before purged %d", n)
		}
	})

	t.Run("LimitOldestFirst", func(t *testing.T) {
		s := newStore(t)
		const n = 25
		recs := make([]store.UsageRecord, n)
		// Inserted newest first, so insertion order is not time order.
		for i := range recs {
			recs[i] = usageRecord(fmt.Sprintf("r%02d", n-1-i), "acct_a", at(time.Duration(n-1-i)*time.Second))
		}
		insertUsage(t, s, recs)
		before := at(20 * time.Second) // r00..r19 are older
		var got []int
		for range 5 {
			got = append(got, purge(t, s, before, 7))
		}
		if fmt.Sprint(got) != "[7 7 6 0 0]" {
			t.Errorf("passes deleted %v, want [7 7 6 0 0]", got)
		}
		left := requestIDs(listUsage(t, s, store.UsageFilter{}))
		if fmt.Sprint(left) != "[r24 r23 r22 r21 r20]" {
			t.Errorf("left %v", left)
		}

		// One limited pass takes the oldest records.
		s = newStore(t)
		insertUsage(t, s, recs)
		if k := purge(t, s, before, 7); k != 7 {
			t.Fatalf("purged %d, want 7", k)
		}
		oldest := listUsage(t, s, store.UsageFilter{Limit: 100})
		if last := oldest[len(oldest)-1].RequestID; last != "r07" {
			t.Errorf("after one pass of 7 the oldest left is %s, want r07", last)
		}
	})

	t.Run("BadLimit", func(t *testing.T) {
		s := newStore(t)
		insertUsage(t, s, []store.UsageRecord{usageRecord("r", "acct_a", at(0))})
		for _, limit := range []int{0, -1} {
			if _, err := s.PurgeUsage(ctx(t), at(time.Hour), limit); err == nil {
				t.Errorf("PurgeUsage with limit %d: no error", limit)
			}
		}
		if len(listUsage(t, s, store.UsageFilter{})) != 1 {
			t.Error("a refused purge deleted records")
		}
	})

	// Purging charged records leaves the ledger, balances and spent
	// amounts exactly as they were, and storing a purged record again (a
	// crash journal replayed after the retention) does not charge twice.
	t.Run("MoneyUntouched", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "acme", at(0))
		k := newKey(t, a, "mg-purg", at(0))
		mustCreateAccount(t, s, a)
		mustCreateKey(t, s, k)
		if _, err := s.Post(ctx(t), store.LedgerEntry{AccountID: a.ID, Kind: store.KindTopUp, Amount: money.Unit, Ref: "pay_1", Time: at(0)}); err != nil {
			t.Fatal(err)
		}
		rec := func(id string, cost money.Micros, when time.Duration) store.UsageRecord {
			r := usageRecord(id, a.ID, at(when))
			r.KeyID, r.Cost = k.ID, cost
			return r
		}
		old := []store.UsageRecord{rec("req_1", 1000, time.Second), rec("req_2", 0, 2*time.Second), rec("req_3", 2000, 3*time.Second)}
		recent := rec("req_4", 500, time.Hour)
		insertUsage(t, s, append(old, recent))
		checkBalance(t, s, a.ID, money.Unit-3500, 3500)
		ledger, err := s.ListLedger(ctx(t), a.ID)
		if err != nil || len(ledger) != 4 {
			t.Fatalf("ledger: %d entries, %v", len(ledger), err)
		}

		if n := purge(t, s, at(time.Minute), 2) + purge(t, s, at(time.Minute), 2); n != 3 {
			t.Fatalf("purged %d, want 3", n)
		}
		if ids := requestIDs(listUsage(t, s, store.UsageFilter{})); fmt.Sprint(ids) != "[req_4]" {
			t.Fatalf("left %v", ids)
		}
		checkBalance(t, s, a.ID, money.Unit-3500, 3500)
		after, err := s.ListLedger(ctx(t), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		assertEqual(t, "ledger after purge", after, ledger)
		if got, err := s.KeyByID(ctx(t), k.ID); err != nil || got.Spent != 3500 {
			t.Errorf("key spent %v, %v; want 3500", got.Spent, err)
		}

		// The purged records come back from a journal, with a new one.
		insertUsage(t, s, append(old, rec("req_5", 7, 2*time.Hour)))
		checkBalance(t, s, a.ID, money.Unit-3507, 3507)
		if got, err := s.KeyByID(ctx(t), k.ID); err != nil || got.Spent != 3507 {
			t.Errorf("key spent %v, %v; want 3507", got.Spent, err)
		}
		after, _ = s.ListLedger(ctx(t), a.ID)
		if len(after) != 5 || after[4].Ref != "req_5" || after[4].Amount != -7 {
			t.Errorf("ledger after the replay %+v", after)
		}
		if n := len(listUsage(t, s, store.UsageFilter{})); n != 5 {
			t.Errorf("%d records after the replay, want 5", n)
		}
	})
}
