package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// PutReveal stores sealed under id until expires, deleting the reveals
// that expired before at; see store.Console.
func (s *Store) PutReveal(ctx context.Context, id string, sealed []byte, at, expires time.Time) error {
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM console_reveals WHERE expires_at <= ?`, toMicros(at)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO console_reveals (id, sealed, expires_at) VALUES (?, ?, ?)`,
			id, sealed, toMicros(expires))
		return err
	})
	return wrap(fmt.Sprintf("put reveal %q", id), err)
}

// TakeReveal deletes the reveal id and returns it unless it expired at at;
// see store.Console. The one DELETE makes it single use.
func (s *Store) TakeReveal(ctx context.Context, id string, at time.Time) ([]byte, error) {
	var (
		sealed  []byte
		expires int64
	)
	err := s.db.QueryRowContext(ctx, `DELETE FROM console_reveals WHERE id = ? RETURNING sealed, expires_at`, id).
		Scan(&sealed, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("reveal %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, wrap(fmt.Sprintf("take reveal %q", id), err)
	}
	if toMicros(at) >= expires {
		return nil, fmt.Errorf("reveal %q expired: %w", id, store.ErrNotFound)
	}
	return sealed, nil
}
