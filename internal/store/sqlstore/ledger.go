package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

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

// charge is a usage record's charge: its ledger entry id (0: the record
// charges nothing) and the account's balance after it.
type charge struct {
	id           int64
	balanceAfter money.Micros
}

// chargePlan holds a batch's charges, one per record, and the balance,
// spent and key spent updates they add up to: one per account and key,
// since a batch holds many requests of few payers.
type chargePlan struct {
	charges []charge
	accts   map[string]*debit
	order   []string                // accts' ids, in first-charge order
	keys    map[string]money.Micros // what the batch adds to each key's spent
	lastID  int64                   // the ledger sequence after the batch; 0: no charge
}

// debit is an account's balance after a batch's charges and what they add
// to its spent amount.
type debit struct {
	balance, spent money.Micros
	found          bool // the account exists (its balance was read)
}

// planCharges works out the charges of recs, records stored now: one for
// each record with a cost and an account, unless the ledger table already
// holds it (see postedCharges). Ids continue the ledger's sequence and
// balances run in record order; inside the write transaction (BEGIN
// IMMEDIATE) nothing else moves either, so both are exact. The accounts'
// balances are read with multi-row statements first.
func planCharges(b *batchTx, recs []store.UsageRecord) (*chargePlan, error) {
	p := &chargePlan{charges: make([]charge, len(recs))}
	posted, err := postedCharges(b, recs)
	if err != nil {
		return nil, err
	}
	charged := func(r *store.UsageRecord) bool { return r.Cost != 0 && r.AccountID != "" && !posted[r.RequestID] }
	for i := range recs {
		if r := &recs[i]; charged(r) && p.accts[r.AccountID] == nil {
			if p.accts == nil {
				p.accts, p.keys = map[string]*debit{}, map[string]money.Micros{}
			}
			p.accts[r.AccountID] = &debit{}
			p.order = append(p.order, r.AccountID)
		}
	}
	if len(p.order) == 0 {
		return p, nil
	}
	if err := readBalances(b, p); err != nil {
		return nil, err
	}
	seq, err := b.stmt(ledgerSeqSQL)
	if err != nil {
		return nil, err
	}
	if err := seq.QueryRowContext(b.ctx).Scan(&p.lastID); err != nil {
		return nil, fmt.Errorf("ledger sequence: %w", err)
	}
	for i := range recs {
		r := &recs[i]
		if !charged(r) {
			continue
		}
		a := p.accts[r.AccountID]
		if !a.found {
			return nil, fmt.Errorf("charge %s: account %q: %w", r.RequestID, r.AccountID, sql.ErrNoRows)
		}
		a.balance -= r.Cost
		a.spent += r.Cost
		p.lastID++
		p.charges[i] = charge{id: p.lastID, balanceAfter: a.balance}
		if r.KeyID != "" {
			p.keys[r.KeyID] += r.Cost
		}
	}
	return p, nil
}

