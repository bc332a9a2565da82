package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// SaveResponseOwner records that accountID created the response id. The
// same pair saved again is a no-op; another account's id is
// store.ErrConflict. Owners never change, so the insert and the check of
// an existing row need no common transaction.
func (s *Store) SaveResponseOwner(ctx context.Context, id, accountID string, at time.Time) error {
	if id == "" || accountID == "" {
		return fmt.Errorf("sqlstore: save response owner: empty id or account")
	}
	res, err := s.db.ExecContext(ctx,
		`INSERT INTO response_owners (id, account_id, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		id, accountID, toMicros(at))
	if err != nil {
		return wrap(fmt.Sprintf("save response owner %q", id), err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return wrap(fmt.Sprintf("save response owner %q", id), err)
	} else if n == 1 {
		return nil
	}
	owner, err := s.ResponseOwner(ctx, id)
	if err != nil {
		return err
	}
	if owner != accountID {
		return fmt.Errorf("sqlstore: save response owner %q: owned by another account: %w", id, store.ErrConflict)
	}
	return nil
}

// ResponseOwner returns the account that created the response id;
// store.ErrNotFound when it was never saved.
func (s *Store) ResponseOwner(ctx context.Context, id string) (string, error) {
	var owner string
	err := s.db.QueryRowContext(ctx, `SELECT account_id FROM response_owners WHERE id = ?`, id).Scan(&owner)
	if err != nil {
		return "", wrap(fmt.Sprintf("response owner %q", id), err)
	}
	return owner, nil
}

// SaveResponse records r: its owner as SaveResponseOwner does, its bound,
// and its size when known. A second save by the owner keeps the bound and
// fills a size not recorded yet.
func (s *Store) SaveResponse(ctx context.Context, r store.StoredResponse) error {
	if r.ID == "" || r.AccountID == "" {
		return fmt.Errorf("sqlstore: save response: empty id or account")
	}
	var in, out any
	if r.Sized {
		in, out = r.InputTokens, r.OutputTokens
	}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO response_owners (id, account_id, created_at, bound, input_tokens, output_tokens) VALUES (?, ?, ?, ?, ?, ?)
		 ON CONFLICT (id) DO UPDATE SET
		   input_tokens = COALESCE(response_owners.input_tokens, excluded.input_tokens),
		   output_tokens = COALESCE(response_owners.output_tokens, excluded.output_tokens)
		 WHERE response_owners.account_id = excluded.account_id`,
		r.ID, r.AccountID, toMicros(r.CreatedAt), r.Bound, in, out)
	if err != nil {
		return wrap(fmt.Sprintf("save response %q", r.ID), err)
	}
	owner, err := s.ResponseOwner(ctx, r.ID)
	if err != nil {
		return err
	}
	if owner != r.AccountID {
		return fmt.Errorf("sqlstore: save response %q: owned by another account: %w", r.ID, store.ErrConflict)
	}
	return nil
}

// SizeResponses records the vendor's counts of saved responses in one
// transaction; ids never saved are skipped.
func (s *Store) SizeResponses(ctx context.Context, sizes []store.ResponseSize) error {
	if len(sizes) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return wrap("size responses", err)
	}
	defer func() { _ = tx.Rollback() }()
	stmt, err := tx.PrepareContext(ctx, `UPDATE response_owners SET input_tokens = ?, output_tokens = ? WHERE id = ?`)
	if err != nil {
		return wrap("size responses", err)
	}
	defer func() { _ = stmt.Close() }()
	for _, z := range sizes {
		if _, err := stmt.ExecContext(ctx, z.InputTokens, z.OutputTokens, z.ID); err != nil {
			return wrap(fmt.Sprintf("size response %q", z.ID), err)
		}
	}
	return wrap("size responses", tx.Commit())
}

// StoredResponse returns what was recorded of the response id.
func (s *Store) StoredResponse(ctx context.Context, id string) (store.StoredResponse, error) {
	r := store.StoredResponse{ID: id}
	var created int64
	var in, out sql.NullInt64
	err := s.db.QueryRowContext(ctx,
		`SELECT account_id, created_at, bound, input_tokens, output_tokens FROM response_owners WHERE id = ?`, id).
		Scan(&r.AccountID, &created, &r.Bound, &in, &out)
	if err != nil {
		return store.StoredResponse{}, wrap(fmt.Sprintf("stored response %q", id), err)
	}
	r.CreatedAt = fromMicros(created)
	if in.Valid && out.Valid {
		r.Sized, r.InputTokens, r.OutputTokens = true, in.Int64, out.Int64
	}
	return r, nil
}
