package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/modelgate/modelgate/internal/store"
)

// pgMaxOpenConns bounds each replica's pool: PostgreSQL runs writers in
// parallel, but every write transaction queues on one advisory lock (see
// withTx), so more connections would only wait there.
const pgMaxOpenConns = 16

// OpenPostgres opens the PostgreSQL database dsn (postgres://user@host/db)
// and brings its schema up to date under an advisory lock, so replicas
// starting at once on an empty database apply each migration once.
//
// The queries are the SQLite backend's, written with ? placeholders; the
// connection rewrites them for PostgreSQL (see pgQuery), so both backends
// run one implementation and one conformance suite.
func OpenPostgres(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	db := sql.OpenDB(pgConnector{stdlib.GetConnector(*cfg)})
	db.SetMaxOpenConns(pgMaxOpenConns)
	db.SetMaxIdleConns(pgMaxOpenConns)
	s := &Store{db: db, pg: true, log: discardLog()}
	for _, o := range opts {
		o(s)
	}
	if err := s.init(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("postgres: open %s: %w", redactDSN(cfg), err)
	}
	return s, nil
}

// SchemaVersion is the newest migration the database has applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, wrap("schema version", err)
}

// redactDSN names the database without its password, for errors.
func redactDSN(cfg *pgx.ConnConfig) string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

// pgConnector hands database/sql pgx connections that speak the SQLite
// dialect the queries are written in.
type pgConnector struct{ driver.Connector }

// Connect wraps a new pgx connection.
func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		_ = conn.Close()
		return nil, errors.New("postgres: unexpected driver connection type")
	}
	return &pgConn{Conn: sc}, nil
}

// pgConn is a pgx connection whose statements are rewritten by pgQuery
// and whose bool arguments are stored as 0/1 (the schema's flags are
// integers, as in SQLite). Every other driver interface is pgx's own.
type pgConn struct{ *stdlib.Conn }

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(pgQuery(query))
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, pgQuery(query))
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, pgQuery(query), args)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, pgQuery(query), args)
}

// CheckNamedValue stores a bool as the integer the schema holds.
func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	if b, ok := nv.Value.(bool); ok {
		nv.Value = int64(0)
		if b {
			nv.Value = int64(1)
		}
	}
	return nil
}

// pgStatements are the queries with no common form, by their SQLite text:
// the charges kept in usage blocks take ids from the ledger's sequence,
// which SQLite keeps in sqlite_sequence and PostgreSQL in the identity
// column's sequence.
var pgStatements = map[string]string{
	ledgerSeqSQL:    `SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM ledger_id_seq`,
	setLedgerSeqSQL: `SELECT setval('ledger_id_seq', $1)`,
}

// pgQuery rewrites a query written for SQLite into PostgreSQL's dialect:
// each ? placeholder outside a quoted string becomes $1, $2, ... (and ?N
// becomes $N); a
// comment /*pg:TEXT*/ becomes TEXT (SQLite reads it as a comment: a
// clause only PostgreSQL needs, such as FOR UPDATE); and LIKE becomes
// ILIKE, since SQLite's LIKE ignores ASCII case and the queries rely on it.
func pgQuery(q string) string {
	if pq, ok := pgStatements[q]; ok {
		return pq
	}
	if !strings.ContainsAny(q, "?/L") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '\'' || c == '"':
			j := strings.IndexByte(q[i+1:], c)
			if j < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i : i+j+2])
			i += j + 1
		case c == '?' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			b.WriteByte('$') // ?NNN, numbered: $NNN
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		case c == '/' && strings.HasPrefix(q[i:], "/*pg:"):
			end := strings.Index(q[i:], "*/")
			if end < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i+len("/*pg:") : i+end])
			i += end + 1
		case c == 'L' && strings.HasPrefix(q[i:], "LIKE ") && i > 0 && (q[i-1] == ' ' || q[i-1] == '\n' || q[i-1] == '\t'):
			b.WriteString("ILIKE")
			i += len("LIKE") - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// wrapPG maps PostgreSQL's constraint errors to the store sentinels, as
// wrap does SQLite's; nil for any other error.
func wrapPG(op string, err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return nil
	}
	switch pe.Code {
	case "23505": // unique_violation
		return fmt.Errorf("sqlstore: %s: %w: %w", op, store.ErrConflict, err)
	case "23503": // foreign_key_violation
		return fmt.Errorf("sqlstore: %s: referenced row: %w: %w", op, store.ErrNotFound, err)
	}
	return nil
}
