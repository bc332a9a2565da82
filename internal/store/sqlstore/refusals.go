package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// minuteLen is the span one refusal row counts.
const minuteLen = time.Minute

// AddRefusals adds counts to their rows in one transaction (see
// store.Refusals).
func (s *Store) AddRefusals(ctx context.Context, counts []store.RefusalCount) error {
	if len(counts) == 0 {
		return nil
	}
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO usage_refusals
			(account_id, key_id, minute, endpoint, reason, status, count) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (account_id, minute, key_id, endpoint, reason)
			DO UPDATE SET count = usage_refusals.count + excluded.count, status = excluded.status`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, c := range counts {
			if c.AccountID == "" || c.Reason == "" || c.Count <= 0 {
				return fmt.Errorf("refusal %+v: account, reason and a positive count are required", c)
			}
			minute := toMicros(c.Minute.UTC().Truncate(minuteLen))
			if _, err := stmt.ExecContext(ctx, c.AccountID, c.KeyID, minute, c.Endpoint, c.Reason, c.Status, c.Count); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap("add refusals", err)
}

// ListRefusals returns the rows f selects, newest minute first.
func (s *Store) ListRefusals(ctx context.Context, f store.RefusalFilter) ([]store.RefusalCount, error) {
	var where []string
	var args []any
	if f.AccountID != "" {
		where, args = append(where, "account_id = ?"), append(args, f.AccountID)
	}
	if f.KeyID != "" {
		where, args = append(where, "key_id = ?"), append(args, f.KeyID)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "minute >= ?"), append(args, toMicros(f.Since))
	}
	if !f.Until.IsZero() {
		where, args = append(where, "minute < ?"), append(args, toMicros(f.Until))
	}
	q := `SELECT account_id, key_id, minute, endpoint, reason, status, count FROM usage_refusals`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY minute DESC, account_id, key_id, endpoint, reason"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrap("list refusals", err)
	}
	defer rows.Close()
	var out []store.RefusalCount
	for rows.Next() {
		var c store.RefusalCount
		var minute int64
		if err := rows.Scan(&c.AccountID, &c.KeyID, &minute, &c.Endpoint, &c.Reason, &c.Status, &c.Count); err != nil {
			return nil, wrap("list refusals", err)
		}
		c.Minute = fromMicros(minute)
		out = append(out, c)
	}
	return out, wrap("list refusals", rows.Err())
}

// PurgeRefusals deletes at most limit rows of minutes before before.
func (s *Store) PurgeRefusals(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, fmt.Errorf("sqlstore: purge refusals: limit must be positive, got %d", limit)
	}
	res, err := s.db.ExecContext(ctx, `DELETE FROM usage_refusals WHERE (account_id, minute, key_id, endpoint, reason) IN (
		SELECT account_id, minute, key_id, endpoint, reason FROM usage_refusals WHERE minute < ? ORDER BY minute LIMIT ?)`, toMicros(before), limit)
	if err != nil {
		return 0, wrap("purge refusals", err)
	}
	n, err := res.RowsAffected()
	return int(n), wrap("purge refusals", err)
}
