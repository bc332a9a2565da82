package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// ledgerFixture stores an account whose ledger mixes entries of the ledger
// itself with charges of usage records in several batches, some of them
// purged (so their charges moved), across two UTC days, plus another
// account charged in the same batches. The fixture day changes at at(9h)
// (2025-03-15 00:00 UTC falls between at(8h) and at(9h)).
func ledgerFixture(t *testing.T, s store.Store) store.Account {
	t.Helper()
	a := fundedAccount(t, s, "acme")        // topup at(0)
	other := fundedAccount(t, s, "another") // never in acme's pages
	rec := func(id string, d time.Duration, cost money.Micros) store.UsageRecord {
		r := usageRecord(id, a.ID, at(d))
		r.Cost = cost
		return r
	}
	post := func(kind store.LedgerKind, amount money.Micros, ref, note string, d time.Duration) {
		t.Helper()
		if _, err := s.Post(ctx(t), store.LedgerEntry{AccountID: a.ID, Kind: kind, Amount: amount, Ref: ref, Note: note, Time: at(d)}); err != nil {
			t.Fatalf("Post %s: %v", kind, err)
		}
	}
	insert := func(recs ...store.UsageRecord) {
		t.Helper()
		if err := s.InsertUsage(ctx(t), recs); err != nil {
			t.Fatalf("InsertUsage: %v", err)
		}
	}
	insert(rec("req_01", time.Hour, 100), rec("req_02", time.Hour+time.Second, 200), rec("req_03", time.Hour+2*time.Second, 300))
	post(store.KindAdjustment, -50, "", "fix", 2*time.Hour)
	o := usageRecord("req_other", other.ID, at(3*time.Hour))
	o.Cost = 1
	insert(rec("req_04", 3*time.Hour, 10), o, rec("req_05", 3*time.Hour+time.Second, 20))
	post(store.KindCode, 500, "code:code_x", "redemption code", 4*time.Hour)
	insert(rec("req_06", 8*time.Hour, 1000), rec("req_07", 9*time.Hour, 2000), rec("req_08", 10*time.Hour, 3000))
	post(store.KindBonus, 5, "", "", 11*time.Hour)
	insert(rec("req_09", 12*time.Hour, 7), rec("req_10", 12*time.Hour+time.Second, 0), rec("req_11", 12*time.Hour+2*time.Second, 5))
	// req_01 and req_02 go: their charges move to where the ledger's own
	// entries are, and req_03's block keeps one charge.
	if n, err := s.PurgeUsage(ctx(t), at(time.Hour+2*time.Second), 100); err != nil || n != 2 {
		t.Fatalf("PurgeUsage = %d, %v; want 2", n, err)
	}
	return a
}

// ledgerPages walks q's pages from q.Before and returns their entries,
// checking that pages are full until the last, which alone says no more.
func ledgerPages(t *testing.T, s store.Store, q store.LedgerQuery) []store.LedgerEntry {
	t.Helper()
	var all []store.LedgerEntry
	for range 1000 {
		page, next, err := s.LedgerPage(ctx(t), q)
		if err != nil {
			t.Fatalf("LedgerPage(%+v): %v", q, err)
		}
		if len(page) > q.Limit || next != 0 && len(page) != q.Limit {
			t.Fatalf("LedgerPage(%+v): %d entries, next %d", q, len(page), next)
		}
		for _, e := range page {
			e.Time = utc(e.Time)
			all = append(all, e)
		}
		if next == 0 {
			return all
		}
		if q.Before != 0 && next >= q.Before {
			t.Fatalf("LedgerPage(%+v): next %d does not move back", q, next)
		}
		q.Before = next
	}
	t.Fatal("LedgerPage never ends")
	return nil
}

