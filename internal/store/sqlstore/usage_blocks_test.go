package sqlstore

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// TestListAcrossOverlappingBlocks stores batches whose records' times
// overlap other batches' (requests finish out of order, some batches reach
// far back) for two accounts, then checks every listing, page by page,
// against the records sorted newest first.
func TestListAcrossOverlappingBlocks(t *testing.T) {
	ctx := testCtx(t)
	s := openAt(t, filepath.Join(t.TempDir(), "blocks.db"))
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	var all []store.UsageRecord
	n := 0
	for batch := range 30 {
		recs := make([]store.UsageRecord, 1+rng.IntN(40))
		for i := range recs {
			n++
			// Mostly near the batch's own time, sometimes far back, and
			// some records sharing a time.
			at := t0.Add(time.Duration(batch)*time.Minute + time.Duration(rng.IntN(90))*time.Second)
			if rng.IntN(10) == 0 {
				at = t0.Add(time.Duration(rng.IntN(batch+1)) * time.Minute)
			}
			recs[i] = store.UsageRecord{RequestID: fmt.Sprintf("req_%05d", rng.IntN(1e5)*10+n%10), Time: at,
				AccountID: []string{"acct_a", "acct_b"}[rng.IntN(2)], Model: []string{"m1", "m2"}[rng.IntN(2)], Status: 200}
		}
		if err := s.InsertUsage(ctx, recs); err != nil {
			t.Fatal(err)
		}
		all = append(all, recs...)
	}
	all = firstOfEach(all)
	newestFirst := func(a, b store.UsageRecord) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.RequestID, a.RequestID)
	}
	tests := []struct {
		name string
		f    store.UsageFilter
		keep func(store.UsageRecord) bool
	}{
		{"all", store.UsageFilter{}, func(store.UsageRecord) bool { return true }},
		{"account", store.UsageFilter{AccountID: "acct_b"}, func(r store.UsageRecord) bool { return r.AccountID == "acct_b" }},
		{"model and window", store.UsageFilter{Model: "m1", Since: t0.Add(5 * time.Minute), Until: t0.Add(20 * time.Minute)},
			func(r store.UsageRecord) bool {
				return r.Model == "m1" && !r.Time.Before(t0.Add(5*time.Minute)) && r.Time.Before(t0.Add(20*time.Minute))
			}},
	}
	for _, tc := range tests {
		for _, page := range []int{0, 1, 7, 50} {
			t.Run(fmt.Sprintf("%s/page=%d", tc.name, page), func(t *testing.T) {
				want := slices.DeleteFunc(slices.Clone(all), func(r store.UsageRecord) bool { return !tc.keep(r) })
				slices.SortFunc(want, newestFirst)
				var got []store.UsageRecord
				f := tc.f
				f.Limit = page
				for {
					recs, err := s.ListUsage(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, recs...)
					if page == 0 || len(recs) < page {
						break
					}
					last := recs[len(recs)-1]
					f.After = store.UsageCursor{Time: last.Time, RequestID: last.RequestID}
				}
				if len(got) != len(want) {
					t.Fatalf("%d records, want %d", len(got), len(want))
				}
				for i := range want {
					if got[i].RequestID != want[i].RequestID || !got[i].Time.Equal(want[i].Time) {
						t.Fatalf("record %d: %s at %v, want %s at %v", i, got[i].RequestID, got[i].Time, want[i].RequestID, want[i].Time)
					}
				}
			})
		}
	}
}
