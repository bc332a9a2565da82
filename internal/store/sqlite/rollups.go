package sqlite

import (
	"cmp"
	"context"
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
	rollupUpsert = ` ON CONFLICT (account_id, %s, key_id, model) DO UPDATE SET
	requests = requests + excluded.requests,
	prompt_tokens = prompt_tokens + excluded.prompt_tokens,
	completion_tokens = completion_tokens + excluded.completion_tokens,
	cost = cost + excluded.cost`
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

// addRollups adds the records of recs that were stored now to
// usage_rollups and usage_rollups_daily: the first record of each id in
// inserted (a skipped duplicate, in the batch or already stored, adds
// nothing, like in touchKeys). Records without an account are not rolled
// up. The batch is summed in Go first, so each row is written once.
func addRollups(ctx context.Context, tx *sql.Tx, recs []store.UsageRecord, inserted map[string]bool) error {
	hours := map[rollupKey]*store.UsageTotals{}
	seen := make(map[string]bool, len(inserted))
	for _, r := range recs {
		if !inserted[r.RequestID] || seen[r.RequestID] {
			continue
		}
		seen[r.RequestID] = true
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
	if err := upsertRollups(ctx, tx, "usage_rollups", "hour", hours); err != nil {
		return err
	}
	return upsertRollups(ctx, tx, "usage_rollups_daily", "day", days)
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

// upsertRollups adds sums to table, whose time column is col, with one
// prepared single-row upsert, in primary key order (neighbouring rows share
// pages). Multi-row upserts measured no faster: parsing them costs what
// they save.
func upsertRollups(ctx context.Context, tx *sql.Tx, table, col string, sums map[rollupKey]*store.UsageTotals) error {
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
	stmt, err := tx.PrepareContext(ctx, fmt.Sprintf(rollupInsert, table, col)+rollupRow+fmt.Sprintf(rollupUpsert, col))
	if err != nil {
		return fmt.Errorf("%s: %w", table, err)
	}
	defer stmt.Close()
	for _, k := range keys {
		t := sums[k]
		if _, err := stmt.ExecContext(ctx, k.account, k.at, k.key, k.model,
			t.Requests, t.PromptTokens, t.CompletionTokens, t.Cost); err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
	}
	return nil
}
