package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// bootstrappedKey is the meta row whose presence marks a bootstrapped database.
const bootstrappedKey = "bootstrapped"

// Bootstrap inserts a and k unless the database was bootstrapped before and
// reports whether it did. The marker row, the account, the key and the
// credit commit together; BEGIN IMMEDIATE plus the marker's primary key guarantee that of
// two concurrent callers (even in two processes) exactly one wins.
func (s *Store) Bootstrap(ctx context.Context, a store.Account, k store.Key, credit money.Micros) (bool, error) {
	var did bool
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`,
			bootstrappedKey, a.CreatedAt.UTC().Format(time.RFC3339Nano))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil // bootstrapped before; the commit writes nothing
		}
		if err := insertAccount(ctx, tx, a); err != nil {
			return err
		}
		if err := insertKey(ctx, tx, k); err != nil {
			return err
		}
		if credit != 0 {
			e := store.LedgerEntry{AccountID: a.ID, Kind: store.KindBonus, Amount: credit,
				Note: "demo credit on first start", Time: a.CreatedAt}
			if _, err := post(ctx, tx, e); err != nil {
				return err
			}
		}
		did = true
		return nil
	})
	if err != nil {
		return false, wrap("bootstrap", err)
	}
	return did, nil
}
