package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// The state predicates and the rank of the stored state, spelled exactly as
// the partial indexes of migration 0004 spell them so the planner uses them.
// taskRank must agree with store.TaskState.Rank.
const (
	taskOpen  = `state IN ('pending', 'processing')`
	taskFinal = `state IN ('completed', 'failed')`
	taskRank  = `CASE state WHEN 'pending' THEN 1 WHEN 'processing' THEN 2 ELSE 3 END`
)

// taskColumns lists every column of video_tasks in scanTask's order.
const taskColumns = `id, account_id, key_id, request_id, model, provider, upstream_model,
	upstream_id, upstream_ref, prompt, size, seconds, upstream_seconds, state, progress, error,
	price, ratio_ppm, held, cost, content_key, content_type, content_size, created_at,
	started_at, finished_at, expires_at, deadline, next_poll_at, polls, lease_owner,
	lease_until, updated_at`

const selectTask = `SELECT ` + taskColumns + ` FROM video_tasks`

// CreateTask inserts t as a pending task (an empty State is taken as
// pending; any other is refused); store.ErrConflict on a taken ID and
// store.ErrNotFound when its account does not exist.
func (s *Store) CreateTask(ctx context.Context, t store.VideoTask) error {
	if t.State == "" {
		t.State = store.TaskPending
	}
	if t.State != store.TaskPending {
		return fmt.Errorf("sqlstore: create task %q: state %q, want %q", t.ID, t.State, store.TaskPending)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO video_tasks (`+taskColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.AccountID, t.KeyID, t.RequestID, t.Model, t.Provider, t.UpstreamModel,
		t.UpstreamID, t.UpstreamRef, t.Prompt, t.Size, t.Seconds, t.UpstreamSeconds, string(t.State),
		t.Progress, t.Error, t.Price, t.RatioPPM, t.Held, t.Cost, t.ContentKey, t.ContentType,
		t.ContentSize, toMicros(t.CreatedAt), toNullMicros(t.StartedAt), toNullMicros(t.FinishedAt),
		toMicros(t.ExpiresAt), toMicros(t.Deadline), toMicros(t.NextPollAt), t.Polls, t.LeaseOwner,
		toNullMicros(t.LeaseUntil), toMicros(t.UpdatedAt))
	return wrap(fmt.Sprintf("create task %q", t.ID), err)
}

// TaskByID returns a task; store.ErrNotFound when there is none.
func (s *Store) TaskByID(ctx context.Context, id string) (store.VideoTask, error) {
	t, err := scanTask(s.db.QueryRowContext(ctx, selectTask+` WHERE id = ?`, id))
	if err != nil {
		return store.VideoTask{}, wrap(fmt.Sprintf("task by id %q", id), err)
	}
	return t, nil
}

// ListTasks returns a page of p.AccountID's tasks ordered by (created_at,
// id), newest first unless p.Asc, from the index video_tasks_account_created.
// p.After is a cursor: the page starts after that task, which must be the
// account's (store.ErrNotFound otherwise). Limit must be positive; its upper
// bound (100) is the callers' to enforce, as video.Service asks for one task
// more than a page to learn whether another follows.
func (s *Store) ListTasks(ctx context.Context, p store.TaskPage) ([]store.VideoTask, error) {
	op := fmt.Sprintf("list tasks of %q", p.AccountID)
	if p.Limit < 1 {
		return nil, fmt.Errorf("sqlstore: %s: limit must be positive, got %d", op, p.Limit)
	}
	q := selectTask + ` WHERE account_id = ?`
	args := []any{p.AccountID}
	if !p.Since.IsZero() {
		q += ` AND created_at >= ?`
		args = append(args, toMicros(p.Since))
	}
	cmp, order := `<`, `DESC`
	if p.Asc {
		cmp, order = `>`, `ASC`
	}
	if p.After != "" {
		var created int64
		err := s.db.QueryRowContext(ctx, `SELECT created_at FROM video_tasks WHERE id = ? AND account_id = ?`,
			p.After, p.AccountID).Scan(&created)
		if err != nil {
			return nil, wrap(fmt.Sprintf("%s after %q", op, p.After), err)
		}
		q += ` AND (created_at, id) ` + cmp + ` (?, ?)`
		args = append(args, created, p.After)
	}
	q += ` ORDER BY created_at ` + order + `, id ` + order + ` LIMIT ?`
	args = append(args, p.Limit)
	out, err := videoTasks.query(ctx, s.db, q, args...)
	if err != nil {
		return nil, wrap(op, err)
	}
	return out, nil
}

// videoTasks is video_tasks for the queries leased tables share.
var videoTasks = leased[store.VideoTask]{table: "video_tasks", open: taskOpen, columns: taskColumns, scan: scanTask,
	order: func(t store.VideoTask) (time.Time, string) { return t.NextPollAt, t.ID }}

// ClaimTasks leases up to limit due open tasks whose lease is free or ended
// to owner until now+lease, earliest NextPollAt first (see leased.claim).
func (s *Store) ClaimTasks(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]store.VideoTask, error) {
	return videoTasks.claim(ctx, s, fmt.Sprintf("claim tasks for %q", owner), owner, now, lease, limit)
}

// UpdateTask stores a poll's result and ends the lease. The WHERE clause
// holds the whole rule (open, rank not lower, owner leases it), so no
// read-then-write race can break it; an owner of "" updates only a task
// nobody leases.
func (s *Store) UpdateTask(ctx context.Context, owner string, t store.VideoTask) error {
	op := fmt.Sprintf("update task %q", t.ID)
	if !t.State.Valid() || t.State.Final() {
		return fmt.Errorf("sqlstore: %s: state %q is not an open state (FinishTask ends a task)", op, t.State)
	}
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE video_tasks SET state = ?, progress = ?, upstream_ref = ?,
			started_at = ?, next_poll_at = ?, polls = ?, updated_at = ?, lease_owner = '', lease_until = NULL
			WHERE id = ? AND `+taskOpen+` AND `+taskRank+` <= ? AND lease_owner = ?`,
			string(t.State), t.Progress, t.UpstreamRef, toNullMicros(t.StartedAt), toMicros(t.NextPollAt),
			t.Polls, toMicros(t.UpdatedAt), t.ID, t.State.Rank(), owner)
		if err != nil {
			return err
		}
		return changedOrConflict(ctx, tx, res, t.ID, owner, true, t.State)
	})
	return wrap(op, err)
}

