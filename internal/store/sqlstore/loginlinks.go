package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// One-time console sign-in links (store.LoginLink).

const loginLinkColumns = `id, hash, account, created_at, expires_at, used_at`

// scanLoginLink reads one row of loginLinkColumns.
func scanLoginLink(r scanner) (store.LoginLink, error) {
	var (
		l                store.LoginLink
		created, expires int64
		used             sql.NullInt64
	)
	if err := r.Scan(&l.ID, &l.Hash, &l.Account, &created, &expires, &used); err != nil {
		return store.LoginLink{}, err
	}
	l.CreatedAt, l.ExpiresAt, l.UsedAt = fromMicros(created), fromMicros(expires), fromNullMicros(used)
	return l, nil
}

// CreateLoginLink stores l unused (UsedAt is not stored); store.ErrConflict
// on a taken ID or hash.
func (s *Store) CreateLoginLink(ctx context.Context, l store.LoginLink) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO login_links (id, hash, account, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?)`, l.ID, l.Hash, l.Account, toMicros(l.CreatedAt), toMicros(l.ExpiresAt))
	return wrap(fmt.Sprintf("create login link %q", l.ID), err)
}

// UseLoginLink marks the unused, unexpired link used at at and returns it;
// see store.Console. The one conditional UPDATE makes it single use: of
// racing calls only one finds the link unused. A used link is ErrConflict
// even when it has expired since.
func (s *Store) UseLoginLink(ctx context.Context, hash []byte, at time.Time) (store.LoginLink, error) {
	var l store.LoginLink
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		var err error
		l, err = scanLoginLink(tx.QueryRowContext(ctx, `UPDATE login_links SET used_at = ?
			WHERE hash = ? AND used_at IS NULL AND expires_at > ?
			RETURNING `+loginLinkColumns, toMicros(at), hash, toMicros(at)))
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		// Unknown (ErrNotFound from the scan), used or expired.
		if l, err = scanLoginLink(tx.QueryRowContext(ctx, `SELECT `+loginLinkColumns+`
			FROM login_links WHERE hash = ?`, hash)); err != nil {
			return err
		}
		if !l.UsedAt.IsZero() {
			return fmt.Errorf("login link %q was used: %w", l.ID, store.ErrConflict)
		}
		return fmt.Errorf("login link %q expired: %w", l.ID, store.ErrNotFound)
	})
	if err != nil {
		return store.LoginLink{}, wrap("use login link", err)
	}
	return l, nil
}