// groupLedger is GroupCharges' reference: entries (newest first) with
// their times in [since, until) merged into runs, then kinds selected.
func groupLedger(desc []store.LedgerEntry, since, until time.Time, group bool, kinds ...store.LedgerKind) []store.LedgerEntry {
	var out []store.LedgerEntry
	day := func(e store.LedgerEntry) string { return e.Time.UTC().Format(time.DateOnly) }
	for _, e := range desc {
		if !since.IsZero() && e.Time.Before(since) || !until.IsZero() && !e.Time.Before(until) {
			continue
		}
		if n := len(out); group && n > 0 && e.Kind == store.KindCharge && out[n-1].Kind == store.KindCharge && day(out[n-1]) == day(e) {
			out[n-1].Amount += e.Amount
			out[n-1].Count++
			out[n-1].Ref, out[n-1].Note = "", ""
			continue
		}
		out = append(out, e)
	}
	if len(kinds) > 0 {
		out = slices.DeleteFunc(out, func(e store.LedgerEntry) bool { return !slices.Contains(kinds, e.Kind) })
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func testLedgerPage(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a := ledgerFixture(t, s)
	full, err := s.ListLedger(ctx(t), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(full) != 14 {
		t.Fatalf("fixture ledger has %d entries, want 14: %+v", len(full), full)
	}
	desc := make([]store.LedgerEntry, len(full))
	for i, e := range full {
		if e.Count != 1 {
			t.Errorf("ListLedger entry %d: Count %d, want 1", e.ID, e.Count)
		}
		e.Time = utc(e.Time)
		desc[len(full)-1-i] = e
	}
	acct, err := s.AccountByID(ctx(t), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if desc[0].BalanceAfter != acct.Balance {
		t.Errorf("newest BalanceAfter %v, balance %v", desc[0].BalanceAfter, acct.Balance)
	}

	t.Run("PagesAreListLedgerReversed", func(t *testing.T) {
		for _, limit := range []int{1, 2, 3, 5, 13, 14, 1000} {
			assertEqual(t, "pages", ledgerPages(t, s, store.LedgerQuery{AccountID: a.ID, Limit: limit}), desc)
		}
		// From the middle: only entries below Before.
		mid := desc[5].ID
		assertEqual(t, "from the middle", ledgerPages(t, s, store.LedgerQuery{AccountID: a.ID, Before: mid, Limit: 4}), desc[6:])
	})

	t.Run("Filters", func(t *testing.T) {
		since, until := at(3*time.Hour), at(9*time.Hour)
		cases := []struct {
			name  string
			q     store.LedgerQuery
			count int
		}{
			{"charges", store.LedgerQuery{Kinds: []store.LedgerKind{store.KindCharge}}, 10},
			{"code and adjustment", store.LedgerQuery{Kinds: []store.LedgerKind{store.KindCode, store.KindAdjustment}}, 2},
			{"refunds", store.LedgerQuery{Kinds: []store.LedgerKind{store.KindRefund}}, 0},
			{"time", store.LedgerQuery{Since: since, Until: until}, 4},
			{"since", store.LedgerQuery{Since: at(11 * time.Hour)}, 3},
			{"until", store.LedgerQuery{Until: at(time.Hour + time.Second)}, 2},
			{"time and kind", store.LedgerQuery{Since: since, Until: until, Kinds: []store.LedgerKind{store.KindCharge}}, 3},
		}
		for _, tc := range cases {
			for _, limit := range []int{1, 2, 100} {
				q := tc.q
				q.AccountID, q.Limit = a.ID, limit
				want := groupLedger(desc, q.Since, q.Until, false, q.Kinds...)
				if len(want) != tc.count {
					t.Fatalf("%s: reference has %d entries, want %d", tc.name, len(want), tc.count)
				}
				assertEqual(t, tc.name, ledgerPages(t, s, q), want)
			}
		}
	})

	t.Run("GroupCharges", func(t *testing.T) {
		got := ledgerPages(t, s, store.LedgerQuery{AccountID: a.ID, Limit: 100, GroupCharges: true})
		// Runs: [req_11 req_09] bonus [req_08 req_07] [req_06] (another
		// day) code [req_05 req_04] adjustment [req_03 req_02 req_01]
		// (across purged and kept records) topup.
		var counts []int64
		var amounts []money.Micros
		for _, e := range got {
			counts, amounts = append(counts, e.Count), append(amounts, e.Amount)
		}
		assertEqual(t, "counts", counts, []int64{2, 1, 2, 1, 1, 2, 1, 3, 1})
		assertEqual(t, "amounts", amounts, []money.Micros{-12, 5, -5000, -1000, 500, -30, -50, -600, money.Unit})
		if g := got[0]; g.ID != desc[0].ID || g.BalanceAfter != acct.Balance || g.Ref != "" || !g.Time.Equal(at(12*time.Hour+2*time.Second)) {
			t.Errorf("newest run %+v, want the newest charge's id, time and balance", g)
		}
		if g := got[3]; g.Ref != "req_06" || g.Count != 1 {
			t.Errorf("a run of one %+v, want the charge as is", g)
		}
		cases := []store.LedgerQuery{
			{},
			{Kinds: []store.LedgerKind{store.KindCharge}},
			{Kinds: []store.LedgerKind{store.KindBonus, store.KindTopUp}},
			{Since: at(3 * time.Hour), Until: at(9 * time.Hour)},
			{Since: at(time.Hour + time.Second)},
		}
		for _, q := range cases {
			for _, limit := range []int{1, 2, 3, 100} {
				q.AccountID, q.Limit, q.GroupCharges = a.ID, limit, true
				assertEqual(t, "grouped pages", ledgerPages(t, s, q), groupLedger(desc, q.Since, q.Until, true, q.Kinds...))
			}
		}
		// A run is never split: a page ending on one continues below its
		// oldest entry.
		page, next, err := s.LedgerPage(ctx(t), store.LedgerQuery{AccountID: a.ID, Limit: 1, GroupCharges: true})
		if err != nil || len(page) != 1 || next != desc[1].ID {
			t.Errorf("first grouped page %+v next %d, %v; want next %d (req_09's)", page, next, err, desc[1].ID)
		}
	})

	t.Run("UnknownAccountAndLimits", func(t *testing.T) {
		page, next, err := s.LedgerPage(ctx(t), store.LedgerQuery{AccountID: "acct_missing", Limit: 10, GroupCharges: true})
		if err != nil || len(page) != 0 || next != 0 {
			t.Errorf("unknown account: %+v next %d, %v", page, next, err)
		}
		for _, limit := range []int{0, -1, 1001} {
			if _, _, err := s.LedgerPage(ctx(t), store.LedgerQuery{AccountID: a.ID, Limit: limit}); err == nil {
				t.Errorf("limit %d: no error", limit)
			}
		}
	})
}
