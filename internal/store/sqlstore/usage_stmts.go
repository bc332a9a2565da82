package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// usageStmts are InsertUsage's and AppendUsage's statements, prepared
// once per Store. The
// multi-row ones exist for the row counts in chunkSizes only: a batch of n
// rows runs as consecutive chunks of those sizes, largest first (256 =
// 200+32+16+8), so no statement is parsed per batch (parsing a 200-row
// INSERT cost more than executing it) and a handful of statements cover
// every batch size.
//
// Both hand them down through the context (withUsageStmts), so
// insertUsage keeps its signature for callers without a Store (FinishTask);
// those fall back to preparing the SQL text in their transaction.
type usageStmts struct {
	posted   map[int]*sql.Stmt // SELECT ref FROM ledger WHERE ref IN (n ids), by row count
	balances map[int]*sql.Stmt // SELECT id, balance FROM accounts WHERE id IN (n ids)
	debits   map[int]*sql.Stmt // n accounts' balance and spent (debitsSQL)
	keyUses  map[int]*sql.Stmt // n keys' spent and last use (keyUsesSQL)
	// rollups holds the n-row upserts into usage_rollups and
	// usage_rollups_daily, by table.
	rollups map[string]map[int]*sql.Stmt
	single  map[string]*sql.Stmt
}

// chunkSizes are the row counts with a prepared statement, largest first;
// the largest is usageChunk.
var chunkSizes = []int{usageChunk, 128, 64, 32, 16, 8, 4, 2, 1}

