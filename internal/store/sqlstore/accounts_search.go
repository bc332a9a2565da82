package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/internal/store"
)

// maxAccountPage is the largest AccountQuery.Limit.
const maxAccountPage = 500

// SearchAccounts lists the accounts q selects by name ascending, with their
// identities; see store.Accounts. The page walks the accounts' unique name
// index from q.After; q.Q is matched with LIKE, its wildcards escaped, which
// ignores case for ASCII letters only (SQLite's LIKE).
func (s *Store) SearchAccounts(ctx context.Context, q store.AccountQuery) ([]store.AccountRow, error) {
	if q.Limit < 1 || q.Limit > maxAccountPage {
		return nil, fmt.Errorf("sqlstore: search accounts: limit %d not in 1..%d", q.Limit, maxAccountPage)
	}
	query := selectAccount + ` WHERE name > ?`
	args := []any{q.After}
	if q.Q != "" {
		pat := "%" + escapeLike(q.Q) + "%"
		query += ` AND (name LIKE ? ESCAPE '\' OR EXISTS (SELECT 1 FROM identities i
			WHERE i.account_id = accounts.id AND (i.login LIKE ? ESCAPE '\' OR i.subject LIKE ? ESCAPE '\'
			OR i.email LIKE ? ESCAPE '\')))`
		args = append(args, pat, pat, pat, pat)
	}
	rows, err := s.db.QueryContext(ctx, query+` ORDER BY name LIMIT ?`, append(args, q.Limit)...)
	if err != nil {
		return nil, wrap("search accounts", err)
	}
	var out []store.AccountRow
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			rows.Close()
			return nil, wrap("search accounts", err)
		}
		out = append(out, store.AccountRow{Account: a})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrap("search accounts", err)
	}
	if err := s.fillIdentities(ctx, out); err != nil {
		return nil, wrap("search accounts", err)
	}
	return out, nil
}

// fillIdentities reads the identities of rows' accounts in one statement.
func (s *Store) fillIdentities(ctx context.Context, rows []store.AccountRow) error {
	if len(rows) == 0 {
		return nil
	}
	at := make(map[string]int, len(rows))
	args := make([]any, len(rows))
	for i, r := range rows {
		at[r.ID], args[i] = i, r.ID
	}
	res, err := s.db.QueryContext(ctx, selectIdentity+` WHERE account_id IN (?`+strings.Repeat(`, ?`, len(rows)-1)+`)
		ORDER BY created_at, provider, subject`, args...)
	if err != nil {
		return fmt.Errorf("identities: %w", err)
	}
	defer res.Close()
	for res.Next() {
		id, err := scanIdentity(res)
		if err != nil {
			return fmt.Errorf("identities: %w", err)
		}
		if i, ok := at[id.AccountID]; ok {
			rows[i].Identities = append(rows[i].Identities, id)
		}
	}
	return res.Err()
}
