package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// usageColumns is the column list of usage_records inserts; usageRow holds
// one row's placeholders.
const (
	usageColumns = `INSERT INTO usage_records
	(request_id, time, account_id, key_id, endpoint, model, provider, upstream_model,
	 stream, prompt_tokens, completion_tokens, latency_us, ttft_us, status, error_code,
	 cost, cached_tokens, reasoning_tokens, estimated, charge_id, balance_after) VALUES `
	usageRow    = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	usageParams = 21
	// usageChunk rows go in one statement: 21 × 200 parameters stay well
	// under SQLite's limit of 32766.
	usageChunk = 200
)

const selectUsage = `SELECT request_id, time, account_id, key_id, endpoint, model, provider,
	upstream_model, stream, prompt_tokens, completion_tokens, latency_us, ttft_us, status,
	error_code, cost, cached_tokens, reasoning_tokens, estimated FROM usage_records`

// InsertUsage writes recs in one transaction with prepared statements;
// records whose RequestID is already stored are skipped, so retrying a batch
// never counts a request twice. A new record with a cost carries its charge
// (charge_id, balance_after; see 0008_usage_charges.sql) and moves the
// account's balance and spent and the key's spent in the same transaction,
// so a charge exists exactly when its record does.
func (s *Store) InsertUsage(ctx context.Context, recs []store.UsageRecord) error {
	if len(recs) == 0 {
		return nil
	}
	ctx = withUsageStmts(ctx, s.usage)
	err := s.withTx(ctx, func(tx *sql.Tx) error { return insertUsage(ctx, tx, recs) })
	return wrap("insert usage", err)
}

// insertUsage is InsertUsage inside tx, so other writes (FinishTask's) can
// store a record and post its charge in their own transaction.
//
// Almost every batch is new requests only, so it is stored as it is, and
// the request ids are looked up only when that hits one already stored (a
// retried batch, a replayed journal): then the attempt is rolled back to
// its savepoint and the batch stored again without the stored ids.
func insertUsage(ctx context.Context, tx *sql.Tx, recs []store.UsageRecord) error {
	b := newBatchTx(ctx, tx)
	defer b.close()
	fresh := firstOfEach(recs)
	err := b.savepoint(func() error { return storeRecords(b, fresh) })
	if !isDuplicate(err) {
		return err
	}
	if fresh, err = dropStored(b, fresh); err != nil || len(fresh) == 0 {
		return err
	}
	return storeRecords(b, fresh)
}

// storeRecords inserts recs, none of them stored, with their charges,
// and moves balances, spent amounts, keys' last use, the ledger sequence
// and the rollups.
func storeRecords(b *batchTx, recs []store.UsageRecord) error {
	plan, err := planCharges(b, recs)
	if err != nil {
		return err
	}
	if err := insertRows(b, recs, plan.charges); err != nil {
		return err
	}
	if err := plan.apply(b); err != nil {
		return err
	}
	if err := updateKeys(b, recs, plan.keys); err != nil {
		return err
	}
	return addRollups(b, recs)
}

// firstOfEach returns the first record of each request id in recs.
func firstOfEach(recs []store.UsageRecord) []store.UsageRecord {
	seen := make(map[string]struct{}, len(recs))
	out := make([]store.UsageRecord, 0, len(recs))
	for _, r := range recs {
		if _, dup := seen[r.RequestID]; !dup {
			seen[r.RequestID] = struct{}{}
			out = append(out, r)
		}
	}
	return out
}

