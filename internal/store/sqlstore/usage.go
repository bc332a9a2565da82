package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// usageChunk is the most rows of a prepared multi-row statement (the
// rollups' upserts, the ledger lookups): 200 × a few parameters stay well
// under SQLite's limit of 32766.
const usageChunk = 200

// blockMax is the most records one usage block holds; a batch's records of
// one account beyond it go into further blocks.
const blockMax = 4096

// InsertUsage writes recs in one transaction; records whose request id is
// stored already (a retried batch, a replayed journal) are skipped, so
// retrying a batch never counts a request twice. A new record with a cost
// carries its charge (charge id, balance after; see 0008_usage_charges.sql)
// and moves the account's balance and spent and the key's spent in the same
// transaction, so a charge exists exactly when its record does. The records
// go into usage blocks, one per account (usage_block.go).
func (s *Store) InsertUsage(ctx context.Context, recs []store.UsageRecord) error {
	if len(recs) == 0 {
		return nil
	}
	ctx = withUsageStmts(ctx, s.usage)
	err := s.withTx(ctx, func(tx *sql.Tx) error { return insertUsage(ctx, tx, recs) })
	return wrap("insert usage", err)
}

// AppendUsage writes recs, none of them stored yet and each request id
// once, as InsertUsage writes new records, without looking for stored ids
// (store.Usage). It is the recorder's hot path: looking a batch's ids up
// costs more than storing it, and only a retry or a replay can repeat one.
func (s *Store) AppendUsage(ctx context.Context, recs []store.UsageRecord) error {
	if len(recs) == 0 {
		return nil
	}
	ctx = withUsageStmts(ctx, s.usage)
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		b := newBatchTx(ctx, tx)
		defer b.close()
		return storeRecords(b, recs)
	})
	return wrap("append usage", err)
}

// insertUsage is InsertUsage inside tx, so other writes (FinishTask's) can
// store a record and post its charge in their own transaction.
func insertUsage(ctx context.Context, tx *sql.Tx, recs []store.UsageRecord) error {
	b := newBatchTx(ctx, tx)
	defer b.close()
	fresh, err := dropStored(b, firstOfEach(recs))
	if err != nil || len(fresh) == 0 {
		return err
	}
	return storeRecords(b, fresh)
}

// storeRecords inserts recs, none of them stored, with their charges,
// and moves balances, spent amounts, keys' last use, the ledger sequence
// and the rollups.
func storeRecords(b *batchTx, recs []store.UsageRecord) error {
	plan, err := planCharges(b, recs)
	if err != nil {
		return err
	}
	if err := insertBlocks(b, recs, plan.charges); err != nil {
		return err
	}
	if err := plan.apply(b); err != nil {
		return err
	}
	if err := updateKeys(b, recs, plan.keys); err != nil {
		return err
	}
	return addRollups(b, recs)
}

// firstOfEach returns the first record of each request id in recs.
func firstOfEach(recs []store.UsageRecord) []store.UsageRecord {
	seen := make(map[string]struct{}, len(recs))
	out := make([]store.UsageRecord, 0, len(recs))
	for _, r := range recs {
		if _, dup := seen[r.RequestID]; !dup {
			seen[r.RequestID] = struct{}{}
			out = append(out, r)
		}
	}
	return out
}

// storedIDsSQL selects the blocks of an account that can hold a record
// whose time is in [?, ?]: a record's block spans its time (first_time <=
// time <= last_time), and usage_blocks_account_last finds the account's
// blocks from the oldest time on.
const storedIDsSQL = `SELECT data FROM usage_blocks
	WHERE account_id = ? AND last_time >= ? AND first_time <= ?`

