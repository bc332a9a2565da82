package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// migrationFiles holds the schema history of each database. To change the
// schema, append a file named NNNN_description.sql with the next number to
// both directories; never edit one that has been released. PostgreSQL's
// history starts at 0018, its 0018_schema.sql creating what SQLite's
// 0001-0018 built (there were no PostgreSQL databases to upgrade before),
// so one version number means one schema in both.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// migration is one step of the schema history.
type migration struct {
	version int
	name    string
	sql     string
}

// pgFirstMigration is the version PostgreSQL's history starts at.
const pgFirstMigration = 18

// loadMigrations returns the embedded migrations of SQLite or PostgreSQL
// in order and checks that their versions run on without gaps or
// duplicates (from 1, or from pgFirstMigration).
func loadMigrations(pg bool) ([]migration, error) {
	dir, first := "migrations/sqlite", 1
	if pg {
		dir, first = "migrations/postgres", pgFirstMigration
	}
	entries, err := fs.ReadDir(migrationFiles, dir) // sorted by name
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		if !ok {
			return nil, fmt.Errorf("migration %q: want NNNN_description.sql", name)
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %q: bad version: %w", name, err)
		}
		if v != len(ms)+first {
			return nil, fmt.Errorf("migration %q: version %d, want %d", name, v, len(ms)+first)
		}
		body, err := fs.ReadFile(migrationFiles, dir+"/"+name)
		if err != nil {
			return nil, fmt.Errorf("migration %q: %w", name, err)
		}
		ms = append(ms, migration{version: v, name: name, sql: string(body)})
	}
	return ms, nil
}

// migrate applies every migration the database has not seen yet, each in its
// own transaction together with its schema_migrations row. Two processes
// migrating at once are serialised by BEGIN IMMEDIATE (SQLite) or an
// advisory lock held meanwhile (PostgreSQL), and the version is re-checked
// inside the transaction, so each migration runs exactly once.
func migrate(ctx context.Context, db *sql.DB, pg bool) error {
	ms, err := loadMigrations(pg)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if pg {
		conn, err := db.Conn(ctx) // the session the advisory lock belongs to
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(?)`, migrateLock); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
		defer func() { _, _ = conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(?)`, migrateLock) }()
		return applyMigrations(ctx, conn, ms, "BIGINT")
	}
	return applyMigrations(ctx, db, ms, "INTEGER")
}

// migrator is what *sql.DB and *sql.Conn offer for migrating.
type migrator interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// applyMigrations applies those of ms newer than the database's version;
// integer is the dialect's 64-bit integer type.
func applyMigrations(ctx context.Context, db migrator, ms []migration, integer string) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    `+integer+` PRIMARY KEY,
		applied_at `+integer+` NOT NULL
	)`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var current int
	if err := db.QueryRowContext(ctx,
		`SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: read version: %w", err)
	}
	for _, m := range ms {
		if m.version <= current {
			continue
		}
		if err := applyMigration(ctx, db, m); err != nil {
			return fmt.Errorf("migrate: %s: %w", m.name, err)
		}
	}
	return nil
}

// applyMigration runs m in one transaction unless another process did first.
func applyMigration(ctx context.Context, db migrator, m migration) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var done int
	if err := tx.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&done); err != nil {
		return fmt.Errorf("check version: %w", err)
	}
	if done > 0 {
		return tx.Rollback()
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
		m.version, time.Now().UnixMicro()); err != nil {
		return fmt.Errorf("record version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
