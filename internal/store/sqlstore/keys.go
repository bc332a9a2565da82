package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/store"
)

// selectKey reads a key together with its account's name and state and
// the holds of its open video tasks and background responses, summed in
// the same statement (one snapshot with spent) from the covering partial
// indexes video_tasks_open_key and response_tasks_open_key.
const selectKey = `SELECT k.id, k.account_id, a.name, k.group_name, k.name, k.prefix,
	k.hash, k.created_at, k.revoked_at, k.expires_at, k.spend_cap, k.rpm, k.tpm, k.concurrency, k.spent,
	(SELECT COALESCE(SUM(t.held), 0) FROM video_tasks t
	 WHERE t.key_id = k.id AND t.state IN ('pending', 'processing')) +
	(SELECT COALESCE(SUM(r.held), 0) FROM response_tasks r
	 WHERE r.key_id = k.id AND r.status IN ('queued', 'in_progress')),
	k.last_used_at, a.disabled_at IS NOT NULL, k.disabled_at
	FROM api_keys k JOIN accounts a ON a.id = k.account_id`

// minPrefixRef is the shortest ref RevokeKey matches against key prefixes;
// shorter refs only match IDs, so a typo cannot select half the keys.
const minPrefixRef = 4

// CreateKey inserts k; store.ErrConflict on a duplicate ID or hash and
// store.ErrNotFound when its account does not exist.
func (s *Store) CreateKey(ctx context.Context, k store.Key) error {
	return wrap("create key", insertKey(ctx, s.db, k))
}

// insertKey inserts k through e (k.AccountName is ignored).
func insertKey(ctx context.Context, e execer, k store.Key) error {
	_, err := e.ExecContext(ctx, `INSERT INTO api_keys
		(id, account_id, group_name, name, prefix, hash, created_at, revoked_at, expires_at, spend_cap,
		rpm, tpm, concurrency, disabled_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.AccountID, k.Group, k.Name, k.Prefix, k.Hash,
		toMicros(k.CreatedAt), toNullMicros(k.RevokedAt), toNullMicros(k.ExpiresAt), k.SpendCap,
		k.Limits.RPM, k.Limits.TPM, k.Limits.Concurrency, toNullMicros(k.DisabledAt))
	return err
}

// KeyByHash finds a key, revoked or not, by the SHA-256 of its secret with
// one lookup on the unique hash index.
func (s *Store) KeyByHash(ctx context.Context, hash []byte) (store.Key, error) {
	k, err := scanKey(s.keyByHash.QueryRowContext(ctx, hash))
	if err != nil {
		return store.Key{}, wrap("key by hash", err)
	}
	return k, nil
}

// KeysVersion reads the number migration 0011's triggers move with every
// change that can make a key stop authenticating; see store.Keys.
func (s *Store) KeysVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.keysVersion.QueryRowContext(ctx).Scan(&v); err != nil {
		return 0, wrap("keys version", err)
	}
	return v, nil
}

// KeyByID finds a key by ID; store.ErrNotFound if none.
func (s *Store) KeyByID(ctx context.Context, id string) (store.Key, error) {
	k, err := scanKey(s.keyByID.QueryRowContext(ctx, id))
	if err != nil {
		return store.Key{}, wrap(fmt.Sprintf("key by id %q", id), err)
	}
	return k, nil
}

// ListKeys lists all keys, revoked ones included, oldest first.
func (s *Store) ListKeys(ctx context.Context) ([]store.Key, error) {
	return s.listKeys(ctx, "list keys", selectKey+` ORDER BY k.created_at, k.id`)
}

// KeysOf lists accountID's keys, revoked ones included, oldest first,
// through the api_keys_account index.
func (s *Store) KeysOf(ctx context.Context, accountID string) ([]store.Key, error) {
	return s.listKeys(ctx, fmt.Sprintf("keys of %q", accountID),
		selectKey+` WHERE k.account_id = ? ORDER BY k.created_at, k.id`, accountID)
}

// listKeys runs a selectKey query and scans every row.
func (s *Store) listKeys(ctx context.Context, what, q string, args ...any) ([]store.Key, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrap(what, err)
	}
	defer rows.Close()
	var out []store.Key
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, wrap(what, err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(what, err)
	}
	return out, nil
}

// RevokeKey revokes the one key whose ID equals ref or whose prefix starts
// with ref (case-sensitively, refs of at least minPrefixRef bytes). A key
// revoked before keeps its first revocation time.
func (s *Store) RevokeKey(ctx context.Context, ref string, at time.Time) (store.Key, error) {
	if at.IsZero() {
		return store.Key{}, fmt.Errorf("sqlstore: revoke key %q: zero revocation time", ref)
	}
	var k store.Key
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		id, err := resolveKeyRef(ctx, tx, ref)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx,
			`UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`,
			toMicros(at), id); err != nil {
			return err
		}
		k, err = scanKey(tx.QueryRowContext(ctx, selectKey+` WHERE k.id = ?`, id))
		return err
	})
	if err != nil {
		return store.Key{}, wrap(fmt.Sprintf("revoke key %q", ref), err)
	}
	return k, nil
}

// SetKeyLimits replaces the rate limits of the key ref designates.
func (s *Store) SetKeyLimits(ctx context.Context, ref string, l store.KeyLimits) (store.Key, error) {
	if l.RPM < 0 || l.TPM < 0 || l.Concurrency < 0 {
		return store.Key{}, fmt.Errorf("sqlstore: set limits of key %q: negative limit %+v", ref, l)
	}
	var k store.Key
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		id, err := resolveKeyRef(ctx, tx, ref)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET rpm = ?, tpm = ?, concurrency = ? WHERE id = ?`,
			l.RPM, l.TPM, l.Concurrency, id); err != nil {
			return err
		}
		k, err = scanKey(tx.QueryRowContext(ctx, selectKey+` WHERE k.id = ?`, id))
		return err
	})
	if err != nil {
		return store.Key{}, wrap(fmt.Sprintf("set limits of key %q", ref), err)
	}
	return k, nil
}

