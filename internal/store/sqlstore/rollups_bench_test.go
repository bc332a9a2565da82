package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// The benchmarks' account: 90 days × 5 keys × 8 models, every hour used.
const (
	benchDays    = 90
	benchKeys    = 5
	benchModels  = 8
	benchRecords = 10_000_000
)

// benchEnd is the exclusive end of the benchmarks' usage, a UTC midnight.
var benchEnd = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "modelgate.db"))
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// fillRollups writes the rollups (hourly, then daily from them) that
// records records spread evenly over benchDays × 24 hours × benchKeys ×
// benchModels would leave, directly.
func fillRollups(b *testing.B, s *Store, records int64) {
	b.Helper()
	start := toMicros(benchEnd.Add(-benchDays * 24 * time.Hour))
	cells := int64(benchDays * 24 * benchKeys * benchModels)
	err := s.withTx(context.Background(), func(tx *sql.Tx) error {
		const chunk = 500
		var args []any
		flush := func() error {
			if len(args) == 0 {
				return nil
			}
			q := rollupRowsSQL("usage_rollups", "hour", len(args)/8)
			_, err := tx.Exec(q, args...)
			args = args[:0]
			return err
		}
		var i int64
		for h := range int64(benchDays * 24) {
			for k := range benchKeys {
				for m := range benchModels {
					n := records/cells + min(1, max(0, records%cells-i)) // the remainder goes to the first cells
					i++
					args = append(args, "acct_bench", start+h*microsPerHour, fmt.Sprintf("key_%d", k),
						fmt.Sprintf("model-%d", m), n, n*700, n*300, money.Micros(n*1234))
					if len(args) == 8*chunk {
						if err := flush(); err != nil {
							return err
						}
					}
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO usage_rollups_daily SELECT account_id, hour / ? * ?,
			key_id, model, SUM(requests), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost)
			FROM usage_rollups GROUP BY 1, 2, 3, 4`, microsPerDay, microsPerDay)
		return err
	})
	if err != nil {
		b.Fatalf("fill rollups: %v", err)
	}
}

// benchStats times UsageStats over the last days of the bench account and
// checks the request count against want.
func benchStats(b *testing.B, s *Store, days int, want int64) {
	b.Helper()
	since := benchEnd.Add(-time.Duration(days) * 24 * time.Hour)
	for b.Loop() {
		st, err := s.UsageStats(context.Background(), "acct_bench", since, benchEnd)
		if err != nil {
			b.Fatalf("UsageStats: %v", err)
		}
		var n int64
		for _, g := range st.ByKey {
			n += g.Requests
		}
		if n != want || len(st.Daily) != days {
			b.Fatalf("%d requests over %d days, want %d over %d", n, len(st.Daily), want, days)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
}

// BenchmarkUsageStatsRollups10M: the statistics of one account with 10
// million records over 90 days, read from their rollups.
func BenchmarkUsageStatsRollups10M(b *testing.B) {
	s := benchStore(b)
	fillRollups(b, s, benchRecords)
	for _, days := range []int{1, 30, 90} {
		b.Run(fmt.Sprintf("days=%d", days), func(b *testing.B) {
			var want int64
			if err := s.db.QueryRow(`SELECT SUM(requests) FROM usage_rollups WHERE hour >= ?`,
				toMicros(benchEnd.Add(-time.Duration(days)*24*time.Hour))).Scan(&want); err != nil {
				b.Fatal(err)
			}
			benchStats(b, s, days, want)
		})
	}
}

// benchBatch returns n records of the bench account from id first on, at
// times spread over the 90 days (spread) or within the last hour.
func benchBatch(first, n int, spread bool) []store.UsageRecord {
	recs := make([]store.UsageRecord, n)
	for i := range recs {
		id := first + i
		when := benchEnd.Add(-time.Duration(1+id%3600) * time.Second)
		if spread {
			when = benchEnd.Add(-time.Duration(1+id*7919%(benchDays*24*3600)) * time.Second)
		}
		recs[i] = store.UsageRecord{
			RequestID: benchID(id), Time: when, AccountID: "acct_bench",
			KeyID: fmt.Sprintf("key_%d", id%benchKeys), Model: fmt.Sprintf("model-%d", id/benchKeys%benchModels),
			PromptTokens: 100, CompletionTokens: 200, Cost: 0, Status: 200,
		}
	}
	return recs
}

// BenchmarkUsageStatsFromInsertUsage builds the rollups through InsertUsage
// from 50,000 records spread over 90 days, then times UsageStats.
func BenchmarkUsageStatsFromInsertUsage(b *testing.B) {
	s := benchStore(b)
	const total, batch = 50_000, 500
	t0 := time.Now()
	for i := 0; i < total; i += batch {
		if err := s.InsertUsage(context.Background(), benchBatch(i, batch, true)); err != nil {
			b.Fatalf("InsertUsage: %v", err)
		}
	}
	b.Logf("InsertUsage of %d records: %v", total, time.Since(t0))
	b.Run("days=90", func(b *testing.B) { benchStats(b, s, benchDays, total) })
}

// BenchmarkInsertUsageRollups is the write cost of the rollups: a whole
// InsertUsage batch of 256 records ("insert") against the rollup upsert
// of the same batch alone ("rollups only"), for records of the last hour
// (≤ 40 rollup rows a batch, mostly updated) and spread over 90 days (a
// row per record, mostly new).
func BenchmarkInsertUsageRollups(b *testing.B) {
	const batch = 256
	for _, spread := range []bool{false, true} {
		name := map[bool]string{false: "hour", true: "spread"}[spread]
		b.Run(name+"/insert", func(b *testing.B) {
			s := benchStore(b)
			n := 0
			for b.Loop() {
				if err := s.InsertUsage(context.Background(), benchBatch(n, batch, spread)); err != nil {
					b.Fatalf("InsertUsage: %v", err)
				}
				n += batch
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/record")
		})
		b.Run(name+"/rollups only", func(b *testing.B) {
			s := benchStore(b)
			n := 0
			for b.Loop() {
				recs := benchBatch(n, batch, spread)
				ctx := withUsageStmts(context.Background(), s.usage)
				if err := s.withTx(ctx, func(tx *sql.Tx) error {
					return addRollups(newBatchTx(ctx, tx), recs)
				}); err != nil {
					b.Fatalf("addRollups: %v", err)
				}
				n += batch
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/record")
		})
	}
}
