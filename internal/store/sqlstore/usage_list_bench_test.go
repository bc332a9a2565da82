package sqlstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// BenchmarkListUsage reads pages of an account's records from usage
// blocks: 1,000,000 records of one account in batches of 1024 (about a
// thousand blocks) with a few records of other accounts, as the console's
// usage page and its CSV export read them. "first" is the newest 50,
// "deep" the 50 after a cursor halfway down, "key" the newest 50 of one
// key in ten (decoded and filtered). It also logs the database's size per
// record.
//
//	go test -run '^$' -bench ListUsage -benchtime 200x ./internal/store/sqlite/
func BenchmarkListUsage(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "list.db")
	s, err := OpenSQLite(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	const total, batch = 1_000_000, 1024
	t0 := time.Now()
	for i := 0; i < total; i += batch {
		recs := benchBatch(i, min(batch, total-i), false)
		for k := range recs {
			recs[k].Time = benchEnd.Add(time.Duration(i+k-total) * 100 * time.Millisecond)
			recs[k].KeyID = fmt.Sprintf("key_%d", (i+k)%10)
		}
		recs = append(recs, store.UsageRecord{RequestID: benchID(total + i), Time: recs[0].Time, AccountID: "acct_other"})
		if err := s.InsertUsage(ctx, recs); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if fi, err := os.Stat(path); err == nil {
		b.Logf("%d records in %v: %.0f bytes per record", total, time.Since(t0), float64(fi.Size())/total)
	}
	if s, err = OpenSQLite(ctx, path); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	mid, err := s.ListUsage(ctx, store.UsageFilter{AccountID: "acct_bench", Since: benchEnd.Add(-total / 2 * 100 * time.Millisecond), Limit: 1})
	if err != nil || len(mid) != 1 {
		b.Fatalf("the middle record: %v, %v", mid, err)
	}
	for _, tc := range []struct {
		name string
		f    store.UsageFilter
	}{
		{"first", store.UsageFilter{AccountID: "acct_bench", Limit: 50}},
		{"deep", store.UsageFilter{AccountID: "acct_bench", Limit: 50,
			After: store.UsageCursor{Time: mid[0].Time, RequestID: mid[0].RequestID}}},
		{"key", store.UsageFilter{AccountID: "acct_bench", KeyID: "key_3", Limit: 50}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				recs, err := s.ListUsage(ctx, tc.f)
				if err != nil || len(recs) != 50 {
					b.Fatalf("ListUsage: %d records, %v", len(recs), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
		})
	}
}
