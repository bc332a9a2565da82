package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// This file holds the console's sign-in records (identities, sessions) and
// the webhook event log; console_money.go holds top-ups and codes.

const selectIdentity = `SELECT provider, subject, account_id, login, email, created_at, last_seen_at
	FROM identities`

// insertIdentity inserts id through e.
func insertIdentity(ctx context.Context, e execer, id store.Identity) error {
	_, err := e.ExecContext(ctx, `INSERT INTO identities
		(provider, subject, account_id, login, email, created_at, last_seen_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id.Provider, id.Subject, id.AccountID, id.Login, id.Email,
		toMicros(id.CreatedAt), toNullMicros(id.LastSeenAt))
	return err
}

// scanIdentity reads one row of selectIdentity.
func scanIdentity(r scanner) (store.Identity, error) {
	var (
		id       store.Identity
		created  int64
		lastSeen sql.NullInt64
	)
	if err := r.Scan(&id.Provider, &id.Subject, &id.AccountID, &id.Login, &id.Email, &created, &lastSeen); err != nil {
		return store.Identity{}, err
	}
	id.CreatedAt, id.LastSeenAt = fromMicros(created), fromNullMicros(lastSeen)
	return id, nil
}

// IdentityByKey returns the identity of provider and subject;
// store.ErrNotFound when there is none.
func (s *Store) IdentityByKey(ctx context.Context, provider, subject string) (store.Identity, error) {
	id, err := scanIdentity(s.db.QueryRowContext(ctx, selectIdentity+` WHERE provider = ? AND subject = ?`,
		provider, subject))
	if err != nil {
		return store.Identity{}, wrap(fmt.Sprintf("identity %s/%s", provider, subject), err)
	}
	return id, nil
}

// SignUp creates a and id in one transaction; store.ErrConflict when the
// account (ID or name) or the identity exists, and then neither is stored.
// id.AccountID may be empty (a.ID is used) but must not name another account.
func (s *Store) SignUp(ctx context.Context, a store.Account, id store.Identity) error {
	op := fmt.Sprintf("sign up %q with %s/%s", a.Name, id.Provider, id.Subject)
	if id.AccountID != "" && id.AccountID != a.ID {
		return fmt.Errorf("sqlstore: %s: identity names account %q, not %q", op, id.AccountID, a.ID)
	}
	id.AccountID = a.ID
	return wrap(op, s.withTx(ctx, func(tx *sql.Tx) error {
		if err := insertAccount(ctx, tx, a); err != nil {
			return err
		}
		return insertIdentity(ctx, tx, id)
	}))
}

// LinkIdentity adds id to its account; store.ErrConflict when the identity
// exists (whichever account it belongs to), store.ErrNotFound when the
// account does not.
func (s *Store) LinkIdentity(ctx context.Context, id store.Identity) error {
	return wrap(fmt.Sprintf("link %s/%s to %q", id.Provider, id.Subject, id.AccountID),
		insertIdentity(ctx, s.db, id))
}

// TouchIdentity records a sign-in: LastSeenAt, Login and Email;
// store.ErrNotFound when the identity does not exist.
func (s *Store) TouchIdentity(ctx context.Context, id store.Identity) error {
	op := fmt.Sprintf("touch identity %s/%s", id.Provider, id.Subject)
	res, err := s.db.ExecContext(ctx, `UPDATE identities SET last_seen_at = ?, login = ?, email = ?
		WHERE provider = ? AND subject = ?`,
		toNullMicros(id.LastSeenAt), id.Login, id.Email, id.Provider, id.Subject)
	return wrap(op, mustAffect(res, err))
}

// mustAffect turns an Exec that changed no row into sql.ErrNoRows.
func mustAffect(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return sql.ErrNoRows
	}
	return nil
}

// ListIdentities lists an account's identities, oldest first.
func (s *Store) ListIdentities(ctx context.Context, accountID string) ([]store.Identity, error) {
	rows, err := s.db.QueryContext(ctx, selectIdentity+` WHERE account_id = ?
		ORDER BY created_at, provider, subject`, accountID)
	if err != nil {
		return nil, wrap("list identities", err)
	}
	defer rows.Close()
	var out []store.Identity
	for rows.Next() {
		id, err := scanIdentity(rows)
		if err != nil {
			return nil, wrap("list identities", err)
		}
		out = append(out, id)
	}
	return out, wrap("list identities", rows.Err())
}

// CreateSession stores sess; store.ErrConflict on a taken ID or hash,
// store.ErrNotFound when its account does not exist.
func (s *Store) CreateSession(ctx context.Context, sess store.Session) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO sessions
		(id, hash, account_id, role, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		sess.ID, sess.Hash, sess.AccountID, sess.Role, sess.CSRF,
		toMicros(sess.CreatedAt), toMicros(sess.ExpiresAt))
	return wrap(fmt.Sprintf("create session %q", sess.ID), err)
}

// SessionByHash finds a session by the hash of its secret, expired or not;
// store.ErrNotFound when there is none.
func (s *Store) SessionByHash(ctx context.Context, hash []byte) (store.Session, error) {
	var (
		sess             store.Session
		created, expires int64
	)
	err := s.db.QueryRowContext(ctx, `SELECT id, hash, account_id, role, csrf, created_at, expires_at
		FROM sessions WHERE hash = ?`, hash).Scan(&sess.ID, &sess.Hash, &sess.AccountID, &sess.Role,
		&sess.CSRF, &created, &expires)
	if err != nil {
		return store.Session{}, wrap("session by hash", err)
	}
	sess.CreatedAt, sess.ExpiresAt = fromMicros(created), fromMicros(expires)
	return sess, nil
}

// DeleteSession deletes a session; a missing one is no error.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	return wrap(fmt.Sprintf("delete session %q", id), err)
}

// PurgeSessions deletes the sessions that expired before before.
func (s *Store) PurgeSessions(ctx context.Context, before time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at < ?`, toMicros(before))
	if err != nil {
		return 0, wrap("purge sessions", err)
	}
	n, err := res.RowsAffected()
	return int(n), wrap("purge sessions", err)
}

// RecordEvent remembers a webhook event; false when it was recorded before.
func (s *Store) RecordEvent(ctx context.Context, provider, eventID string, at time.Time) (bool, error) {
	op := fmt.Sprintf("record event %s/%s", provider, eventID)
	res, err := s.db.ExecContext(ctx, `INSERT INTO webhook_events (provider, event_id, received_at)
		VALUES (?, ?, ?) ON CONFLICT (provider, event_id) DO NOTHING`, provider, eventID, toMicros(at))
	if err != nil {
		return false, wrap(op, err)
	}
	n, err := res.RowsAffected()
	return n == 1, wrap(op, err)
}