// dropStored returns recs, each request id once, without the records that
// are stored already. A stored record is in a block of its account whose
// time range holds its time, so for each account of recs it decodes the
// ids of the blocks overlapping that account's records' times: a retried
// batch or a replayed journal finds the few recent blocks it could have
// reached. There is no index of request ids: keeping one cost more per
// record than storing the record (docs/usage-records.md, "Duplicates").
func dropStored(b *batchTx, recs []store.UsageRecord) ([]store.UsageRecord, error) {
	type span struct {
		first, last int64
		ids         map[string]bool // true once found stored
	}
	var order []string
	spans := map[string]*span{}
	for _, r := range recs {
		t := toMicros(r.Time)
		sp := spans[r.AccountID]
		if sp == nil {
			sp = &span{first: t, last: t, ids: map[string]bool{}}
			spans[r.AccountID] = sp
			order = append(order, r.AccountID)
		}
		sp.first, sp.last = min(sp.first, t), max(sp.last, t)
		sp.ids[r.RequestID] = false
	}
	st, err := b.stmt(storedIDsSQL)
	if err != nil {
		return nil, err
	}
	found := 0
	for _, account := range order {
		sp := spans[account]
		n, err := findStored(b, st, account, sp.first, sp.last, sp.ids)
		if err != nil {
			return nil, fmt.Errorf("stored ids of %q: %w", account, err)
		}
		found += n
	}
	if found == 0 {
		return recs, nil
	}
	return slices.DeleteFunc(recs, func(r store.UsageRecord) bool { return spans[r.AccountID].ids[r.RequestID] }), nil
}

// findStored marks true the ids that the blocks of account overlapping
// [first, last] hold and returns how many it marked.
func findStored(b *batchTx, st *sql.Stmt, account string, first, last int64, ids map[string]bool) (int, error) {
	rows, err := st.QueryContext(b.ctx, account, first, last)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var data sql.RawBytes
		if err := rows.Scan(&data); err != nil {
			return 0, err
		}
		br := newBlockReader(data, account)
		for id, _, ok := br.skipToID(); ok; id, _, ok = br.skipToID() {
			if stored, want := ids[string(id)]; want && !stored {
				ids[string(id)] = true
				n++
			}
		}
		if err := br.Err(); err != nil {
			return 0, err
		}
	}
	return n, rows.Err()
}

// insertBlocks stores recs, none of them stored yet, as one block per
// account (more past blockMax records); charges[i] is recs[i]'s charge.
func insertBlocks(b *batchTx, recs []store.UsageRecord, charges []charge) error {
	st, err := b.stmt(blockInsertSQL)
	if err != nil {
		return err
	}
	var (
		order  []string
		groups = map[string][]int{}
		data   []byte
	)
	for i, r := range recs {
		if _, ok := groups[r.AccountID]; !ok {
			order = append(order, r.AccountID)
		}
		groups[r.AccountID] = append(groups[r.AccountID], i)
	}
	for _, account := range order {
		idx := groups[account]
		for len(idx) > 0 {
			part := idx[:min(len(idx), blockMax)]
			idx = idx[len(part):]
			h := summarize(recs, charges, part...)
			data = appendBlock(data[:0], recs, charges, part)
			if _, err := st.ExecContext(b.ctx, account, h.first, h.last, len(part), h.charges, h.charged, data, h.firstCharge()); err != nil {
				return fmt.Errorf("usage block: %w", err)
			}
		}
	}
	return nil
}

// updateKeys moves each key of recs (records stored now), in multi-row
// statements: last_used_at to the newest Time of its records, never
// backwards, and spent up by what spent adds to it. Keys go in id order
// (neighbouring rows share pages); an unknown key changes nothing.
func updateKeys(b *batchTx, recs []store.UsageRecord, spent map[string]money.Micros) error {
	newest := map[string]int64{}
	for _, r := range recs {
		if r.KeyID == "" {
			continue
		}
		if t, ok := newest[r.KeyID]; !ok || toMicros(r.Time) > t {
			newest[r.KeyID] = toMicros(r.Time)
		}
	}
	if len(newest) == 0 {
		return nil
	}
	ids := slices.Sorted(maps.Keys(newest))
	args := make([]any, 0, 3*len(ids))
	for _, id := range ids {
		args = append(args, id, spent[id], newest[id])
	}
	if err := b.execRows(func(u *usageStmts) map[int]*sql.Stmt { return u.keyUses }, keyUsesSQL, args, 3); err != nil {
		return fmt.Errorf("keys' spent and last use: %w", err)
	}
	return nil
}
