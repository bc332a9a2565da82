package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
)

// fetchBatch is how many rows a PostgreSQL cursor hands over per FETCH.
const fetchBatch = 128

// rowSource streams one query's rows while other queries run on the same
// connection between them (the ledger walk reads a block's data between
// two rows of the table). SQLite does that with the open query itself;
// a PostgreSQL connection runs one query at a time, so there the query is
// a server-side cursor, read fetchBatch rows at a time, each batch whole.
// Either way it needs the transaction the connection is in.
type rowSource struct {
	ctx    context.Context
	conn   *sql.Conn
	rows   *sql.Rows // SQLite: the open query
	cursor string    // PostgreSQL: the cursor's name
	done   bool
}

// openSource starts q on conn, as cursor name on PostgreSQL.
func openSource(ctx context.Context, conn *sql.Conn, pg bool, name, q string, args ...any) (*rowSource, error) {
	s := &rowSource{ctx: ctx, conn: conn}
	if pg {
		if _, err := conn.ExecContext(ctx, `DECLARE `+name+` NO SCROLL CURSOR FOR `+q, args...); err != nil {
			return nil, err
		}
		s.cursor = name
		return s, nil
	}
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	s.rows = rows
	return s, nil
}

// more calls scan for up to fetchBatch rows (SQLite: one) and reports
// whether there were any; after false, there are none left.
func (s *rowSource) more(scan func(*sql.Rows) error) (bool, error) {
	if s.done {
		return false, nil
	}
	if s.rows != nil {
		if !s.rows.Next() {
			s.done = true
			return false, s.close()
		}
		return true, scan(s.rows)
	}
	rows, err := s.conn.QueryContext(s.ctx, fmt.Sprintf(`FETCH %d FROM %s`, fetchBatch, s.cursor))
	if err != nil {
		return false, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		if err := scan(rows); err != nil {
			return false, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	s.done = n < fetchBatch
	return n > 0, nil
}

// close ends an SQLite query (a cursor ends with its transaction).
func (s *rowSource) close() error {
	if s == nil || s.rows == nil {
		return nil
	}
	err := s.rows.Err()
	_ = s.rows.Close()
	s.rows = nil
	return err
}
