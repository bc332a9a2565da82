package sqlstore

import (
	"cmp"
	"container/heap"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/internal/store"
)

// blockWalk reads the records of usage blocks in one order across blocks:
// newest first (ties: request id descending) from blocks read by last_time
// descending, or oldest first (ties: request id ascending) from blocks read
// by first_time ascending. Blocks of different batches overlap in time, so
// the records read wait in a heap until no block still to come can hold one
// that goes before them: newest first, a record is final once its time is
// after the next block's last_time.
//
// With a limit, a block's records beyond the ones that can still be visited
// never enter the heap: of a block's kept records only its own first
// (limit − visited) in the walk's order can be among the next ones visited.
// A page of 50 pushes at most 100 records of a block instead of ~1024
// (under twice that many, all are pushed: cheaper than choosing).
type blockWalk struct {
	desc  bool
	keep  func(*blockRecord) bool // nil: every record
	limit int                     // visit stops after this many; 0: no limit
	h     recordHeap

	block   []blockRecord // the current block's kept records
	order   []int32       // indexes into block, for choosing its first ones
	visited int
}

// run reads rows (block id, account, bound, data; ordered by the bound,
// last_time descending or first_time ascending) and calls visit with each
// kept record in order until it returns false. It closes rows.
func (w *blockWalk) run(rows *sql.Rows, visit func(blockRecord) bool) error {
	defer rows.Close()
	w.h.desc = w.desc
	for rows.Next() {
		var (
			id, bound int64
			account   string
			data      sql.RawBytes
		)
		if err := rows.Scan(&id, &account, &bound, &data); err != nil {
			return err
		}
		if !w.emit(visit, func(t int64) bool { return w.desc && t > bound || !w.desc && t < bound }) {
			return nil
		}
		if err := w.read(id, account, data); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	w.emit(visit, func(int64) bool { return true })
	return nil
}

// read decodes a block and pushes its kept records, with a limit only the
// first of them that can still be visited.
func (w *blockWalk) read(id int64, account string, data []byte) error {
	br := newBlockReader(data, account)
	w.block = w.block[:0]
	var rec blockRecord
	for br.next(&rec) {
		if w.keep == nil || w.keep(&rec) {
			rec.block = id
			w.block = append(w.block, rec)
		}
	}
	if err := br.Err(); err != nil {
		return fmt.Errorf("block %d: %w", id, err)
	}
	need := w.limit - w.visited
	if w.limit <= 0 || len(w.block) <= 2*need { // pushing them all is cheaper than choosing
		for i := range w.block {
			heap.Push(&w.h, w.block[i])
		}
		return nil
	}
	w.order = w.order[:0]
	for i := range w.block {
		w.order = append(w.order, int32(i))
	}
	sign := 1
	if w.desc {
		sign = -1
	}
	slices.SortFunc(w.order, func(a, b int32) int {
		ra, rb := &w.block[a], &w.block[b]
		if c := cmp.Compare(toMicros(ra.Time), toMicros(rb.Time)); c != 0 {
			return sign * c
		}
		return sign * strings.Compare(ra.RequestID, rb.RequestID)
	})
	for _, i := range w.order[:need] {
		heap.Push(&w.h, w.block[i])
	}
	return nil
}

// emit passes on, in order, the waiting records whose time final accepts;
// false once visit has had enough.
func (w *blockWalk) emit(visit func(blockRecord) bool, final func(t int64) bool) bool {
	for w.h.Len() > 0 && final(toMicros(w.h.recs[0].Time)) {
		w.visited++
		if !visit(heap.Pop(&w.h).(blockRecord)) {
			return false
		}
	}
	return true
}

// recordHeap orders records by (time, request id), the first descending
// when desc.
type recordHeap struct {
	recs []blockRecord
	desc bool
}

func (h *recordHeap) Len() int { return len(h.recs) }
func (h *recordHeap) Less(i, j int) bool {
	a, b := &h.recs[i], &h.recs[j]
	if h.desc {
		a, b = b, a
	}
	return a.Time.Before(b.Time) || a.Time.Equal(b.Time) && a.RequestID < b.RequestID
}
func (h *recordHeap) Swap(i, j int) { h.recs[i], h.recs[j] = h.recs[j], h.recs[i] }
func (h *recordHeap) Push(x any)    { h.recs = append(h.recs, x.(blockRecord)) }
func (h *recordHeap) Pop() any {
	last := h.recs[len(h.recs)-1]
	h.recs = h.recs[:len(h.recs)-1]
	return last
}

// ListUsage returns the records f selects, newest first (ties broken by
// request ID, descending), at most f.Limit of them when it is positive.
// f.After continues that order: records strictly after the cursor. The
// account and the time window select blocks through their indexes; the
// other filters are applied to the decoded records.
func (s *Store) ListUsage(ctx context.Context, f store.UsageFilter) ([]store.UsageRecord, error) {
	var (
		where []string
		args  []any
	)
	switch f.Status {
	case store.UsageAny, store.UsageOK, store.UsageError:
	default:
		return nil, fmt.Errorf("sqlstore: list usage: unknown status filter %q", f.Status)
	}
	if f.AccountID != "" {
		where, args = append(where, `account_id = ?`), append(args, f.AccountID)
	}
	since, until := toMicros(f.Since), toMicros(f.Until)
	if !f.Since.IsZero() {
		where, args = append(where, `last_time >= ?`), append(args, since)
	}
	if !f.Until.IsZero() {
		where, args = append(where, `first_time < ?`), append(args, until)
	}
	after := !f.After.Time.IsZero() || f.After.RequestID != ""
	afterAt := toMicros(f.After.Time)
	if after {
		where, args = append(where, `first_time <= ?`), append(args, afterAt)
	}
	q := `SELECT id, account_id, last_time, data FROM usage_blocks`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY last_time DESC`, args...)
	if err != nil {
		return nil, wrap("list usage", err)
	}
	keep := func(r *blockRecord) bool {
		t := toMicros(r.Time)
		switch {
		case !f.Since.IsZero() && t < since, !f.Until.IsZero() && t >= until,
			f.Model != "" && r.Model != f.Model, f.KeyID != "" && r.KeyID != f.KeyID,
			f.Status == store.UsageOK && r.Status >= 400, f.Status == store.UsageError && r.Status < 400,
			after && (t > afterAt || t == afterAt && r.RequestID >= f.After.RequestID):
			return false
		}
		return true
	}
	var out []store.UsageRecord
	w := blockWalk{desc: true, keep: keep, limit: max(f.Limit, 0)}
	err = w.run(rows, func(r blockRecord) bool {
		out = append(out, r.UsageRecord)
		return f.Limit <= 0 || len(out) < f.Limit
	})
	if err != nil {
		return nil, wrap("list usage", err)
	}
	return out, nil
}
