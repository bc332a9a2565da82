package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// usageColumns is the column list of usage_records inserts; usageRow holds
// one row's placeholders.
const (
	usageColumns = `INSERT INTO usage_records
	(request_id, time, account_id, key_id, endpoint, model, provider, upstream_model,
	 stream, prompt_tokens, completion_tokens, latency_us, ttft_us, status, error_code,
	 cost, cached_tokens, reasoning_tokens, estimated) VALUES `
	usageRow    = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	usageParams = 19
	// usageChunk rows go in one statement: 19 × 200 parameters stay well
	// under SQLite's limit of 32766.
	usageChunk = 200
)

const selectUsage = `SELECT request_id, time, account_id, key_id, endpoint, model, provider,
	upstream_model, stream, prompt_tokens, completion_tokens, latency_us, ttft_us, status,
	error_code, cost, cached_tokens, reasoning_tokens, estimated FROM usage_records`

// InsertUsage writes recs in one transaction with one prepared statement;
// records whose RequestID is already stored are skipped, so retrying a batch
// never counts a request twice. A new record with a cost posts its charge
// (ledger entry, account balance and spent, key spent) in the same
// transaction, so a charge exists exactly when its record does.
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
func insertUsage(ctx context.Context, tx *sql.Tx, recs []store.UsageRecord) error {
	inserted := make(map[string]bool, len(recs))
	for i := 0; i < len(recs); i += usageChunk {
		if err := insertUsageRows(ctx, tx, recs[i:min(i+usageChunk, len(recs))], inserted); err != nil {
			return err
		}
	}
	if err := touchKeys(ctx, tx, recs, inserted); err != nil {
		return err
	}
	if err := addRollups(ctx, tx, recs, inserted); err != nil {
		return err
	}
	var charged []store.UsageRecord
	for _, r := range recs {
		// inserted holds each new id once: a second record with the
		// same id in one batch is skipped like an already stored one.
		if r.Cost == 0 || r.AccountID == "" || !inserted[r.RequestID] {
			continue
		}
		delete(inserted, r.RequestID)
		charged = append(charged, r)
	}
	charged, err := unposted(ctx, tx, charged)
	if err != nil {
		return err
	}
	return chargeBatch(ctx, tx, charged)
}

// touchKeys moves api_keys.last_used_at of every key in recs to the newest
// Time of its records that were stored now (the first of each id in
// inserted: a skipped duplicate moves nothing), never backwards.
func touchKeys(ctx context.Context, tx *sql.Tx, recs []store.UsageRecord, inserted map[string]bool) error {
	newest := map[string]int64{}
	seen := make(map[string]bool, len(inserted))
	for _, r := range recs {
		if !inserted[r.RequestID] || seen[r.RequestID] {
			continue
		}
		seen[r.RequestID] = true
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
	var prepared *sql.Stmt
	if u := usageStmtsFrom(ctx); u != nil {
		prepared = u.touchKey
	}
	touch, err := txStmt(ctx, tx, prepared, touchKeySQL)
	if err != nil {
		return err
	}
	for id, t := range newest {
		if _, err := touch.ExecContext(ctx, t, id, t); err != nil {
			return fmt.Errorf("key %q last used: %w", id, err)
		}
	}
	return nil
}

// insertUsageRows inserts recs (at most usageChunk) with multi-row
// statements (a statement per row costs most of a batch's time) and notes
// the ids that were new; ids already stored are skipped by ON CONFLICT and
// not returned. With usageStmts in ctx the statements are prepared ones,
// in chunks (see inChunks); without, one statement is built for recs.
func insertUsageRows(ctx context.Context, tx *sql.Tx, recs []store.UsageRecord, inserted map[string]bool) error {
	args := make([]any, 0, len(recs)*usageParams)
	for _, r := range recs {
		args = append(args, r.RequestID, toMicros(r.Time), r.AccountID, r.KeyID, r.Endpoint, r.Model,
			r.Provider, r.UpstreamModel, r.Stream, r.PromptTokens, r.CompletionTokens,
			r.Latency.Microseconds(), r.TTFT.Microseconds(), r.Status, r.ErrorCode,
			r.Cost, r.CachedTokens, r.ReasoningTokens, r.Estimated)
	}
	u := usageStmtsFrom(ctx)
	if u == nil {
		return scanInserted(tx.QueryContext(ctx, usageRowsSQL(len(recs)), args...))(inserted)
	}
	return inChunks(len(recs), func(lo, hi int) error {
		st := tx.StmtContext(ctx, u.rows[hi-lo])
		return scanInserted(st.QueryContext(ctx, args[lo*usageParams:hi*usageParams]...))(inserted)
	})
}

// unposted drops the records whose charge the ledger already holds. A
// record stored again after PurgeUsage deleted it (a crash journal replayed
// long after the fact) is new to usage_records but not to the ledger; its
// charge must not be posted twice, nor make the batch fail on the ledger's
// unique ref and be retried forever.
func unposted(ctx context.Context, tx *sql.Tx, recs []store.UsageRecord) ([]store.UsageRecord, error) {
	if len(recs) == 0 {
		return recs, nil
	}
	args := make([]any, len(recs))
	for i, r := range recs {
		args[i] = r.RequestID
	}
	u := usageStmtsFrom(ctx)
	var posted map[string]bool
	err := inChunks(len(recs), func(lo, hi int) error {
		var rows *sql.Rows
		var err error
		if u != nil {
			rows, err = tx.StmtContext(ctx, u.posted[hi-lo]).QueryContext(ctx, args[lo:hi]...)
		} else {
			rows, err = tx.QueryContext(ctx, postedSQL(hi-lo), args[lo:hi]...)
		}
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var ref string
			if err := rows.Scan(&ref); err != nil {
				return err
			}
			if posted == nil {
				posted = map[string]bool{}
			}
			posted[ref] = true
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	if len(posted) == 0 {
		return recs, nil
	}
	out := make([]store.UsageRecord, 0, len(recs)-len(posted))
	for _, r := range recs {
		if !posted[r.RequestID] {
			out = append(out, r)
		}
	}
	return out, nil
}

// PurgeUsage deletes at most limit of the oldest records whose time is
// before before, in one short write transaction that walks the time index
// (usage_records_time); the ledger and balances are not touched.
func (s *Store) PurgeUsage(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, fmt.Errorf("sqlite: purge usage: limit must be positive, got %d", limit)
	}
	var n int64
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM usage_records WHERE rowid IN
			(SELECT rowid FROM usage_records WHERE time < ? ORDER BY time LIMIT ?)`, toMicros(before), limit)
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
