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

// Statements of a posting; prepared once per transaction by poster.
const (
	moveBalance = `UPDATE accounts SET balance = balance + ?, spent = spent + ? WHERE id = ? RETURNING balance`
	insertEntry = `INSERT INTO ledger (account_id, kind, amount, balance_after, ref, note, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`
	addKeySpent = `UPDATE api_keys SET spent = spent + ? WHERE id = ?`
)

// poster posts ledger entries inside one transaction, preparing its
// statements on first use.
type poster struct {
	ctx          context.Context
	tx           *sql.Tx
	move, insert *sql.Stmt
}

func (p *poster) prepare() error {
	if p.move != nil {
		return nil
	}
	var err error
	if p.move, err = p.tx.PrepareContext(p.ctx, moveBalance); err != nil {
		return err
	}
	p.insert, err = p.tx.PrepareContext(p.ctx, insertEntry)
	return err
}

// close releases the prepared statements.
func (p *poster) close() {
	for _, st := range []*sql.Stmt{p.move, p.insert} {
		if st != nil {
			_ = st.Close()
		}
	}
}

// post moves the balance and inserts the entry inside tx. The UPDATE comes
// first so a missing account is found before anything is written.
func post(ctx context.Context, tx *sql.Tx, e store.LedgerEntry) (store.LedgerEntry, error) {
	p := &poster{ctx: ctx, tx: tx}
	defer p.close()
	return p.post(e)
}

func (p *poster) post(e store.LedgerEntry) (store.LedgerEntry, error) {
	if !e.Kind.Valid() {
		return e, fmt.Errorf("unknown ledger kind %q", e.Kind)
	}
	if err := p.prepare(); err != nil {
		return e, err
	}
	spent := money.Micros(0)
	if e.Kind == store.KindCharge {
		spent = -e.Amount
	}
	err := p.move.QueryRowContext(p.ctx, e.Amount, spent, e.AccountID).Scan(&e.BalanceAfter)
	if errors.Is(err, sql.ErrNoRows) {
		return e, fmt.Errorf("account %q: %w", e.AccountID, store.ErrNotFound)
	}
	if err != nil {
		return e, err
	}
	ref := sql.NullString{String: e.Ref, Valid: e.Ref != ""}
	err = p.insert.QueryRowContext(p.ctx, e.AccountID, string(e.Kind), e.Amount, e.BalanceAfter, ref, e.Note,
		toMicros(e.Time)).Scan(&e.ID)
	return e, err
}

// chargeBatch posts the charges of newly inserted usage records: one
// ledger entry each, but one balance update per account and one spent
// update per key, since a batch holds many requests of few payers. Inside
// the write transaction (BEGIN IMMEDIATE) nothing else moves the balances,
// so the running balance_after computed here is exact.
func chargeBatch(ctx context.Context, tx *sql.Tx, recs []store.UsageRecord) error {
	if len(recs) == 0 {
		return nil
	}
	type acct struct {
		balance, spent money.Micros
	}
	accts := map[string]*acct{}
	keys := map[string]money.Micros{}
	var order []string
	// With InsertUsage's prepared statements in ctx (usage_stmts.go) no
	// statement is parsed here; otherwise each is prepared in tx.
	u := usageStmtsFrom(ctx)
	if u == nil {
		u = &usageStmts{}
	}
	get, err := txStmt(ctx, tx, u.balance, balanceSQL)
	if err != nil {
		return err
	}
	// The ledger rows go in multi-row statements (see inChunks);
	// balance_after is computed here, in order.
	args := make([]any, 0, ledgerParams*len(recs))
	for _, r := range recs {
		a := accts[r.AccountID]
		if a == nil {
			a = &acct{}
			if err := get.QueryRowContext(ctx, r.AccountID).Scan(&a.balance); err != nil {
				return fmt.Errorf("charge %s: account %q: %w", r.RequestID, r.AccountID, err)
			}
			accts[r.AccountID] = a
			order = append(order, r.AccountID)
		}
		a.balance -= r.Cost
		a.spent += r.Cost
		args = append(args, r.AccountID, -r.Cost, a.balance, r.RequestID, toMicros(r.Time))
		if r.KeyID != "" {
			keys[r.KeyID] += r.Cost
		}
	}
	err = inChunks(len(recs), func(lo, hi int) error {
		st, err := txStmt(ctx, tx, u.ledger[hi-lo], ledgerRowsSQL(hi-lo))
		if err == nil {
			_, err = st.ExecContext(ctx, args[lo*ledgerParams:hi*ledgerParams]...)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("charge batch: %w", err)
	}
	debit, err := txStmt(ctx, tx, u.debit, debitSQL)
	if err != nil {
		return err
	}
	for _, id := range order {
		a := accts[id]
		if _, err := debit.ExecContext(ctx, a.balance, a.spent, id); err != nil {
			return err
		}
	}
	spend, err := txStmt(ctx, tx, u.keySpent, addKeySpent)
	if err != nil {
		return err
	}
	for id, cost := range keys {
		if _, err := spend.ExecContext(ctx, cost, id); err != nil {
			return err
		}
	}
	return nil
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
