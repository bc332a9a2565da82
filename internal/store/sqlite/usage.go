package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
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
// go into usage blocks, one per account (usage_block.go), and their ids
// into usage_ids.
func (s *Store) InsertUsage(ctx context.Context, recs []store.UsageRecord) error {
	if len(recs) == 0 {
		return nil
	}
	ctx = withUsageStmts(ctx, s.usage)
	err := s.withTx(ctx, func(tx *sql.Tx) error { return insertUsage(ctx, tx, recs) })
	return wrap("insert usage", err)
}

// insertUsage is InsertUsage inside tx, so other writes (FinishTask's) can
// store a record and post its charge in their own transaction.
//
// Almost every batch is new requests only, so it is stored as it is, and
// the request ids are looked up only when that hits one already stored (a
// retried batch, a replayed journal): then the attempt is rolled back to
// its savepoint and the batch stored again without the stored ids.
func insertUsage(ctx context.Context, tx *sql.Tx, recs []store.UsageRecord) error {
	b := newBatchTx(ctx, tx)
	defer b.close()
	fresh := firstOfEach(recs)
	err := b.savepoint(func() error { return storeRecords(b, fresh) })
	if !isDuplicate(err) {
		return err
	}
	if fresh, err = dropStored(b, fresh); err != nil || len(fresh) == 0 {
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
	if err := insertIDs(b, recs); err != nil {
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

// isDuplicate reports whether err is a unique or primary key violation.
func isDuplicate(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code()
	return code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || code == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// dropStored returns recs without the records whose request id
// usage_ids holds.
func dropStored(b *batchTx, recs []store.UsageRecord) ([]store.UsageRecord, error) {
	stored, err := b.lookupIDs(func(u *usageStmts) map[int]*sql.Stmt { return u.stored }, storedSQL, requestIDs(recs))
	if err != nil || len(stored) == 0 {
		return recs, err
	}
	return slices.DeleteFunc(recs, func(r store.UsageRecord) bool { return stored[r.RequestID] }), nil
}

// insertIDs adds the request ids of recs, none of them stored yet, to
// usage_ids with multi-row statements; an id stored already fails the
// statement (isDuplicate).
func insertIDs(b *batchTx, recs []store.UsageRecord) error {
	ids := requestIDs(recs)
	return inChunks(len(ids), func(lo, hi int) error {
		st, err := b.multi(func(u *usageStmts) map[int]*sql.Stmt { return u.ids }, idsSQL, hi-lo)
		if err == nil {
			_, err = st.ExecContext(b.ctx, ids[lo:hi]...)
		}
		return err
	})
}

// requestIDs returns the request ids of recs as statement arguments.
func requestIDs(recs []store.UsageRecord) []any {
	ids := make([]any, len(recs))
	for i, r := range recs {
		ids[i] = r.RequestID
	}
	return ids
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
			if _, err := st.ExecContext(b.ctx, account, h.first, h.last, len(part), h.charges, h.charged, data); err != nil {
				return fmt.Errorf("usage block: %w", err)
			}
		}
	}
	return nil
}

// updateKeys moves each key of recs (records stored now) in one
// statement: last_used_at to the newest Time of its records, never
// backwards, and spent up by what spent adds to it.
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
	update, err := b.stmt(keyUseSQL)
	if err != nil {
		return err
	}
	for id, t := range newest {
		if _, err := update.ExecContext(b.ctx, spent[id], t, t, id); err != nil {
			return fmt.Errorf("key %q: %w", id, err)
		}
	}
	return nil
}
