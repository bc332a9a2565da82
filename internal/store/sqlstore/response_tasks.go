package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// The status predicates and the rank of the stored status, spelled exactly
// as the partial indexes of migration 0013 spell them so the planner uses
// them. respRank must agree with store.ResponseStatus.Rank.
const (
	respOpen  = `status IN ('queued', 'in_progress')`
	respFinal = `status IN ('completed', 'failed', 'incomplete', 'cancelled')`
	respRank  = `CASE status WHEN 'queued' THEN 1 WHEN 'in_progress' THEN 2 ELSE 3 END`
)

// respColumns lists every column of response_tasks in scanResponseTask's
// order.
const respColumns = `id, account_id, key_id, request_id, model, provider, upstream_model, status,
	error, input_price, cached_input_price, output_price, ratio_ppm, held, cost, prompt_estimate, terms,
	created_at, finished_at, deadline, next_poll_at, polls, lease_owner, lease_until, updated_at`

// CreateResponseTask inserts t as an open task; store.ErrConflict on a
// taken ID and store.ErrNotFound when its account does not exist.
func (s *Store) CreateResponseTask(ctx context.Context, t store.ResponseTask) error {
	if !t.Status.Valid() || t.Status.Final() {
		return fmt.Errorf("sqlstore: create response task %q: status %q is not an open status", t.ID, t.Status)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO response_tasks (`+respColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.AccountID, t.KeyID, t.RequestID, t.Model, t.Provider, t.UpstreamModel, string(t.Status),
		t.Error, t.InputPrice, t.CachedInputPrice, t.OutputPrice, t.RatioPPM, t.Held, t.Cost, t.PromptEstimate, t.Terms,
		toMicros(t.CreatedAt), toNullMicros(t.FinishedAt), toMicros(t.Deadline), toMicros(t.NextPollAt),
		t.Polls, t.LeaseOwner, toNullMicros(t.LeaseUntil), toMicros(t.UpdatedAt))
	return wrap(fmt.Sprintf("create response task %q", t.ID), err)
}

// ResponseTaskByID returns a task; store.ErrNotFound when there is none.
func (s *Store) ResponseTaskByID(ctx context.Context, id string) (store.ResponseTask, error) {
	t, err := scanResponseTask(s.db.QueryRowContext(ctx, `SELECT `+respColumns+` FROM response_tasks WHERE id = ?`, id))
	if err != nil {
		return store.ResponseTask{}, wrap(fmt.Sprintf("response task by id %q", id), err)
	}
	return t, nil
}

// responseTasks is response_tasks for the queries leased tables share.
var responseTasks = leased[store.ResponseTask]{table: "response_tasks", open: respOpen, columns: respColumns,
	scan: scanResponseTask, order: func(t store.ResponseTask) (time.Time, string) { return t.NextPollAt, t.ID }}

// ClaimResponseTasks leases up to limit due open tasks whose lease is free
// or ended to owner until now+lease, earliest NextPollAt first, as
// ClaimTasks does.
func (s *Store) ClaimResponseTasks(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]store.ResponseTask, error) {
	return responseTasks.claim(ctx, s, fmt.Sprintf("claim response tasks for %q", owner), owner, now, lease, limit)
}

// UpdateResponseTask stores a poll's result and ends the lease. The WHERE
// clause holds the whole rule (open, rank not lower, owner leases it).
func (s *Store) UpdateResponseTask(ctx context.Context, owner string, t store.ResponseTask) error {
	op := fmt.Sprintf("update response task %q", t.ID)
	if !t.Status.Valid() || t.Status.Final() {
		return fmt.Errorf("sqlstore: %s: status %q is not an open status (FinishResponseTask ends a task)", op, t.Status)
	}
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE response_tasks SET status = ?, next_poll_at = ?, polls = ?,
			updated_at = ?, lease_owner = '', lease_until = NULL
			WHERE id = ? AND `+respOpen+` AND `+respRank+` <= ? AND lease_owner = ?`,
			string(t.Status), toMicros(t.NextPollAt), t.Polls, toMicros(t.UpdatedAt), t.ID, t.Status.Rank(), owner)
		if err != nil {
			return err
		}
		return respChangedOrConflict(ctx, tx, res, t.ID, owner, true, t.Status)
	})
	return wrap(op, err)
}

