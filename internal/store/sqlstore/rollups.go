package sqlstore

import (
	"cmp"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// microsPerHour is one hour in the stored unit: usage_rollups.hour is a
// record's time floored to a multiple of it, usage_rollups_daily.day to a
// multiple of microsPerDay (0007_usage_rollups.sql).
const microsPerHour = int64(time.Hour / time.Microsecond)

// rollupInsert and rollupUpsert, given the table and its time column, add
// rows to a rollup table; rollupRow holds one row's placeholders.
const (
	rollupInsert = `INSERT INTO %s
	(account_id, %s, key_id, model, requests, prompt_tokens, completion_tokens, cost) VALUES `
	rollupRow    = `(?, ?, ?, ?, ?, ?, ?, ?)`
	rollupUpsert = ` ON CONFLICT (account_id, %[2]s, key_id, model) DO UPDATE SET
	requests = %[1]s.requests + excluded.requests,
	prompt_tokens = %[1]s.prompt_tokens + excluded.prompt_tokens,
	completion_tokens = %[1]s.completion_tokens + excluded.completion_tokens,
	cost = %[1]s.cost + excluded.cost`
)

// floorTo floors a time in Unix microseconds to a multiple of unit, also
// before 1970 (Go's / and % truncate toward zero).
func floorTo(us, unit int64) int64 {
	n := us / unit
	if us%unit < 0 {
		n--
	}
	return n * unit
}

// hourOf floors a time in Unix microseconds to its UTC hour.
func hourOf(us int64) int64 { return floorTo(us, microsPerHour) }

// rollupKey is one row of a rollup table; at is its hour or day.
type rollupKey struct {
	account string
	at      int64
	key     string
	model   string
}

// addRollups adds recs, records stored now, to usage_rollups and
// usage_rollups_daily. Records without an account are not rolled up. The
// batch is summed in Go first, so each row is written once.
func addRollups(b *batchTx, recs []store.UsageRecord) error {
	hours := map[rollupKey]*store.UsageTotals{}
	for _, r := range recs {
		if r.AccountID == "" {
			continue
		}
		addTo(hours, rollupKey{r.AccountID, hourOf(toMicros(r.Time)), r.KeyID, r.Model}, store.UsageTotals{
			Requests: 1, PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Cost: r.Cost})
	}
	days := make(map[rollupKey]*store.UsageTotals, len(hours))
	for k, t := range hours {
		k.at = floorTo(k.at, microsPerDay)
		addTo(days, k, *t)
	}
	if err := upsertRollups(b, "usage_rollups", "hour", hours); err != nil {
		return err
	}
	return upsertRollups(b, "usage_rollups_daily", "day", days)
}

// addTo adds t to m[k].
func addTo(m map[rollupKey]*store.UsageTotals, k rollupKey, t store.UsageTotals) {
	g := m[k]
	if g == nil {
		g = &store.UsageTotals{}
		m[k] = g
	}
	g.Requests += t.Requests
	g.PromptTokens += t.PromptTokens
	g.CompletionTokens += t.CompletionTokens
	g.Cost += t.Cost
}

// rollupRowsSQL is the n-row upsert into table, whose time column is col.
func rollupRowsSQL(table, col string, n int) string {
	return fmt.Sprintf(rollupInsert, table, col) + rollupRow + strings.Repeat(","+rollupRow, n-1) +
		fmt.Sprintf(rollupUpsert, table, col)
}

// rollupParams is the number of parameters of a rollupRow.
const rollupParams = 8

// upsertRollups adds sums to table, whose time column is col, with
// multi-row upserts (prepared in chunkSizes like the records' inserts: a
// statement per row cost ~10 µs a row), in primary key order
// (neighbouring rows share pages).
func upsertRollups(b *batchTx, table, col string, sums map[rollupKey]*store.UsageTotals) error {
	if len(sums) == 0 {
		return nil
	}
	keys := make([]rollupKey, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b rollupKey) int {
		return cmp.Or(strings.Compare(a.account, b.account), cmp.Compare(a.at, b.at),
			strings.Compare(a.key, b.key), strings.Compare(a.model, b.model))
	})
	args := make([]any, 0, rollupParams*len(keys))
	for _, k := range keys {
		t := sums[k]
		args = append(args, k.account, k.at, k.key, k.model, t.Requests, t.PromptTokens, t.CompletionTokens, t.Cost)
	}
	prepared := func(u *usageStmts) map[int]*sql.Stmt { return u.rollups[table] }
	sqlFor := func(n int) string { return rollupRowsSQL(table, col, n) }
	if err := b.execRows(prepared, sqlFor, args, rollupParams); err != nil {
		return fmt.Errorf("%s: %w", table, err)
	}
	return nil
}
