package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkInsertFloor is the least a usage record can cost as a row of
// this database: batches of 200 rows of usage_records' 19 columns, one
// prepared multi-row INSERT per batch in one transaction, with the store's
// own pragmas, into a table with no index at all, then with the request id
// as primary key, then with usage_records' two secondary indexes too (the
// table alone, without ledger, rollups or balances), and last as a table
// keyed by (time, request id) instead, with the account index only. It
// reports process CPU per row (every thread; the driver runs in-process),
// which bounds from below what InsertUsage can reach without changing what
// a record is.
//
//	go test -run '^$' -bench InsertFloor -benchtime 2000x ./internal/store/sqlite/
func BenchmarkInsertFloor(b *testing.B) {
	const cols = `request_id TEXT %s, time INTEGER NOT NULL, account_id TEXT NOT NULL, key_id TEXT NOT NULL,
		endpoint TEXT NOT NULL, model TEXT NOT NULL, provider TEXT NOT NULL, upstream_model TEXT NOT NULL,
		stream INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
		latency_us INTEGER NOT NULL, ttft_us INTEGER NOT NULL, status INTEGER NOT NULL, error_code TEXT NOT NULL,
		cost INTEGER NOT NULL, cached_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL, estimated INTEGER NOT NULL`
	const rowid, byTime = `CREATE TABLE floor (%s)`, `CREATE TABLE floor (%s, PRIMARY KEY (time, request_id)) WITHOUT ROWID`
	accountTime := `CREATE INDEX floor_account_time ON floor(account_id, time)`
	for _, tc := range []struct {
		name, table, pk string
		indexes         []string
	}{
		{"bare", rowid, "NOT NULL", nil},
		{"primary-key", rowid, "PRIMARY KEY", nil},
		{"primary-key+2-indexes", rowid, "PRIMARY KEY", []string{accountTime, `CREATE INDEX floor_time ON floor(time)`}},
		// The table ordered by (time, request id), which would serve the
		// time index's and the primary key's uses with one B-tree fewer.
		{"time-id-key", byTime, "NOT NULL", nil},
		{"time-id-key+account-index", byTime, "NOT NULL", []string{accountTime}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			db, err := sql.Open("sqlite", dsn(filepath.Join(b.TempDir(), "floor.db")))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(1)
			ddl := append([]string{fmt.Sprintf(tc.table, fmt.Sprintf(cols, tc.pk))}, tc.indexes...)
			for _, q := range ddl {
				if _, err := db.ExecContext(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			const batch = 200
			row := `(` + strings.TrimSuffix(strings.Repeat("?,", 19), ",") + `)`
			st, err := db.PrepareContext(ctx, `INSERT INTO floor VALUES `+row+strings.Repeat(","+row, batch-1))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			args := make([]any, 0, 19*batch)
			n := 0
			cpu := processCPU()
			for b.Loop() {
				args = args[:0]
				now := time.Now().UnixMicro()
				for range batch {
					n++
					args = append(args, benchID(n), now, "acct_0000000000000001", "key_0000000000000001",
						"chat.completions", "gpt-4o-mini", "openai", "gpt-4o-mini-2024-07-18", 1, 1200, 300,
						800_000, 200_000, 200, "", 360, 300, 0, 0)
				}
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, args...); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/1e3/float64(n), "cpu-µs/rec")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// processCPU is the CPU time (user + system, all threads) this process
// has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
