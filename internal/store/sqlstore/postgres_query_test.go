package sqlstore

import "testing"

func TestPGQuery(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = ? AND c IN (?, ?)`, `SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)`},
		{`SELECT '?' , "a?" FROM t WHERE x = ?`, `SELECT '?' , "a?" FROM t WHERE x = $1`},
		{`SELECT 'it''s ?' WHERE x = ?`, `SELECT 'it''s ?' WHERE x = $1`},
		{`WHERE a = ?1 AND b = ?2 OR c = ?1`, `WHERE a = $1 AND b = $2 OR c = $1`},
		{`SELECT id FROM t WHERE id = ? /*pg:FOR UPDATE*/`, `SELECT id FROM t WHERE id = $1 FOR UPDATE`},
		{`WHERE name LIKE ? ESCAPE '\'`, `WHERE name ILIKE $1 ESCAPE '\'`},
		{`WHERE LIKELY = 1 AND ALIKE = ?`, `WHERE LIKELY = 1 AND ALIKE = $1`},
		{ledgerSeqSQL, pgStatements[ledgerSeqSQL]},
		{`SELECT 'unterminated ?`, `SELECT 'unterminated ?`},
	} {
		if got := pgQuery(c.in); got != c.want {
			t.Errorf("pgQuery(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
