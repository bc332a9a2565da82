package main

// Where modelgate keeps its state in a run: the SQLite file in the temp
// dir (the default), or a PostgreSQL database made for the run and
// dropped after it, with Redis beside it (-backend postgres). The
// database is made and dropped with psql, so the harness needs no driver.

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// backend is what modelgate's config names for its state.
type backend struct {
	Name     string `json:"name"`            // sqlite or postgres
	Database string `json:"database"`        // the config's database
	Redis    string `json:"redis,omitempty"` // the config's redis; "" for none
	admin    string // postgres: the maintenance database's URL, for psql
	db       string // postgres: the database made for the run
}

// newBackend prepares kind's state for a run in dir: for postgres, a
// fresh database bench_<pid> on the server at pgURL (a postgres:// URL
// without a database, or with the one psql connects to to make it), and
// redisURL as the config's redis.
func newBackend(ctx context.Context, kind, dir, pgURL, redisURL string) (*backend, error) {
	switch kind {
	case "", "sqlite":
		return &backend{Name: "sqlite", Database: "sqlite:" + filepath.Join(dir, "modelgate.db")}, nil
	case "postgres":
	default:
		return nil, fmt.Errorf("-backend %q: want sqlite or postgres", kind)
	}
	b := &backend{Name: "postgres", Redis: redisURL, db: fmt.Sprintf("bench_%d", os.Getpid())}
	var err error
	if b.admin, b.Database, err = postgresURLs(pgURL, b.db); err != nil {
		return nil, err
	}
	progress("creating PostgreSQL database " + b.db)
	if err := b.psql(ctx, "CREATE DATABASE "+b.db); err != nil {
		return nil, err
	}
	return b, nil
}

// postgresURLs returns, for the server at pgURL, the URL psql makes and
// drops db through (pgURL's own database, else postgres) and db's, both
// with sslmode=disable unless pgURL says otherwise.
func postgresURLs(pgURL, db string) (admin, database string, err error) {
	u, err := url.Parse(pgURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return "", "", fmt.Errorf("-postgres %q: want postgres://user@host:port", pgURL)
	}
	q := u.Query()
	if !q.Has("sslmode") {
		q.Set("sslmode", "disable")
	}
	u.RawQuery = q.Encode()
	a := *u
	if strings.Trim(a.Path, "/") == "" {
		a.Path = "/postgres"
	}
	u.Path = "/" + db
	return a.String(), u.String(), nil
}

// close drops what newBackend made; safe on every backend.
func (b *backend) close() {
	if b == nil || b.db == "" {
		return
	}
	// The harness may be stopping because ctx was cancelled: drop anyway.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.psql(ctx, "DROP DATABASE IF EXISTS "+b.db+" WITH (FORCE)"); err != nil {
		progress("could not drop PostgreSQL database " + b.db + ": " + err.Error())
		return
	}
	progress("dropped PostgreSQL database " + b.db)
}

// psql runs one statement on the maintenance database.
func (b *backend) psql(ctx context.Context, stmt string) error {
	cmd := exec.CommandContext(ctx, "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", b.admin, "-c", stmt)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("psql %q: %w: %s", stmt, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// configLines are the backend's lines of modelgate's config.
func (b *backend) configLines() string {
	s := fmt.Sprintf("database: %q\n", b.Database)
	if b.Redis != "" {
		s += fmt.Sprintf("redis: %q\n", b.Redis)
	}
	return s
}
