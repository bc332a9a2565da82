// Package sqlstore is the SQL implementation of store.Store, for two
// databases: SQLite, embedded through the pure-Go driver modernc.org/sqlite
// so modelgate stays a single static binary (OpenSQLite), and PostgreSQL
// through pgx for several replicas sharing one database (OpenPostgres).
// Both run the same queries, written in SQLite's dialect and rewritten on
// the PostgreSQL connection (pgQuery), and pass one conformance suite
// (storetest).
//
// An SQLite database runs in WAL mode with a busy timeout, so the server and
// CLI commands (modelgate keys create, ...) can use the same file at the
// same time. Every write transaction starts with BEGIN IMMEDIATE, which
// makes concurrent writers queue on the busy timeout instead of failing
// with SQLITE_BUSY when a read lock would have to be upgraded. On
// PostgreSQL every write transaction first takes one transaction-level
// advisory lock, the same guarantee: write transactions run one at a time,
// across all replicas, and see each other's results.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/modelgate/modelgate/internal/store"
)

// busyTimeout is how long a connection waits for another connection's (or
// process's) write lock before giving up with SQLITE_BUSY.
const busyTimeout = 5 * time.Second

// maxOpenConns bounds the pool: SQLite serialises writers anyway, and a few
// connections are enough to keep readers off the writer's back.
const maxOpenConns = 4

// Store is a store.Store backed by one SQLite database file.
type Store struct {
	db *sql.DB
	// Prepared once, for the request path: KeyByHash authenticates a key
	// the gateway has not cached; AccountByID and KeyByID refresh the
	// balances and spend caps billing reserves against (parsing the
	// query was two thirds of a read's CPU); KeysVersion revalidates
	// the keys the gateway has cached.
	keyByHash, keyByID, accountByID, keysVersion *sql.Stmt
	usage                                        *usageStmts // prepared once: InsertUsage's and AppendUsage's statements
	log                                          *slog.Logger
	pg                                           bool // PostgreSQL (OpenPostgres), else SQLite
}

var _ store.Store = (*Store)(nil)

// Option configures Open.
type Option func(*Store)

// WithLogger sets where Open reports long work (moving usage records of an
// older schema into blocks); by default it reports nothing.
func WithLogger(l *slog.Logger) Option {
	return func(s *Store) { s.log = l }
}

// Open opens (creating it and its directory if needed) the database at path
// and brings its schema up to date, so callers get a ready-to-use store.
func OpenSQLite(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlstore: open: empty path")
	}
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("sqlstore: open %q: path must not contain '?'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlstore: open: create directory: %w", err)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("sqlstore: open %q: %w", path, err)
	}
	db.SetMaxOpenConns(maxOpenConns)
	db.SetMaxIdleConns(maxOpenConns)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)

	s := &Store{db: db, log: discardLog()}
	for _, o := range opts {
		o(s)
	}
	if err := s.init(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("sqlstore: open %q: %w", path, err)
	}
	return s, nil
}

// discardLog is the logger of a Store given none.
func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// dsn builds the data source name. The pragmas travel as _pragma parameters
// so that every connection the pool opens gets them, not just the first.
func dsn(path string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Add("_pragma", "cache_size(-16384)")
	q.Set("_txlock", "immediate")
	return path + "?" + q.Encode()
}

// init checks the connection, migrates the schema and prepares hot statements.
func (s *Store) init(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	if err := migrate(ctx, s.db, s.pg); err != nil {
		return err
	}
	if !s.pg { // PostgreSQL's history starts after usage_records was replaced
		if err := s.convertLegacyUsage(ctx); err != nil {
			return err
		}
	}
	for _, p := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&s.keyByHash, selectKey + ` WHERE k.hash = ?`},
		{&s.keyByID, selectKey + ` WHERE k.id = ?`},
		{&s.accountByID, selectAccount + ` WHERE id = ?`},
		{&s.keysVersion, `SELECT version FROM keys_version WHERE id = 1`},
	} {
		st, err := s.db.PrepareContext(ctx, p.sql)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", p.sql, err)
		}
		*p.st = st
	}
	return s.prepareUsage(ctx)
}

// Ping runs the cheapest query there is, so a database that cannot be
// read (closed, its file gone, every connection stuck) answers an error.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("sqlstore: ping: %w", err)
	}
	return nil
}

// Close releases the prepared statements and every pooled connection.
func (s *Store) Close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.keyByHash, s.keyByID, s.accountByID, s.keysVersion} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	errs = append(errs, s.usage.close())
	errs = append(errs, s.db.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlstore: close: %w", err)
	}
	return nil
}

// writeLock is the PostgreSQL advisory lock every write transaction takes
// first (pg_advisory_xact_lock), so that, as with SQLite's BEGIN
// IMMEDIATE, write transactions run one at a time: a charge reads the
// balance it writes back and the ledger's next id, and nothing else moves
// either meanwhile. migrateLock guards applying migrations.
const (
	writeLock   int64 = 0x6d67_7772 // "mgwr"
	migrateLock int64 = 0x6d67_6d67 // "mgmg"
)

// withTx runs fn in a write transaction (BEGIN IMMEDIATE, see dsn, or the
// write lock on PostgreSQL) and commits it when fn returns nil; otherwise
// it rolls back.
func (s *Store) withTx(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if s.pg {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, writeLock); err != nil {
			return fmt.Errorf("write lock: %w", err)
		}
	}
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// wrap adds the operation to err and maps SQLite's constraint errors and
// sql.ErrNoRows to the store sentinels, keeping both in the chain.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlstore: %s: %w", op, store.ErrNotFound)
	}
	if e := wrapPG(op, err); e != nil {
		return e
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("sqlstore: %s: %w: %w", op, store.ErrConflict, err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("sqlstore: %s: referenced row: %w: %w", op, store.ErrNotFound, err)
		}
	}
	return fmt.Errorf("sqlstore: %s: %w", op, err)
}

// toMicros converts t to the stored representation, Unix microseconds.
func toMicros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros converts a stored time back, always in UTC.
func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// toNullMicros stores the zero time as NULL (used for optional times).
func toNullMicros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

// fromNullMicros reads NULL back as the zero time.
func fromNullMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicros(v.Int64)
}
