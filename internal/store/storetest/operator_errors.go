package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// testOperatorErrors checks the admin errors page's listing: the failed
// records of every account, newest first, paged with After, optionally of
// one account or model.
func testOperatorErrors(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, b := newAccount(t, "acme", at(0)), newAccount(t, "bmce", at(0))
	mustCreateAccount(t, s, a)
	mustCreateAccount(t, s, b)
	var all []store.UsageRecord
	// Several batches, each with both accounts, times interleaved across
	// batches, a third of the records failed; some records have no account.
	for batch := range 4 {
		var recs []store.UsageRecord
		for i := range 9 {
			acct := []string{a.ID, b.ID, ""}[i%3]
			r := usageRecord(fmt.Sprintf("req_%d_%d", batch, i), acct, at(time.Duration(i*4+batch)*time.Minute))
			r.Model = []string{"gpt-4o-mini", "claude"}[(i/3)%2]
			if (i+batch)%3 == 0 {
				r.Status, r.ErrorCode = 502, "upstream_error"
			}
			if i == 4 {
				r.Status, r.ErrorCode = 499, "client_closed"
			}
			recs = append(recs, r)
		}
		insertUsage(t, s, recs)
		all = append(all, recs...)
	}
	sortUsage(all)
	for _, f := range []store.UsageFilter{
		{Status: store.UsageError},
		{Status: store.UsageError, AccountID: b.ID},
		{Status: store.UsageError, Model: "claude"},
		{Status: store.UsageError, AccountID: a.ID, Model: "gpt-4o-mini"},
	} {
		var want []store.UsageRecord
		for _, r := range all {
			if r.Status >= 400 && (f.AccountID == "" || r.AccountID == f.AccountID) && (f.Model == "" || r.Model == f.Model) {
				want = append(want, normUsage(r))
			}
		}
		if len(want) < 3 {
			t.Fatalf("%+v: only %d records in the fixture", f, len(want))
		}
		for _, limit := range []int{1, 2, 5} {
			f.Limit, f.After = limit, store.UsageCursor{}
			var got []store.UsageRecord
			for range 100 {
				page := listUsage(t, s, f)
				got = append(got, page...)
				if len(page) < limit {
					break
				}
				f.After = cursorOf(page[len(page)-1])
			}
			assertEqual(t, fmt.Sprintf("errors %+v", f), got, want)
		}
	}
}