// isDuplicate reports whether err is a unique or primary key violation.
func isDuplicate(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code()
	return code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || code == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// dropStored returns recs without the records whose request id
// usage_records holds.
func dropStored(b *batchTx, recs []store.UsageRecord) ([]store.UsageRecord, error) {
	ids := make([]any, len(recs))
	for i, r := range recs {
		ids[i] = r.RequestID
	}
	stored, err := b.lookupIDs(func(u *usageStmts) map[int]*sql.Stmt { return u.stored }, storedSQL, ids)
	if err != nil || len(stored) == 0 {
		return recs, err
	}
	return slices.DeleteFunc(recs, func(r store.UsageRecord) bool { return stored[r.RequestID] }), nil
}

// insertRows inserts recs, none of them stored yet, with multi-row
// statements (a statement per row costs most of a batch's time);
// charges[i] is recs[i]'s charge.
func insertRows(b *batchTx, recs []store.UsageRecord, charges []charge) error {
	args := make([]any, 0, len(recs)*usageParams)
	for i, r := range recs {
		var chargeID any // NULL: no charge
		if c := charges[i]; c.id != 0 {
			chargeID = c.id
		}
		args = append(args, r.RequestID, toMicros(r.Time), r.AccountID, r.KeyID, r.Endpoint, r.Model,
			r.Provider, r.UpstreamModel, r.Stream, r.PromptTokens, r.CompletionTokens,
			r.Latency.Microseconds(), r.TTFT.Microseconds(), r.Status, r.ErrorCode,
			r.Cost, r.CachedTokens, r.ReasoningTokens, r.Estimated, chargeID, charges[i].balanceAfter)
	}
	return inChunks(len(recs), func(lo, hi int) error {
		st, err := b.multi(func(u *usageStmts) map[int]*sql.Stmt { return u.rows }, usageRowsSQL, hi-lo)
		if err == nil {
			_, err = st.ExecContext(b.ctx, args[lo*usageParams:hi*usageParams]...)
		}
		return err
	})
}

// updateKeys moves each key of recs (records stored now) in one
// statement: last_used_at to the newest Time of its records, never
// backwards, and spent up by what spent adds to it.
func updateKeys(b *batchTx, recs []store.UsageRecord, spent map[string]money.Micros) error {
	newest := map[string]int64{}
	for _, r := range recs {
		if r.KeyID == "" {
			continue
		}
		if t, ok := newest[r.KeyID]; !ok || toMicros(r.Time) > t {
			newest[r.KeyID] = toMicros(r.Time)
		}
	}
	if len(newest) == 0 {
		return nil
	}
	update, err := b.stmt(keyUseSQL)
	if err != nil {
		return err
	}
	for id, t := range newest {
		if _, err := update.ExecContext(b.ctx, spent[id], t, t, id); err != nil {
			return fmt.Errorf("key %q: %w", id, err)
		}
	}
	return nil
}

// purgeSet selects the rowids of the oldest records before a time (bind
// the time and the limit). Ordering by time and rowid walks
// usage_records_time, whose entries end with the rowid, so the three
// statements of a purge select the same rows.
const purgeSet = `SELECT rowid FROM usage_records WHERE time < ? ORDER BY time, rowid LIMIT ?`

// PurgeUsage deletes at most limit of the oldest records whose time is
// before before, in one short write transaction that walks the time index
// (usage_records_time). The charges the deleted records hold move to the
// ledger table with their ids, refs and times, and usage_charged_through
// moves up to the newest of them, so the ledger and balances read the same
// and a deleted record stored again is not charged again.
func (s *Store) PurgeUsage(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, fmt.Errorf("sqlite: purge usage: limit must be positive, got %d", limit)
	}
	cut := toMicros(before)
	var n int64
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO ledger
			(id, account_id, kind, amount, balance_after, ref, note, created_at)
			SELECT charge_id, account_id, 'charge', -cost, balance_after, request_id, '', time
			FROM usage_records WHERE rowid IN (`+purgeSet+`) AND charge_id IS NOT NULL`, cut, limit); err != nil {
			return fmt.Errorf("move charges: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE usage_charged_through SET through = MAX(through,
			COALESCE((SELECT MAX(time) FROM usage_records WHERE rowid IN (`+purgeSet+`)), through))`,
			cut, limit); err != nil {
			return fmt.Errorf("charged through: %w", err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM usage_records WHERE rowid IN (`+purgeSet+`)`, cut, limit)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, wrap("purge usage", err)
	}
	return int(n), nil
}

// ListUsage returns the records f selects, newest first (ties broken by
// request ID, descending), at most f.Limit of them when it is positive.
// f.After continues that order: records strictly after the cursor.
func (s *Store) ListUsage(ctx context.Context, f store.UsageFilter) ([]store.UsageRecord, error) {
	var (
		where []string
		args  []any
	)
	if f.AccountID != "" {
		where = append(where, `account_id = ?`)
		args = append(args, f.AccountID)
	}
	if !f.Since.IsZero() {
		where = append(where, `time >= ?`)
		args = append(args, toMicros(f.Since))
	}
	if !f.Until.IsZero() {
		where = append(where, `time < ?`)
		args = append(args, toMicros(f.Until))
	}
	if f.Model != "" {
		where = append(where, `model = ?`)
		args = append(args, f.Model)
	}
	if f.KeyID != "" {
		where = append(where, `key_id = ?`)
		args = append(args, f.KeyID)
	}
	switch f.Status {
	case store.UsageAny:
	case store.UsageOK:
		where = append(where, `status < 400`)
	case store.UsageError:
		where = append(where, `status >= 400`)
	default:
		return nil, fmt.Errorf("sqlite: list usage: unknown status filter %q", f.Status)
	}
	if !f.After.Time.IsZero() || f.After.RequestID != "" {
		// Strictly after (time, request_id) in the listing's order; the
		// first term lets the time index bound the range.
		t := toMicros(f.After.Time)
		where = append(where, `time <= ? AND (time < ? OR request_id < ?)`)
		args = append(args, t, t, f.After.RequestID)
	}
	q := selectUsage
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY time DESC, request_id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}

	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrap("list usage", err)
	}
	defer rows.Close()
	var out []store.UsageRecord
	for rows.Next() {
		r, err := scanUsage(rows)
		if err != nil {
			return nil, wrap("list usage", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list usage", err)
	}
	return out, nil
}

// scanUsage reads one row of selectUsage.
func scanUsage(r scanner) (store.UsageRecord, error) {
	var (
		u                 store.UsageRecord
		at, latency, ttft int64
	)
	if err := r.Scan(&u.RequestID, &at, &u.AccountID, &u.KeyID, &u.Endpoint, &u.Model,
		&u.Provider, &u.UpstreamModel, &u.Stream, &u.PromptTokens, &u.CompletionTokens,
		&latency, &ttft, &u.Status, &u.ErrorCode, &u.Cost, &u.CachedTokens, &u.ReasoningTokens,
		&u.Estimated); err != nil {
		return store.UsageRecord{}, err
	}
	u.Time = fromMicros(at)
	u.Latency = time.Duration(latency) * time.Microsecond
	u.TTFT = time.Duration(ttft) * time.Microsecond
	return u, nil
}
