package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// selectAccount reads an account with the holds of its open video tasks
// and background responses, summed in the same statement (one snapshot
// with balance and spent) from the covering partial indexes
// video_tasks_open_account and response_tasks_open_account.
const selectAccount = `SELECT id, name, created_at, balance, spent,
	(SELECT COALESCE(SUM(t.held), 0) FROM video_tasks t
	 WHERE t.account_id = accounts.id AND t.state IN ('pending', 'processing')) +
	(SELECT COALESCE(SUM(r.held), 0) FROM response_tasks r
	 WHERE r.account_id = accounts.id AND r.status IN ('queued', 'in_progress')),
	disabled_at, admin
	FROM accounts`

// CreateAccount inserts a; store.ErrConflict when its ID or name is taken.
func (s *Store) CreateAccount(ctx context.Context, a store.Account) error {
	return wrap("create account", insertAccount(ctx, s.db, a))
}

// execer is what both *sql.DB and *sql.Tx offer, so inserts can run either
// on their own or inside Bootstrap's transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// insertAccount inserts a through e.
func insertAccount(ctx context.Context, e execer, a store.Account) error {
	_, err := e.ExecContext(ctx,
		`INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)`,
		a.ID, a.Name, toMicros(a.CreatedAt))
	return err
}

// AccountByName finds an account by its unique name; store.ErrNotFound if none.
func (s *Store) AccountByName(ctx context.Context, name string) (store.Account, error) {
	a, err := scanAccount(s.db.QueryRowContext(ctx, selectAccount+` WHERE name = ?`, name))
	if err != nil {
		return store.Account{}, wrap(fmt.Sprintf("account by name %q", name), err)
	}
	return a, nil
}

// AccountByID finds an account by ID; store.ErrNotFound if none.
func (s *Store) AccountByID(ctx context.Context, id string) (store.Account, error) {
	a, err := scanAccount(s.accountByID.QueryRowContext(ctx, id))
	if err != nil {
		return store.Account{}, wrap(fmt.Sprintf("account by id %q", id), err)
	}
	return a, nil
}

// ListAccounts lists every account, oldest first.
func (s *Store) ListAccounts(ctx context.Context) ([]store.Account, error) {
	rows, err := s.db.QueryContext(ctx, selectAccount+` ORDER BY created_at, id`)
	if err != nil {
		return nil, wrap("list accounts", err)
	}
	defer rows.Close()
	var out []store.Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, wrap("list accounts", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list accounts", err)
	}
	return out, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

// scanAccount reads one row of selectAccount.
func scanAccount(r scanner) (store.Account, error) {
	var (
		a        store.Account
		created  int64
		disabled sql.NullInt64
	)
	if err := r.Scan(&a.ID, &a.Name, &created, &a.Balance, &a.Spent, &a.Held, &disabled, &a.Admin); err != nil {
		return store.Account{}, err
	}
	a.CreatedAt, a.DisabledAt = fromMicros(created), fromNullMicros(disabled)
	return a, nil
}

// SetAccountDisabled disables the account at at (a later call moves the
// time), or enables it when at is zero; store.ErrNotFound when it does not
// exist.
func (s *Store) SetAccountDisabled(ctx context.Context, id string, at time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE accounts SET disabled_at = ? WHERE id = ?`,
		toNullMicros(at), id)
	return wrap(fmt.Sprintf("set account %q disabled", id), mustAffect(res, err))
}

// SetAccountAdmin grants or takes the console's admin role;
// store.ErrNotFound when the account does not exist.
func (s *Store) SetAccountAdmin(ctx context.Context, id string, admin bool) error {
	res, err := s.db.ExecContext(ctx, `UPDATE accounts SET admin = ? WHERE id = ?`, admin, id)
	return wrap(fmt.Sprintf("set account %q admin", id), mustAffect(res, err))
}
