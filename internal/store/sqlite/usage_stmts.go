package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// usageStmts are InsertUsage's statements, prepared once per Store. The
// multi-row ones exist for the row counts in chunkSizes only: a batch of n
// rows runs as consecutive chunks of those sizes, largest first (256 =
// 200+32+16+8), so no statement is parsed per batch (parsing a 200-row
// INSERT cost more than executing it) and a handful of statements cover
// every batch size.
//
// InsertUsage hands them down through the context (withUsageStmts), so
// insertUsage keeps its signature for callers without a Store (FinishTask);
// those fall back to building the SQL text per call.
type usageStmts struct {
	rows     map[int]*sql.Stmt // usage_records INSERT … RETURNING, by row count
	ledger   map[int]*sql.Stmt // ledger charge INSERT, by row count
	posted   map[int]*sql.Stmt // SELECT ref FROM ledger WHERE ref IN (n ids)
	touchKey *sql.Stmt
	balance  *sql.Stmt
	debit    *sql.Stmt
	keySpent *sql.Stmt
}

// chunkSizes are the row counts with a prepared statement, largest first;
// the largest is usageChunk.
var chunkSizes = []int{usageChunk, 128, 64, 32, 16, 8, 4, 2, 1}

const (
	ledgerRow    = `(?, 'charge', ?, ?, ?, '', ?)`
	ledgerParams = 5
	ledgerInsert = `INSERT INTO ledger (account_id, kind, amount, balance_after, ref, note, created_at) VALUES `
	touchKeySQL  = `UPDATE api_keys SET last_used_at = ?
			WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`
	balanceSQL = `SELECT balance FROM accounts WHERE id = ?`
	debitSQL   = `UPDATE accounts SET balance = ?, spent = spent + ? WHERE id = ?`
)

// usageRowsSQL is the usage_records insert of n rows.
func usageRowsSQL(n int) string {
	return usageColumns + usageRow + strings.Repeat(","+usageRow, n-1) +
		` ON CONFLICT (request_id) DO NOTHING RETURNING request_id`
}

// ledgerRowsSQL is the ledger insert of n charges.
func ledgerRowsSQL(n int) string {
	return ledgerInsert + ledgerRow + strings.Repeat(","+ledgerRow, n-1)
}

// postedSQL selects which of n request ids already have a charge.
func postedSQL(n int) string {
	return `SELECT ref FROM ledger WHERE kind = 'charge' AND ref IN (?` + strings.Repeat(`, ?`, n-1) + `)`
}

// prepareUsage prepares s.usage; Close releases it.
func (s *Store) prepareUsage(ctx context.Context) (err error) {
	u := &usageStmts{rows: map[int]*sql.Stmt{}, ledger: map[int]*sql.Stmt{}, posted: map[int]*sql.Stmt{}}
	s.usage = u
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		if st, err = s.db.PrepareContext(ctx, q); err != nil {
			err = fmt.Errorf("prepare usage statements: %w", err)
		}
		return st
	}
	for _, n := range chunkSizes {
		u.rows[n], u.ledger[n], u.posted[n] = prep(usageRowsSQL(n)), prep(ledgerRowsSQL(n)), prep(postedSQL(n))
	}
	u.touchKey, u.balance, u.debit, u.keySpent = prep(touchKeySQL), prep(balanceSQL), prep(debitSQL), prep(addKeySpent)
	return err
}

// close releases the statements that were prepared.
func (u *usageStmts) close() error {
	if u == nil {
		return nil
	}
	var errs []error
	for _, m := range []map[int]*sql.Stmt{u.rows, u.ledger, u.posted} {
		for _, st := range m {
			if st != nil {
				errs = append(errs, st.Close())
			}
		}
	}
	for _, st := range []*sql.Stmt{u.touchKey, u.balance, u.debit, u.keySpent} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

type usageStmtsKey struct{}

// withUsageStmts returns ctx carrying u for insertUsage's helpers.
func withUsageStmts(ctx context.Context, u *usageStmts) context.Context {
	return context.WithValue(ctx, usageStmtsKey{}, u)
}

// usageStmtsFrom returns the statements ctx carries, or nil.
func usageStmtsFrom(ctx context.Context) *usageStmts {
	u, _ := ctx.Value(usageStmtsKey{}).(*usageStmts)
	return u
}

// txStmt returns st bound to tx, or a statement prepared from q when st is
// nil (no usageStmts in the context). database/sql prepares st once per
// pooled connection and reuses it after that.
func txStmt(ctx context.Context, tx *sql.Tx, st *sql.Stmt, q string) (*sql.Stmt, error) {
	if st != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, q)
}

// inChunks calls fn with consecutive [lo, hi) ranges covering n rows,
// each of a size in chunkSizes, largest first.
func inChunks(n int, fn func(lo, hi int) error) error {
	lo := 0
	for _, size := range chunkSizes {
		for n-lo >= size {
			if err := fn(lo, lo+size); err != nil {
				return err
			}
			lo += size
		}
	}
	return nil
}

// scanInserted returns a function adding the request ids rows returns to
// inserted, or err.
func scanInserted(rows *sql.Rows, err error) func(map[string]bool) error {
	return func(inserted map[string]bool) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			inserted[id] = true
		}
		return rows.Err()
	}
}
