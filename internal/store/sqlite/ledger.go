package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// Post applies e atomically; see store.Ledger.
func (s *Store) Post(ctx context.Context, e store.LedgerEntry) (store.LedgerEntry, error) {
	var out store.LedgerEntry
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = post(ctx, tx, e)
		return err
	})
	if err != nil {
		return store.LedgerEntry{}, wrap("post ledger entry", err)
	}
	return out, nil
}

// post moves the balance and inserts the entry inside tx. The UPDATE comes
// first so a missing account is found before anything is written.
func post(ctx context.Context, tx *sql.Tx, e store.LedgerEntry) (store.LedgerEntry, error) {
	if !e.Kind.Valid() {
		return e, fmt.Errorf("unknown ledger kind %q", e.Kind)
	}
	spent := money.Micros(0)
	if e.Kind == store.KindCharge {
		spent = -e.Amount
	}
	err := tx.QueryRowContext(ctx,
		`UPDATE accounts SET balance = balance + ?, spent = spent + ? WHERE id = ? RETURNING balance`,
		e.Amount, spent, e.AccountID).Scan(&e.BalanceAfter)
	if errors.Is(err, sql.ErrNoRows) {
		return e, fmt.Errorf("account %q: %w", e.AccountID, store.ErrNotFound)
	}
	if err != nil {
		return e, err
	}
	ref := sql.NullString{String: e.Ref, Valid: e.Ref != ""}
	err = tx.QueryRowContext(ctx, `INSERT INTO ledger (account_id, kind, amount, balance_after, ref, note, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		e.AccountID, string(e.Kind), e.Amount, e.BalanceAfter, ref, e.Note, toMicros(e.Time)).Scan(&e.ID)
	return e, err
}

// charge posts the charge of a newly inserted usage record.
func charge(ctx context.Context, tx *sql.Tx, r store.UsageRecord) error {
	_, err := post(ctx, tx, store.LedgerEntry{AccountID: r.AccountID, Kind: store.KindCharge,
		Amount: -r.Cost, Ref: r.RequestID, Time: r.Time})
	if err != nil {
		return err
	}
	if r.KeyID == "" {
		return nil
	}
	_, err = tx.ExecContext(ctx, `UPDATE api_keys SET spent = spent + ? WHERE id = ?`, r.Cost, r.KeyID)
	return err
}

// ListLedger returns an account's entries, oldest first.
func (s *Store) ListLedger(ctx context.Context, accountID string) ([]store.LedgerEntry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, account_id, kind, amount, balance_after, COALESCE(ref, ''),
		note, created_at FROM ledger WHERE account_id = ? ORDER BY id`, accountID)
	if err != nil {
		return nil, wrap("list ledger", err)
	}
	defer rows.Close()
	var out []store.LedgerEntry
	for rows.Next() {
		var (
			e    store.LedgerEntry
			kind string
			at   int64
		)
		if err := rows.Scan(&e.ID, &e.AccountID, &kind, &e.Amount, &e.BalanceAfter, &e.Ref, &e.Note, &at); err != nil {
			return nil, wrap("list ledger", err)
		}
		e.Kind, e.Time = store.LedgerKind(kind), fromMicros(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list ledger", err)
	}
	return out, nil
}

// LedgerSum is the sum of an account's entries.
func (s *Store) LedgerSum(ctx context.Context, accountID string) (money.Micros, error) {
	var sum money.Micros
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(amount), 0) FROM ledger WHERE account_id = ?`, accountID).Scan(&sum)
	return sum, wrap("ledger sum", err)
}
