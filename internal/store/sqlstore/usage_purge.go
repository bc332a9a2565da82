package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// PurgeUsage deletes at most limit of the oldest records whose time is
// before before, in one short write transaction. It walks the blocks by
// first_time (usage_blocks_first), oldest first; a block left empty is
// deleted and one left with newer records is written again without the
// purged ones. The charges the deleted records hold move to the ledger
// table with their ids, refs and times, and usage_charged_through moves up
// to the newest deleted record, so the ledger and balances read the same
// and a deleted record stored again is not charged again.
func (s *Store) PurgeUsage(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, fmt.Errorf("sqlstore: purge usage: limit must be positive, got %d", limit)
	}
	cut := toMicros(before)
	var n int
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, account_id, first_time, data FROM usage_blocks
			WHERE first_time < ? ORDER BY first_time`, cut)
		if err != nil {
			return err
		}
		var gone []blockRecord
		w := blockWalk{keep: func(r *blockRecord) bool { return toMicros(r.Time) < cut }}
		if err := w.run(rows, func(r blockRecord) bool {
			gone = append(gone, r)
			return len(gone) < limit
		}); err != nil {
			return err
		}
		if len(gone) == 0 {
			return nil
		}
		if err := moveCharges(ctx, tx, gone); err != nil {
			return err
		}
		n = len(gone)
		return rewriteBlocks(ctx, tx, gone)
	})
	if err != nil {
		return 0, wrap("purge usage", err)
	}
	return n, nil
}

// moveCharges posts the charges of gone, records being deleted, to the
// ledger table and moves usage_charged_through to the newest of them.
func moveCharges(ctx context.Context, tx *sql.Tx, gone []blockRecord) error {
	newest := toMicros(gone[0].Time)
	for _, r := range gone {
		newest = max(newest, toMicros(r.Time))
		if r.charge.id == 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO ledger
			(id, account_id, kind, amount, balance_after, ref, note, created_at) VALUES (?, ?, 'charge', ?, ?, ?, '', ?)`,
			r.charge.id, r.AccountID, -r.Cost, r.balanceAfter, r.RequestID, toMicros(r.Time)); err != nil {
			return fmt.Errorf("move charge of %s: %w", r.RequestID, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE usage_charged_through SET through = ? WHERE through < ?`, newest, newest); err != nil {
		return fmt.Errorf("charged through: %w", err)
	}
	return nil
}

// rewriteBlocks deletes gone's records from their blocks: a block left
// empty is deleted, any other written again with the records it keeps.
func rewriteBlocks(ctx context.Context, tx *sql.Tx, gone []blockRecord) error {
	drop := map[int64]map[string]bool{}
	for _, r := range gone {
		if drop[r.block] == nil {
			drop[r.block] = map[string]bool{}
		}
		drop[r.block][r.RequestID] = true
	}
	for id, ids := range drop {
		var (
			account string
			data    []byte
		)
		if err := tx.QueryRowContext(ctx, `SELECT account_id, data FROM usage_blocks WHERE id = ?`, id).Scan(&account, &data); err != nil {
			return fmt.Errorf("block %d: %w", id, err)
		}
		var (
			keep    []store.UsageRecord
			charges []charge
			rec     blockRecord
		)
		br := newBlockReader(data, account)
		for br.next(&rec) {
			if !ids[rec.RequestID] {
				keep, charges = append(keep, rec.UsageRecord), append(charges, rec.charge)
			}
		}
		if err := br.Err(); err != nil {
			return fmt.Errorf("block %d: %w", id, err)
		}
		if len(keep) == 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM usage_blocks WHERE id = ?`, id); err != nil {
				return fmt.Errorf("delete block %d: %w", id, err)
			}
			continue
		}
		h := summarize(keep, charges)
		if _, err := tx.ExecContext(ctx, `UPDATE usage_blocks SET first_time = ?, last_time = ?, records = ?,
			charges = ?, charged = ?, data = ?, first_charge = ? WHERE id = ?`,
			h.first, h.last, len(keep), h.charges, h.charged, appendBlock(nil, keep, charges, h.idx), h.firstCharge(), id); err != nil {
			return fmt.Errorf("rewrite block %d: %w", id, err)
		}
	}
	return nil
}

// blockSummary is what a block's row says about its records.
type blockSummary struct {
	first, last int64        // oldest and newest time
	charges     int64        // records with a charge
	charged     money.Micros // the sum of their charges
	minCharge   int64        // the smallest charge id (0: none)
	idx         []int        // the records' indexes
}

// firstCharge is the block's first_charge column (0017): its smallest
// charge id, NULL when it holds no charge.
func (h blockSummary) firstCharge() sql.NullInt64 {
	return sql.NullInt64{Int64: h.minCharge, Valid: h.minCharge != 0}
}

// summarize returns the summary of the block of recs[i] for i in idx, or
// of all of recs when idx is nil.
func summarize(recs []store.UsageRecord, charges []charge, idx ...int) blockSummary {
	if idx == nil {
		idx = make([]int, len(recs))
		for i := range idx {
			idx[i] = i
		}
	}
	h := blockSummary{first: toMicros(recs[idx[0]].Time), idx: idx}
	h.last = h.first
	for _, i := range idx {
		t := toMicros(recs[i].Time)
		h.first, h.last = min(h.first, t), max(h.last, t)
		if charges[i].id != 0 {
			h.charges++
			h.charged += recs[i].Cost
			if h.minCharge == 0 || charges[i].id < h.minCharge {
				h.minCharge = charges[i].id
			}
		}
	}
	return h
}
