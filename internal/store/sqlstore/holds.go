package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/modelgate/modelgate/internal/money"
)

// PutHolds replaces instance's holds in one transaction.
func (s *Store) PutHolds(ctx context.Context, instance string, amounts map[string]money.Micros, at time.Time) error {
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM holds WHERE instance = ?`, instance); err != nil {
			return err
		}
		for id, amt := range amounts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO holds (instance, account_id, amount, updated_at) VALUES (?, ?, ?, ?)`,
				instance, id, amt, toMicros(at)); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap("put holds", err)
}

// Reserved is the total held on an account by all instances.
func (s *Store) Reserved(ctx context.Context, accountID string) (money.Micros, error) {
	var sum money.Micros
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(amount), 0) FROM holds WHERE account_id = ?`, accountID).Scan(&sum)
	return sum, wrap("reserved", err)
}

// DropHolds deletes stale holds of other instances and reports them.
func (s *Store) DropHolds(ctx context.Context, keep string, before time.Time) (map[string]money.Micros, error) {
	out := map[string]money.Micros{}
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `DELETE FROM holds WHERE instance <> ? AND updated_at < ? RETURNING account_id, amount`,
			keep, toMicros(before))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id  string
				amt money.Micros
			)
			if err := rows.Scan(&id, &amt); err != nil {
				return err
			}
			out[id] += amt
		}
		return rows.Err()
	})
	if err != nil {
		return nil, wrap("drop holds", err)
	}
	return out, nil
}
