package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
)

// leased describes a table of tasks that workers lease (video_tasks,
// response_tasks), for the queries they share.
type leased[T any] struct {
	table   string                   // the table
	open    string                   // SQL condition of a task not ended yet
	columns string                   // the columns scan reads
	scan    func(scanner) (T, error) // reads one row of columns
	order   func(T) (time.Time, string)
}

// querier is what both *sql.DB and *sql.Tx offer for queries.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// query runs q, which returns l.columns, and scans every row.
func (l leased[T]) query(ctx context.Context, db querier, q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		t, err := l.scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// claim leases up to limit due open tasks whose lease is free or ended to
// owner until now+lease, earliest next poll first. One UPDATE inside a
// write transaction (BEGIN IMMEDIATE) picks and leases them, so concurrent
// claimers, in this process or another, queue and never share a task. On
// PostgreSQL the inner SELECT also locks the rows it picks, skipping any a
// statement outside the write lock (a task's update) holds.
func (l leased[T]) claim(ctx context.Context, s *Store, op, owner string, now time.Time, lease time.Duration, limit int) ([]T, error) {
	switch {
	case owner == "":
		return nil, fmt.Errorf("sqlstore: %s: empty owner", op)
	case lease <= 0:
		return nil, fmt.Errorf("sqlstore: %s: lease %v must be positive", op, lease)
	case limit <= 0:
		return nil, fmt.Errorf("sqlstore: %s: limit must be positive, got %d", op, limit)
	}
	var out []T
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = l.query(ctx, tx, `UPDATE `+l.table+` SET lease_owner = ?, lease_until = ?
			WHERE id IN (SELECT id FROM `+l.table+`
				WHERE `+l.open+` AND next_poll_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
				ORDER BY next_poll_at, id LIMIT ? /*pg:FOR UPDATE SKIP LOCKED*/)
			RETURNING `+l.columns,
			owner, toMicros(now.Add(lease)), toMicros(now), toMicros(now), limit)
		return err
	})
	if err != nil {
		return nil, wrap(op, err)
	}
	// RETURNING promises no order.
	slices.SortFunc(out, func(a, b T) int {
		at, aid := l.order(a)
		bt, bid := l.order(b)
		if c := at.Compare(bt); c != 0 {
			return c
		}
		return strings.Compare(aid, bid)
	})
	return out, nil
}
