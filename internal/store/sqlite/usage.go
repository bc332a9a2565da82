package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

const insertUsage = `INSERT INTO usage_records
	(request_id, time, account_id, key_id, endpoint, model, provider, upstream_model,
	 stream, prompt_tokens, completion_tokens, latency_us, ttft_us, status, error_code,
	 cost, cached_tokens, reasoning_tokens, estimated)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (request_id) DO NOTHING`

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
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, insertUsage)
		if err != nil {
			return err
		}
		defer stmt.Close()
		var charged []store.UsageRecord
		for _, r := range recs {
			res, err := stmt.ExecContext(ctx,
				r.RequestID, toMicros(r.Time), r.AccountID, r.KeyID, r.Endpoint, r.Model,
				r.Provider, r.UpstreamModel, r.Stream, r.PromptTokens, r.CompletionTokens,
				r.Latency.Microseconds(), r.TTFT.Microseconds(), r.Status, r.ErrorCode,
				r.Cost, r.CachedTokens, r.ReasoningTokens, r.Estimated,
			)
			if err != nil {
				return err
			}
			if r.Cost == 0 || r.AccountID == "" {
				continue
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				if err != nil {
					return err
				}
				continue // stored before, and charged then
			}
			charged = append(charged, r)
		}
		return chargeBatch(ctx, tx, charged)
	})
	return wrap("insert usage", err)
}

// ListUsage returns the records f selects, newest first (ties broken by
// request ID, descending), at most f.Limit of them when it is positive.
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