// resolveKeyRef returns the ID of the single key ref designates.
func resolveKeyRef(ctx context.Context, tx *sql.Tx, ref string) (string, error) {
	q := `SELECT id FROM api_keys WHERE id = ?`
	args := []any{ref}
	if len(ref) >= minPrefixRef {
		// LIKE narrows the candidates; the substr comparison makes the match
		// case-sensitive, as SQLite's LIKE ignores ASCII case.
		q += ` OR (prefix LIKE ? ESCAPE '\' AND substr(prefix, 1, ?) = ?)`
		args = append(args, escapeLike(ref)+"%", utf8.RuneCountInString(ref), ref)
	}
	rows, err := tx.QueryContext(ctx, q+` LIMIT 2`, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return "", err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	switch len(ids) {
	case 0:
		return "", store.ErrNotFound
	case 1:
		return ids[0], nil
	default:
		return "", store.ErrAmbiguous
	}
}

// escapeLike makes s match itself literally in a LIKE pattern with ESCAPE '\'.
func escapeLike(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '\\' || r == '%' || r == '_' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// scanKey reads one row of selectKey.
func scanKey(r scanner) (store.Key, error) {
	var (
		k        store.Key
		created  int64
		revoked  sql.NullInt64
		expires  sql.NullInt64
		lastUsed sql.NullInt64
		disabled sql.NullInt64
	)
	if err := r.Scan(&k.ID, &k.AccountID, &k.AccountName, &k.Group, &k.Name, &k.Prefix,
		&k.Hash, &created, &revoked, &expires, &k.SpendCap,
		&k.Limits.RPM, &k.Limits.TPM, &k.Limits.Concurrency, &k.Spent, &k.Held,
		&lastUsed, &k.AccountDisabled, &disabled); err != nil {
		return store.Key{}, err
	}
	k.LastUsedAt = fromNullMicros(lastUsed)
	k.ExpiresAt = fromNullMicros(expires)
	k.CreatedAt = fromMicros(created)
	k.RevokedAt = fromNullMicros(revoked)
	k.DisabledAt = fromNullMicros(disabled)
	return k, nil
}