// readBalances reads the balances of p's accounts, in chunks.
func readBalances(b *batchTx, p *chargePlan) error {
	ids := make([]any, len(p.order))
	for i, id := range p.order {
		ids[i] = id
	}
	err := b.queryRows(func(u *usageStmts) map[int]*sql.Stmt { return u.balances }, balancesSQL, ids, func(rows *sql.Rows) error {
		var (
			id      string
			balance money.Micros
		)
		if err := rows.Scan(&id, &balance); err != nil {
			return err
		}
		if a := p.accts[id]; a != nil {
			a.balance, a.found = balance, true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("balances: %w", err)
	}
	return nil
}

// postedCharges returns which of recs have a charge in the ledger table
// already: records stored again after PurgeUsage deleted them (a crash
// journal replayed long after the fact), whose charge PurgeUsage moved to
// the ledger, or charged before 0008. Such a record is stored again but
// must not be charged twice. Only records no newer than
// usage_charged_through can be among them, so a batch of new requests
// looks nothing up.
func postedCharges(b *batchTx, recs []store.UsageRecord) (map[string]bool, error) {
	st, err := b.stmt(chargedThruSQL)
	if err != nil {
		return nil, err
	}
	var through int64
	if err := st.QueryRowContext(b.ctx).Scan(&through); err != nil {
		return nil, fmt.Errorf("charged through: %w", err)
	}
	var ids []any
	for _, r := range recs {
		if r.Cost != 0 && r.AccountID != "" && toMicros(r.Time) <= through {
			ids = append(ids, r.RequestID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return b.lookupIDs(func(u *usageStmts) map[int]*sql.Stmt { return u.posted }, postedSQL, ids)
}

// apply writes the plan's balances, accounts' spent amounts (multi-row
// statements, in the accounts' id order) and the ledger sequence;
// updateKeys writes the keys' spent amounts.
func (p *chargePlan) apply(b *batchTx) error {
	if p.lastID == 0 || len(p.order) == 0 {
		return nil
	}
	ids := slices.Sorted(slices.Values(p.order))
	args := make([]any, 0, 3*len(ids))
	for _, id := range ids {
		a := p.accts[id]
		args = append(args, id, a.balance, a.spent)
	}
	if err := b.execRows(func(u *usageStmts) map[int]*sql.Stmt { return u.debits }, debitsSQL, args, 3); err != nil {
		return fmt.Errorf("debit accounts: %w", err)
	}
	seq, err := b.stmt(setLedgerSeqSQL)
	if err != nil {
		return err
	}
	res, err := seq.ExecContext(b.ctx, p.lastID)
	if err != nil {
		return fmt.Errorf("ledger sequence: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("ledger sequence: %d rows updated, %v", n, err)
	}
	return nil
}

// ListLedger returns an account's entries, oldest first: those of the
// ledger table and the charges its usage records hold
// (0008_usage_charges.sql), which share one id space.
func (s *Store) ListLedger(ctx context.Context, accountID string) ([]store.LedgerEntry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, account_id, kind, amount, balance_after,
		COALESCE(ref, ''), note, created_at FROM ledger WHERE account_id = ? ORDER BY id`, accountID)
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
		e.Kind, e.Time, e.Count = store.LedgerKind(kind), fromMicros(at), 1
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list ledger", err)
	}
	charges, err := s.usageCharges(ctx, accountID)
	if err != nil {
		return nil, wrap("list ledger", err)
	}
	if len(charges) > 0 {
		out = append(out, charges...)
		slices.SortFunc(out, func(a, b store.LedgerEntry) int { return cmp.Compare(a.ID, b.ID) })
	}
	return out, nil
}

// usageCharges returns the charges that accountID's usage records hold, as
// ledger entries.
func (s *Store) usageCharges(ctx context.Context, accountID string) ([]store.LedgerEntry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, data FROM usage_blocks WHERE account_id = ? AND charges > 0`, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.LedgerEntry
	for rows.Next() {
		var (
			id   int64
			data sql.RawBytes
			rec  blockRecord
		)
		if err := rows.Scan(&id, &data); err != nil {
			return nil, err
		}
		br := newBlockReader(data, accountID)
		for br.next(&rec) {
			if rec.charge.id != 0 {
				out = append(out, chargeEntry(accountID, &rec))
			}
		}
		if err := br.Err(); err != nil {
			return nil, fmt.Errorf("block %d: %w", id, err)
		}
	}
	return out, rows.Err()
}

// LedgerSum is the sum of an account's entries, those of the ledger table
// and the charges its usage records hold.
func (s *Store) LedgerSum(ctx context.Context, accountID string) (money.Micros, error) {
	var sum money.Micros
	err := s.db.QueryRowContext(ctx, `SELECT
		(SELECT COALESCE(SUM(amount), 0) FROM ledger WHERE account_id = ?) -
		(SELECT COALESCE(SUM(charged), 0) FROM usage_blocks WHERE account_id = ?)`,
		accountID, accountID).Scan(&sum)
	return sum, wrap("ledger sum", err)
}
