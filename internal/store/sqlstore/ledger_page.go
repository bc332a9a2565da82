package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/internal/store"
)

// maxLedgerPage is the largest LedgerQuery.Limit.
const maxLedgerPage = 1000

// LedgerPage returns a page of an account's ledger, newest first; see
// store.Ledger. The entries come from two sources that share one id space:
// the ledger table (read through ledger_account, id descending) and the
// charges usage blocks hold (blocks read through
// usage_blocks_account_charges, id descending: a block's charges are a run
// of ids above every older block's, 0017_console_ledger_keys.sql). Both are
// walked newest first, merged by id, and the walk stops once the page is
// full, so a page decodes only the blocks its entries come from (and, for
// blocks written before 0017, those between it and the newest). Both are
// read in one read transaction, so a purge moving charges from blocks to
// the table cannot make an entry appear twice or not at all.
func (s *Store) LedgerPage(ctx context.Context, q store.LedgerQuery) ([]store.LedgerEntry, int64, error) {
	if q.Limit < 1 || q.Limit > maxLedgerPage {
		return nil, 0, fmt.Errorf("sqlstore: ledger page: limit %d not in 1..%d", q.Limit, maxLedgerPage)
	}
	for _, k := range q.Kinds {
		if !k.Valid() {
			return nil, 0, fmt.Errorf("sqlstore: ledger page: unknown kind %q", k)
		}
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, 0, wrap("ledger page", err)
	}
	defer conn.Close()
	// A deferred transaction (the DSN's _txlock only applies to BeginTx):
	// one snapshot for both sources, without taking the write lock. On
	// PostgreSQL, a repeatable-read one: one snapshot for every statement.
	begin := `BEGIN DEFERRED`
	if s.pg {
		begin = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`
	}
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		return nil, 0, wrap("ledger page", err)
	}
	defer func() { _, _ = conn.ExecContext(context.Background(), `ROLLBACK`) }()
	w := newLedgerWalk(q)
	defer w.close()
	if err := w.open(ctx, conn, s.pg); err != nil {
		return nil, 0, wrap("ledger page", err)
	}
	out, next, err := w.page()
	if err != nil {
		return nil, 0, wrap("ledger page", err)
	}
	return out, next, nil
}

// ledgerWalk merges the two sources of one account's ledger, id
// descending, and groups charges when asked.
type ledgerWalk struct {
	q            store.LedgerQuery
	since, until int64 // Unix µs bounds, [since, until)
	before       int64
	selected     func(store.LedgerKind) bool
	charges      bool // the walk reads the blocks' charges

	ctx    context.Context
	conn   *sql.Conn
	table  *rowSource // the ledger table's rows
	tabBuf []store.LedgerEntry
	tabOK  bool
	tabTop store.LedgerEntry // the table's next entry, when tabOK
	blocks *rowSource        // candidate blocks: id
	blkIDs []int64           // fetched from blocks, not read yet
	blkBuf []store.LedgerEntry
	blkEnd bool // no block left

	peeked  store.LedgerEntry // a raw entry read ahead by grouping
	hasPeek bool
}

func newLedgerWalk(q store.LedgerQuery) *ledgerWalk {
	w := &ledgerWalk{q: q, since: math.MinInt64, until: math.MaxInt64, before: q.Before}
	if !q.Since.IsZero() {
		w.since = toMicros(q.Since)
	}
	if !q.Until.IsZero() {
		w.until = toMicros(q.Until)
	}
	if w.before <= 0 {
		w.before = math.MaxInt64
	}
	w.selected = func(store.LedgerKind) bool { return true }
	if len(q.Kinds) > 0 {
		kinds := slices.Clone(q.Kinds)
		w.selected = func(k store.LedgerKind) bool { return slices.Contains(kinds, k) }
	}
	w.charges = w.selected(store.KindCharge)
	return w
}

// open starts both sources' queries.
func (w *ledgerWalk) open(ctx context.Context, conn *sql.Conn, pg bool) error {
	w.ctx, w.conn = ctx, conn
	q := `SELECT id, kind, amount, balance_after, COALESCE(ref, ''), note, created_at FROM ledger
		WHERE account_id = ? AND id < ? AND created_at >= ? AND created_at < ?`
	args := []any{w.q.AccountID, w.before, w.since, w.until}
	// Grouping needs every kind: any entry ends a run of charges. Without
	// it (or when charges are not selected, so there is nothing to group)
	// the kinds filter the table's rows directly.
	if len(w.q.Kinds) > 0 && (!w.q.GroupCharges || !w.charges) {
		q += ` AND kind IN (?` + strings.Repeat(`, ?`, len(w.q.Kinds)-1) + `)`
		for _, k := range w.q.Kinds {
			args = append(args, string(k))
		}
	}
	var err error
	if w.table, err = openSource(ctx, conn, pg, "ledger_rows", q+` ORDER BY id DESC`, args...); err != nil {
		return fmt.Errorf("ledger rows: %w", err)
	}
	if !w.charges {
		w.blkEnd = true
		return nil
	}
	if w.blocks, err = openSource(ctx, conn, pg, "ledger_blocks", `SELECT id FROM usage_blocks
		WHERE account_id = ? AND charges > 0 AND (first_charge IS NULL OR first_charge < ?)
		ORDER BY id DESC`, w.q.AccountID, w.before); err != nil {
		return fmt.Errorf("charge blocks: %w", err)
	}
	return nil
}

// close releases both queries.
func (w *ledgerWalk) close() {
	_ = w.table.close()
	_ = w.blocks.close()
}

// page collects up to q.Limit selected entries (grouped when asked) and the
// next page's Before: the oldest id of the last entry when a selected entry
// is left after it, else 0.
func (w *ledgerWalk) page() ([]store.LedgerEntry, int64, error) {
	var (
		out    []store.LedgerEntry
		oldest int64
	)
	for {
		e, low, ok, err := w.nextItem()
		if err != nil || !ok {
			return out, 0, err
		}
		if !w.selected(e.Kind) {
			continue
		}
		if len(out) == w.q.Limit {
			return out, oldest, nil
		}
		out, oldest = append(out, e), low
	}
}

// nextItem returns the next entry of the page's walk, a run of charges
// merged when grouping, with the lowest id it stands for.
func (w *ledgerWalk) nextItem() (store.LedgerEntry, int64, bool, error) {
	e, ok, err := w.nextRaw()
	if err != nil || !ok {
		return e, 0, ok, err
	}
	if !w.q.GroupCharges || e.Kind != store.KindCharge {
		return e, e.ID, true, nil
	}
	day, low := dayOf(e), e.ID
	for {
		n, ok, err := w.nextRaw()
		if err != nil {
			return e, 0, false, err
		}
		if !ok {
			return e, low, true, nil
		}
		if n.Kind != store.KindCharge || dayOf(n) != day {
			w.peeked, w.hasPeek = n, true
			return e, low, true, nil
		}
		e.Amount += n.Amount
		e.Count++
		e.Ref, e.Note = "", ""
		low = n.ID
	}
}

// dayOf is the UTC day of e's time, as a day number.
func dayOf(e store.LedgerEntry) int64 {
	t := e.Time.Unix()
	d := t / 86400
	if t%86400 < 0 {
		d--
	}
	return d
}

// nextRaw returns the next entry of both sources by id descending.
func (w *ledgerWalk) nextRaw() (store.LedgerEntry, bool, error) {
	if w.hasPeek {
		w.hasPeek = false
		return w.peeked, true, nil
	}
	if err := w.fillTable(); err != nil {
		return store.LedgerEntry{}, false, err
	}
	if err := w.fillBlocks(); err != nil {
		return store.LedgerEntry{}, false, err
	}
	haveBlk := len(w.blkBuf) > 0
	switch {
	case w.tabOK && (!haveBlk || w.tabTop.ID > w.blkBuf[0].ID):
		w.tabOK = false
		return w.tabTop, true, nil
	case haveBlk:
		e := w.blkBuf[0]
		w.blkBuf = w.blkBuf[1:]
		return e, true, nil
	}
	return store.LedgerEntry{}, false, nil
}

// fillTable reads the table's next row into tabTop unless one waits there.
func (w *ledgerWalk) fillTable() error {
	if w.tabOK {
		return nil
	}
	if len(w.tabBuf) == 0 {
		if _, err := w.table.more(w.scanEntry); err != nil {
			return fmt.Errorf("ledger rows: %w", err)
		}
		if len(w.tabBuf) == 0 {
			return nil
		}
	}
	w.tabTop, w.tabOK = w.tabBuf[0], true
	w.tabBuf = w.tabBuf[1:]
	return nil
}

// scanEntry appends the table's row to tabBuf.
func (w *ledgerWalk) scanEntry(rows *sql.Rows) error {
	var (
		e    store.LedgerEntry
		kind string
		at   int64
	)
	if err := rows.Scan(&e.ID, &kind, &e.Amount, &e.BalanceAfter, &e.Ref, &e.Note, &at); err != nil {
		return err
	}
	e.AccountID, e.Kind, e.Time, e.Count = w.q.AccountID, store.LedgerKind(kind), fromMicros(at), 1
	w.tabBuf = append(w.tabBuf, e)
	return nil
}

// fillBlocks decodes candidate blocks, newest first, until one holds a
// charge the walk keeps or none is left; blkBuf holds its kept charges,
// id descending.
func (w *ledgerWalk) fillBlocks() error {
	for len(w.blkBuf) == 0 && !w.blkEnd {
		if len(w.blkIDs) == 0 {
			ok, err := w.blocks.more(func(rows *sql.Rows) error {
				var id int64
				err := rows.Scan(&id)
				w.blkIDs = append(w.blkIDs, id)
				return err
			})
			if err != nil {
				return fmt.Errorf("charge blocks: %w", err)
			}
			if !ok {
				w.blkEnd = true
				return nil
			}
		}
		id := w.blkIDs[0]
		w.blkIDs = w.blkIDs[1:]
		if err := w.readBlock(id); err != nil {
			return err
		}
	}
	return nil
}

// readBlock puts the charges of block id that the walk keeps in blkBuf,
// id descending. Its time range skips a block wholly outside the query's
// without reading its data.
func (w *ledgerWalk) readBlock(id int64) error {
	var (
		account string
		data    []byte
	)
	err := w.conn.QueryRowContext(w.ctx, `SELECT account_id, data FROM usage_blocks
		WHERE id = ? AND last_time >= ? AND first_time < ?`, id, w.since, w.until).Scan(&account, &data)
	if err == sql.ErrNoRows {
		return nil
	}
	if err != nil {
		return fmt.Errorf("charge block %d: %w", id, err)
	}
	br := newBlockReader(data, account)
	var rec blockRecord
	for br.next(&rec) {
		t := toMicros(rec.Time)
		if rec.charge.id == 0 || rec.charge.id >= w.before || t < w.since || t >= w.until {
			continue
		}
		w.blkBuf = append(w.blkBuf, chargeEntry(account, &rec))
	}
	if err := br.Err(); err != nil {
		return fmt.Errorf("charge block %d: %w", id, err)
	}
	slices.SortFunc(w.blkBuf, func(a, b store.LedgerEntry) int { return cmp.Compare(b.ID, a.ID) })
	return nil
}

// chargeEntry is the ledger entry of a block record's charge.
func chargeEntry(account string, rec *blockRecord) store.LedgerEntry {
	return store.LedgerEntry{ID: rec.charge.id, AccountID: account, Kind: store.KindCharge,
		Amount: -rec.Cost, BalanceAfter: rec.balanceAfter, Ref: rec.RequestID, Time: rec.Time, Count: 1}
}