// The single-row statements of a batch, prepared once each.
const (
	ledgerSeqSQL = `SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'ledger'),
		(SELECT MAX(id) FROM ledger), 0)`
	setLedgerSeqSQL = `UPDATE sqlite_sequence SET seq = ? WHERE name = 'ledger'`
	chargedThruSQL  = `SELECT through FROM usage_charged_through`
	blockInsertSQL  = `INSERT INTO usage_blocks
		(account_id, first_time, last_time, records, charges, charged, data, first_charge) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
)

// singleSQL lists every single-row statement prepared in usageStmts.single.
var singleSQL = []string{ledgerSeqSQL, setLedgerSeqSQL, chargedThruSQL, blockInsertSQL, storedIDsSQL}

// rollupTables are the rollup tables and their time columns.
var rollupTables = [][2]string{{"usage_rollups", "hour"}, {"usage_rollups_daily", "day"}}

// postedSQL selects which of n request ids have a charge in the ledger table.
func postedSQL(n int) string {
	return `SELECT ref FROM ledger WHERE kind = 'charge' AND ref IN (?` + strings.Repeat(`, ?`, n-1) + `)`
}

// balancesSQL selects the balances of n accounts.
func balancesSQL(n int) string {
	return `SELECT id, balance FROM accounts WHERE id IN (?` + strings.Repeat(`, ?`, n-1) + `)`
}

// valuesSQL is n rows of placeholders of the given types, "(CAST(? AS
// TEXT), CAST(? AS BIGINT)), (?, ?)" for n = 2: the first row's casts type
// the columns, which PostgreSQL cannot infer from placeholders alone.
func valuesSQL(n int, types ...string) string {
	first := make([]string, len(types))
	for i, t := range types {
		first[i] = `CAST(? AS ` + t + `)`
	}
	row := `(?` + strings.Repeat(`, ?`, len(types)-1) + `)`
	return `(` + strings.Join(first, `, `) + `)` + strings.Repeat(`, `+row, n-1)
}

// debitsSQL sets n accounts' balances and adds to their spent amounts,
// given (id, balance, spent) rows: one statement per chunk of a batch's
// accounts instead of one per account (~6 µs each with the pure-Go driver).
func debitsSQL(n int) string {
	return `WITH d(id, balance, spent) AS (VALUES ` + valuesSQL(n, "TEXT", "BIGINT", "BIGINT") + `)
		UPDATE accounts SET balance = d.balance, spent = accounts.spent + d.spent
		FROM d WHERE accounts.id = d.id`
}

// keyUsesSQL adds to n keys' spent amounts and moves their last_used_at to
// a newer time (never back), given (id, spent, time) rows.
func keyUsesSQL(n int) string {
	return `WITH u(id, spent, used) AS (VALUES ` + valuesSQL(n, "TEXT", "BIGINT", "BIGINT") + `)
		UPDATE api_keys SET spent = api_keys.spent + u.spent,
			last_used_at = CASE WHEN api_keys.last_used_at > u.used THEN api_keys.last_used_at ELSE u.used END
		FROM u WHERE api_keys.id = u.id`
}

// prepareUsage prepares s.usage; Close releases it.
func (s *Store) prepareUsage(ctx context.Context) (err error) {
	u := &usageStmts{posted: map[int]*sql.Stmt{}, balances: map[int]*sql.Stmt{}, debits: map[int]*sql.Stmt{},
		keyUses: map[int]*sql.Stmt{},
		rollups: map[string]map[int]*sql.Stmt{}, single: map[string]*sql.Stmt{}}
	s.usage = u
	if s.pg {
		// PostgreSQL takes ~1.4 s to plan all of them up front, most of
		// which a replica never runs; a batch prepares what it uses.
		return nil
	}
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		if st, err = s.db.PrepareContext(ctx, q); err != nil {
			err = fmt.Errorf("prepare usage statement %.60q: %w", q, err)
		}
		return st
	}
	for _, n := range chunkSizes {
		u.posted[n], u.balances[n] = prep(postedSQL(n)), prep(balancesSQL(n))
		u.debits[n], u.keyUses[n] = prep(debitsSQL(n)), prep(keyUsesSQL(n))
	}
	for _, t := range rollupTables {
		u.rollups[t[0]] = map[int]*sql.Stmt{}
		for _, n := range chunkSizes {
			u.rollups[t[0]][n] = prep(rollupRowsSQL(t[0], t[1], n))
		}
	}
	for _, q := range singleSQL {
		u.single[q] = prep(q)
	}
	return err
}

// close releases the statements that were prepared.
func (u *usageStmts) close() error {
	if u == nil {
		return nil
	}
	var errs []error
	maps := []map[int]*sql.Stmt{u.posted, u.balances, u.debits, u.keyUses}
	for _, m := range u.rollups {
		maps = append(maps, m)
	}
	for _, m := range maps {
		for _, st := range m {
			if st != nil {
				errs = append(errs, st.Close())
			}
		}
	}
	for _, st := range u.single {
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

// batchTx is a write transaction storing usage records, with the
// prepared statements when the context carries them.
type batchTx struct {
	ctx context.Context
	tx  *sql.Tx
	u   *usageStmts          // nil: statements are prepared in tx
	own map[string]*sql.Stmt // statements prepared in tx, by SQL; closed by close
}

// newBatchTx returns tx with the statements ctx carries, if any.
func newBatchTx(ctx context.Context, tx *sql.Tx) *batchTx {
	u, _ := ctx.Value(usageStmtsKey{}).(*usageStmts)
	return &batchTx{ctx: ctx, tx: tx, u: u}
}

// stmt returns the single-row statement q bound to the transaction.
// database/sql prepares a Store's statement once per pooled connection and
// reuses it after that.
func (b *batchTx) stmt(q string) (*sql.Stmt, error) {
	if b.u != nil {
		if st := b.u.single[q]; st != nil {
			return b.tx.StmtContext(b.ctx, st), nil
		}
	}
	return b.prepare(q)
}

// prepare prepares q in the transaction, once.
func (b *batchTx) prepare(q string) (*sql.Stmt, error) {
	if st := b.own[q]; st != nil {
		return st, nil
	}
	st, err := b.tx.PrepareContext(b.ctx, q)
	if err != nil {
		return nil, err
	}
	if b.own == nil {
		b.own = map[string]*sql.Stmt{}
	}
	b.own[q] = st
	return st, nil
}

// multi returns the n-row statement of prepared (one of usageStmts'
// maps), or one prepared from sqlFor(n).
func (b *batchTx) multi(prepared func(*usageStmts) map[int]*sql.Stmt, sqlFor func(int) string, n int) (*sql.Stmt, error) {
	if b.u != nil {
		if st := prepared(b.u)[n]; st != nil {
			return b.tx.StmtContext(b.ctx, st), nil
		}
	}
	return b.prepare(sqlFor(n))
}

// close releases the statements prepared in the transaction.
func (b *batchTx) close() {
	for _, st := range b.own {
		_ = st.Close()
	}
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

// execRows runs the multi-row statement of prepared (one of usageStmts'
// maps; or one prepared from sqlFor) over args, rows of width parameters
// each, in chunks of chunkSizes.
func (b *batchTx) execRows(prepared func(*usageStmts) map[int]*sql.Stmt, sqlFor func(int) string, args []any, width int) error {
	return inChunks(len(args)/width, func(lo, hi int) error {
		st, err := b.multi(prepared, sqlFor, hi-lo)
		if err == nil {
			_, err = st.ExecContext(b.ctx, args[width*lo:width*hi]...)
		}
		return err
	})
}

// lookupIDs returns which of ids the n-row query (prepared, or built by
// sqlFor) returns, in chunks.
func (b *batchTx) lookupIDs(prepared func(*usageStmts) map[int]*sql.Stmt, sqlFor func(int) string, ids []any) (map[string]bool, error) {
	var found map[string]bool
	err := b.queryRows(prepared, sqlFor, ids, func(rows *sql.Rows) error {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		if found == nil {
			found = map[string]bool{}
		}
		found[id] = true
		return nil
	})
	return found, err
}

// queryRows runs the n-row query of prepared (or one prepared from
// sqlFor) over ids, in chunks, and calls scan with each row.
func (b *batchTx) queryRows(prepared func(*usageStmts) map[int]*sql.Stmt, sqlFor func(int) string, ids []any, scan func(*sql.Rows) error) error {
	return inChunks(len(ids), func(lo, hi int) error {
		st, err := b.multi(prepared, sqlFor, hi-lo)
		if err != nil {
			return err
		}
		rows, err := st.QueryContext(b.ctx, ids[lo:hi]...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}