// FinishTask moves an open task to its final state, ends the lease and
// stores rec exactly as InsertUsage does, in one transaction. UpdatedAt is
// t.UpdatedAt, or t.FinishedAt when that is zero.
func (s *Store) FinishTask(ctx context.Context, owner string, t store.VideoTask, rec *store.UsageRecord) error {
	op := fmt.Sprintf("finish task %q", t.ID)
	if !t.State.Final() {
		return fmt.Errorf("sqlstore: %s: state %q is not final", op, t.State)
	}
	updated := t.UpdatedAt
	if updated.IsZero() {
		updated = t.FinishedAt
	}
	q := `UPDATE video_tasks SET state = ?, finished_at = ?, progress = ?, error = ?, cost = ?,
		content_key = ?, content_type = ?, content_size = ?, updated_at = ?, lease_owner = '', lease_until = NULL
		WHERE id = ? AND ` + taskOpen + ` AND ` + taskRank + ` <= ?`
	args := []any{string(t.State), toNullMicros(t.FinishedAt), t.Progress, t.Error, t.Cost,
		t.ContentKey, t.ContentType, t.ContentSize, toMicros(updated), t.ID, t.State.Rank()}
	if owner != "" {
		q += ` AND lease_owner = ?`
		args = append(args, owner)
	}
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if err := changedOrConflict(ctx, tx, res, t.ID, owner, owner != "", t.State); err != nil {
			return err
		}
		if rec == nil {
			return nil
		}
		return insertUsage(ctx, tx, []store.UsageRecord{*rec})
	})
	return wrap(op, err)
}

