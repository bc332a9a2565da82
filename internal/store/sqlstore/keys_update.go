package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// UpdateKey applies u to the key id of accountID ("" = any account) in one
// write transaction; see store.Keys. The columns it sets that
// authentication reads (spend_cap, expires_at, disabled_at) move
// keys_version through the api_keys_changed trigger (0017); a rename alone
// does not.
func (s *Store) UpdateKey(ctx context.Context, accountID, id string, u store.KeyUpdate, at time.Time) (store.Key, error) {
	what := fmt.Sprintf("update key %q", id)
	if u.SpendCap != nil && *u.SpendCap < 0 {
		return store.Key{}, fmt.Errorf("sqlstore: %s: negative spend cap %d", what, *u.SpendCap)
	}
	if u.Disabled != nil && *u.Disabled && at.IsZero() {
		return store.Key{}, fmt.Errorf("sqlstore: %s: zero time to disable at", what)
	}
	var sets []string
	var args []any
	if u.Name != nil {
		sets, args = append(sets, `name = ?`), append(args, *u.Name)
	}
	if u.SpendCap != nil {
		sets, args = append(sets, `spend_cap = ?`), append(args, *u.SpendCap)
	}
	if u.ExpiresAt != nil {
		sets, args = append(sets, `expires_at = ?`), append(args, toNullMicros(*u.ExpiresAt))
	}
	if u.Disabled != nil {
		if *u.Disabled {
			sets, args = append(sets, `disabled_at = COALESCE(disabled_at, ?)`), append(args, toMicros(at))
		} else {
			sets = append(sets, `disabled_at = NULL`)
		}
	}
	var k store.Key
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		var (
			owner   string
			revoked sql.NullInt64
		)
		err := tx.QueryRowContext(ctx, `SELECT account_id, revoked_at FROM api_keys WHERE id = ?`, id).Scan(&owner, &revoked)
		if errors.Is(err, sql.ErrNoRows) || err == nil && accountID != "" && owner != accountID {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if revoked.Valid {
			return fmt.Errorf("key is revoked: %w", store.ErrConflict)
		}
		if len(sets) > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET `+strings.Join(sets, `, `)+` WHERE id = ?`,
				append(args, id)...); err != nil {
				return err
			}
		}
		k, err = scanKey(tx.QueryRowContext(ctx, selectKey+` WHERE k.id = ?`, id))
		return err
	})
	if err != nil {
		return store.Key{}, wrap(what, err)
	}
	return k, nil
}
