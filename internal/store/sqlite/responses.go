package sqlite

import (
	"context"
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
		return fmt.Errorf("sqlite: save response owner: empty id or account")
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
		return fmt.Errorf("sqlite: save response owner %q: owned by another account: %w", id, store.ErrConflict)
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