// ExpiredTasks returns up to limit final tasks created before before,
// oldest first, from the index video_tasks_final_created.
func (s *Store) ExpiredTasks(ctx context.Context, before time.Time, limit int) ([]store.VideoTask, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("sqlstore: expired tasks: limit must be positive, got %d", limit)
	}
	out, err := videoTasks.query(ctx, s.db, selectTask+` WHERE `+taskFinal+` AND created_at < ?
		ORDER BY created_at, id LIMIT ?`, toMicros(before), limit)
	if err != nil {
		return nil, wrap("expired tasks", err)
	}
	return out, nil
}

// DeleteTask removes a final task; store.ErrConflict when it is open,
// store.ErrNotFound when there is none.
func (s *Store) DeleteTask(ctx context.Context, id string) error {
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM video_tasks WHERE id = ? AND `+taskFinal, id)
		if err != nil {
			return err
		}
		return changedOrConflict(ctx, tx, res, id, "", false, "")
	})
	return wrap(fmt.Sprintf("delete task %q", id), err)
}

// changedOrConflict returns nil when res changed a row. Otherwise it looks
// at the task (in the same transaction, so what it sees is why the guarded
// statement matched nothing) and returns store.ErrNotFound when there is
// none, or store.ErrConflict saying which rule refused the change.
func changedOrConflict(ctx context.Context, tx *sql.Tx, res sql.Result, id, owner string, checkOwner bool, to store.TaskState) error {
	n, err := res.RowsAffected()
	if err != nil || n > 0 {
		return err
	}
	var state, leaseOwner string
	err = tx.QueryRowContext(ctx, `SELECT state, lease_owner FROM video_tasks WHERE id = ?`, id).Scan(&state, &leaseOwner)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("task: %w", store.ErrNotFound)
	}
	if err != nil {
		return err
	}
	from := store.TaskState(state)
	switch {
	case to == "": // DeleteTask, which only matches final tasks
		return fmt.Errorf("task is still %s: %w", from, store.ErrConflict)
	case from.Final():
		return fmt.Errorf("task is already %s: %w", from, store.ErrConflict)
	case to.Rank() < from.Rank():
		return fmt.Errorf("task cannot move back from %s to %s: %w", from, to, store.ErrConflict)
	case checkOwner && leaseOwner != owner:
		return fmt.Errorf("task is leased by %q, not %q: %w", leaseOwner, owner, store.ErrConflict)
	}
	return fmt.Errorf("task changed concurrently: %w", store.ErrConflict)
}

// scanTask reads one row of taskColumns.
func scanTask(r scanner) (store.VideoTask, error) {
	var (
		t                                         store.VideoTask
		state                                     string
		created, expires, deadline, next, updated int64
		started, finished, leaseUntil             sql.NullInt64
	)
	if err := r.Scan(&t.ID, &t.AccountID, &t.KeyID, &t.RequestID, &t.Model, &t.Provider,
		&t.UpstreamModel, &t.UpstreamID, &t.UpstreamRef, &t.Prompt, &t.Size, &t.Seconds,
		&t.UpstreamSeconds, &state, &t.Progress, &t.Error, &t.Price, &t.RatioPPM, &t.Held, &t.Cost,
		&t.ContentKey, &t.ContentType, &t.ContentSize, &created, &started, &finished, &expires,
		&deadline, &next, &t.Polls, &t.LeaseOwner, &leaseUntil, &updated); err != nil {
		return store.VideoTask{}, err
	}
	t.State = store.TaskState(state)
	t.CreatedAt = fromMicros(created)
	t.StartedAt = fromNullMicros(started)
	t.FinishedAt = fromNullMicros(finished)
	t.ExpiresAt = fromMicros(expires)
	t.Deadline = fromMicros(deadline)
	t.NextPollAt = fromMicros(next)
	t.LeaseUntil = fromNullMicros(leaseUntil)
	t.UpdatedAt = fromMicros(updated)
	return t, nil
}
