package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
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

// LeaseHold raises (or sets) instance's hold on accountID within what the
// account can cover, in one write transaction (so two instances' leases
// are decided one after the other against the same balance).
func (s *Store) LeaseHold(ctx context.Context, instance, accountID string, least, want money.Micros, at, fresh time.Time) (money.Micros, error) {
	if least < 0 || want < least {
		return 0, fmt.Errorf("sqlstore: lease hold: want %v below least %v", want, least)
	}
	var granted money.Micros
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		var free, others money.Micros
		if err := tx.QueryRowContext(ctx, `SELECT balance -
			(SELECT COALESCE(SUM(t.held), 0) FROM video_tasks t
			 WHERE t.account_id = accounts.id AND t.state IN ('pending', 'processing')) -
			(SELECT COALESCE(SUM(r.held), 0) FROM response_tasks r
			 WHERE r.account_id = accounts.id AND r.status IN ('queued', 'in_progress'))
			FROM accounts WHERE id = ?`, accountID).Scan(&free); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(amount), 0) FROM holds
			WHERE account_id = ? AND instance <> ? AND updated_at >= ?`,
			accountID, instance, toMicros(fresh)).Scan(&others); err != nil {
			return err
		}
		switch free -= others; {
		case free >= want:
			granted = want
		case free >= least:
			granted = least
		default:
			return nil
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO holds (instance, account_id, amount, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (instance, account_id) DO UPDATE SET amount = excluded.amount, updated_at = excluded.updated_at`,
			instance, accountID, granted, toMicros(at))
		return err
	})
	if err != nil {
		return 0, wrap(fmt.Sprintf("lease hold on %q", accountID), err)
	}
	return granted, nil
}