// FinishResponseTask moves an open task to its final status, ends the
// lease and stores rec exactly as InsertUsage does, in one transaction.
// UpdatedAt is t.UpdatedAt, or t.FinishedAt when that is zero.
func (s *Store) FinishResponseTask(ctx context.Context, owner string, t store.ResponseTask, rec *store.UsageRecord) error {
	op := fmt.Sprintf("finish response task %q", t.ID)
	if !t.Status.Final() {
		return fmt.Errorf("sqlstore: %s: status %q is not final", op, t.Status)
	}
	updated := t.UpdatedAt
	if updated.IsZero() {
		updated = t.FinishedAt
	}
	q := `UPDATE response_tasks SET status = ?, finished_at = ?, error = ?, cost = ?, updated_at = ?,
		lease_owner = '', lease_until = NULL
		WHERE id = ? AND ` + respOpen
	args := []any{string(t.Status), toNullMicros(t.FinishedAt), t.Error, t.Cost, toMicros(updated), t.ID}
	if owner != "" {
		q += ` AND lease_owner = ?`
		args = append(args, owner)
	}
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if err := respChangedOrConflict(ctx, tx, res, t.ID, owner, owner != "", t.Status); err != nil {
			return err
		}
		if rec == nil {
			return nil
		}
		return insertUsage(ctx, tx, []store.UsageRecord{*rec})
	})
	return wrap(op, err)
}

// PurgeResponseTasks deletes up to limit final tasks created before
// before, oldest first, from the index response_tasks_final_created.
func (s *Store) PurgeResponseTasks(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, fmt.Errorf("sqlstore: purge response tasks: limit must be positive, got %d", limit)
	}
	var n int64
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM response_tasks WHERE id IN (SELECT id FROM response_tasks
			WHERE `+respFinal+` AND created_at < ? ORDER BY created_at, id LIMIT ?)`, toMicros(before), limit)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, wrap("purge response tasks", err)
	}
	return int(n), nil
}

// respChangedOrConflict returns nil when res changed a row; otherwise it
// looks at the task in the same transaction and returns store.ErrNotFound
// or store.ErrConflict saying which rule refused the change.
func respChangedOrConflict(ctx context.Context, tx *sql.Tx, res sql.Result, id, owner string, checkOwner bool, to store.ResponseStatus) error {
	n, err := res.RowsAffected()
	if err != nil || n > 0 {
		return err
	}
	var status, leaseOwner string
	err = tx.QueryRowContext(ctx, `SELECT status, lease_owner FROM response_tasks WHERE id = ?`, id).Scan(&status, &leaseOwner)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("response task: %w", store.ErrNotFound)
	}
	if err != nil {
		return err
	}
	from := store.ResponseStatus(status)
	switch {
	case from.Final():
		return fmt.Errorf("response task is already %s: %w", from, store.ErrConflict)
	case to.Rank() < from.Rank():
		return fmt.Errorf("response task cannot move back from %s to %s: %w", from, to, store.ErrConflict)
	case checkOwner && leaseOwner != owner:
		return fmt.Errorf("response task is leased by %q, not %q: %w", leaseOwner, owner, store.ErrConflict)
	}
	return fmt.Errorf("response task changed concurrently: %w", store.ErrConflict)
}

// scanResponseTask reads one row of respColumns.
func scanResponseTask(r scanner) (store.ResponseTask, error) {
	var (
		t                                store.ResponseTask
		status                           string
		created, deadline, next, updated int64
		finished, leaseUntil             sql.NullInt64
	)
	if err := r.Scan(&t.ID, &t.AccountID, &t.KeyID, &t.RequestID, &t.Model, &t.Provider, &t.UpstreamModel,
		&status, &t.Error, &t.InputPrice, &t.CachedInputPrice, &t.OutputPrice, &t.RatioPPM, &t.Held, &t.Cost,
		&t.PromptEstimate, &t.Terms, &created, &finished, &deadline, &next, &t.Polls, &t.LeaseOwner, &leaseUntil,
		&updated); err != nil {
		return store.ResponseTask{}, err
	}
	t.Status = store.ResponseStatus(status)
	t.CreatedAt = fromMicros(created)
	t.FinishedAt = fromNullMicros(finished)
	t.Deadline = fromMicros(deadline)
	t.NextPollAt = fromMicros(next)
	t.LeaseUntil = fromNullMicros(leaseUntil)
	t.UpdatedAt = fromMicros(updated)
	return t, nil
}
