package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// Top-ups and redemption codes: every credit goes through post, in the
// same transaction as the row that says why, so balance and ledger move
// together and the ledger's unique ref makes each credit happen once.

const topUpColumns = `id, account_id, amount, credited, bonus, method, status, provider, external_id,
	payment_ref, reversed, bonus_reversed, created_at, paid_at, ended_at`

const selectTopUp = `SELECT ` + topUpColumns + ` FROM topups`

// scanTopUp reads one row of topUpColumns.
func scanTopUp(r scanner) (store.TopUp, error) {
	var (
		t           store.TopUp
		status      string
		created     int64
		paid, ended sql.NullInt64
	)
	if err := r.Scan(&t.ID, &t.AccountID, &t.Amount, &t.Credited, &t.Bonus, &t.Method, &status,
		&t.Provider, &t.ExternalID, &t.PaymentRef, &t.Reversed, &t.BonusReversed, &created, &paid, &ended); err != nil {
		return store.TopUp{}, err
	}
	t.Status = store.TopUpStatus(status)
	t.CreatedAt, t.PaidAt, t.EndedAt = fromMicros(created), fromNullMicros(paid), fromNullMicros(ended)
	return t, nil
}

// CreateTopUp stores t as pending (an empty Status is taken as pending, any
// other is refused; Credited, Bonus, PaidAt, EndedAt, PaymentRef and the
// reversed amounts are not stored) unless the account is at one of lim's
// bounds (store.ErrLimit); store.ErrConflict on a taken ID or (Provider,
// ExternalID), store.ErrNotFound when the account does not exist. The
// count and the insert share a write transaction (BEGIN IMMEDIATE), so
// racing creations are counted one after the other.
func (s *Store) CreateTopUp(ctx context.Context, t store.TopUp, lim store.TopUpLimits) error {
	op := fmt.Sprintf("create top-up %q", t.ID)
	if t.Status != "" && t.Status != store.TopUpPending {
		return fmt.Errorf("sqlstore: %s: status %q, want %q", op, t.Status, store.TopUpPending)
	}
	return wrap(op, s.withTx(ctx, func(tx *sql.Tx) error {
		if err := topUpLimits(ctx, tx, t.AccountID, lim); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO topups
			(id, account_id, amount, method, status, provider, external_id, created_at)
			VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)`,
			t.ID, t.AccountID, t.Amount, t.Method, t.Provider, t.ExternalID, toMicros(t.CreatedAt))
		return err
	}))
}

// CheckTopUpLimits reports store.ErrLimit when CreateTopUp would refuse a
// top-up of accountID now.
func (s *Store) CheckTopUpLimits(ctx context.Context, accountID string, lim store.TopUpLimits) error {
	return wrap("check top-up limits", topUpLimits(ctx, s.db, accountID, lim))
}

// rowQuerier is what topUpLimits reads with: the database or a
// transaction.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// topUpLimits counts the account's open and recent top-ups against lim.
func topUpLimits(ctx context.Context, q rowQuerier, accountID string, lim store.TopUpLimits) error {
	if lim.MaxOpen <= 0 && lim.MaxRecent <= 0 {
		return nil
	}
	var open, recent int
	if err := q.QueryRowContext(ctx, `SELECT
			COUNT(*) FILTER (WHERE status = 'pending' AND created_at >= ?),
			COUNT(*) FILTER (WHERE created_at >= ?)
		FROM topups WHERE account_id = ? AND created_at >= ?`,
		toMicros(lim.OpenSince), toMicros(lim.RecentSince), accountID,
		min(toMicros(lim.OpenSince), toMicros(lim.RecentSince))).Scan(&open, &recent); err != nil {
		return fmt.Errorf("count top-ups: %w", err)
	}
	switch {
	case lim.MaxOpen > 0 && open >= lim.MaxOpen:
		return fmt.Errorf("%d open top-ups (at most %d): %w", open, lim.MaxOpen, store.ErrLimit)
	case lim.MaxRecent > 0 && recent >= lim.MaxRecent:
		return fmt.Errorf("%d top-ups started recently (at most %d): %w", recent, lim.MaxRecent, store.ErrLimit)
	}
	return nil
}

// TopUpByExternalID finds a top-up by its provider's id; store.ErrNotFound.
func (s *Store) TopUpByExternalID(ctx context.Context, provider, externalID string) (store.TopUp, error) {
	t, err := scanTopUp(s.db.QueryRowContext(ctx, selectTopUp+` WHERE provider = ? AND external_id = ?`,
		provider, externalID))
	if err != nil {
		return store.TopUp{}, wrap(fmt.Sprintf("top-up %s/%s", provider, externalID), err)
	}
	return t, nil
}

// ListTopUps lists an account's top-ups, newest first.
func (s *Store) ListTopUps(ctx context.Context, accountID string) ([]store.TopUp, error) {
	rows, err := s.db.QueryContext(ctx, selectTopUp+` WHERE account_id = ?
		ORDER BY created_at DESC, id DESC`, accountID)
	if err != nil {
		return nil, wrap("list top-ups", err)
	}
	defer rows.Close()
	var out []store.TopUp
	for rows.Next() {
		t, err := scanTopUp(rows)
		if err != nil {
			return nil, wrap("list top-ups", err)
		}
		out = append(out, t)
	}
	return out, wrap("list top-ups", rows.Err())
}

// PayTopUp marks the top-up paid and credits it, and takes back what the
// payment's recorded reversals cover; see store.Console.
//
// The pending → paid step is one conditional UPDATE, so of racing calls
// only one finds the row pending (PostgreSQL: the others wait on the row
// lock and then see it paid). The bonus posting runs under a savepoint:
// when a racing transaction already posted "first-topup-bonus:"+account,
// its unique ref conflicts, the savepoint undoes the half-made posting and
// the top-up is paid without a bonus.
func (s *Store) PayTopUp(ctx context.Context, provider, externalID, paymentRef string, amount money.Micros,
	rule store.BonusRule, at time.Time,
) (store.TopUp, bool, error) {
	op := fmt.Sprintf("pay top-up %s/%s", provider, externalID)
	if amount < 0 {
		return store.TopUp{}, false, fmt.Errorf("sqlstore: %s: negative amount %d", op, amount)
	}
	var (
		t        store.TopUp
		credited bool
	)
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		var err error
		t, err = scanTopUp(tx.QueryRowContext(ctx, `UPDATE topups
			SET status = 'paid', credited = ?, paid_at = ?, ended_at = ?, payment_ref = ?
			WHERE provider = ? AND external_id = ? AND status = 'pending'
			RETURNING `+topUpColumns, amount, toMicros(at), toMicros(at), paymentRef, provider, externalID))
		if errors.Is(err, sql.ErrNoRows) {
			// Not pending: unknown (ErrNotFound from the scan), paid or ended.
			if t, err = scanTopUp(tx.QueryRowContext(ctx, selectTopUp+` WHERE provider = ? AND external_id = ?`,
				provider, externalID)); err != nil {
				return err
			}
			if t.Status != store.TopUpPaid {
				return fmt.Errorf("top-up %q is %s: %w", t.ID, t.Status, store.ErrConflict)
			}
			if t.PaymentRef != "" || paymentRef == "" {
				return nil
			}
			// Paid before its payment was known (an older event): learn it
			// now, and what was taken back from it meanwhile.
			if _, err := tx.ExecContext(ctx, `UPDATE topups SET payment_ref = ? WHERE id = ?`, paymentRef, t.ID); err != nil {
				return err
			}
			t.PaymentRef = paymentRef
			t, _, err = applyReversals(ctx, tx, t, at)
			return err
		}
		if err != nil {
			return err
		}
		credited = true
		if _, err := post(ctx, tx, store.LedgerEntry{AccountID: t.AccountID, Kind: store.KindTopUp,
			Amount: amount, Ref: "topup:" + t.ID, Note: "top-up via " + provider, Time: at}); err != nil {
			return fmt.Errorf("credit: %w", err)
		}
		if t.Bonus, err = firstTopUpBonus(ctx, tx, t, rule, at); err != nil {
			return err
		}
		t, _, err = applyReversals(ctx, tx, t, at)
		return err
	})
	if err != nil {
		return store.TopUp{}, false, wrap(op, err)
	}
	return t, credited, nil
}

// bonusFor is min(amount × rule.PercentPPM / 10^6 rounded down, rule.Max
// when it is above 0); 0 when the rule gives none. amount is split so the
// product cannot overflow for any realistic percentage.
func bonusFor(amount money.Micros, rule store.BonusRule) money.Micros {
	if rule.PercentPPM <= 0 || amount <= 0 {
		return 0
	}
	const million = 1_000_000
	q, r := int64(amount)/million, int64(amount)%million
	b := money.Micros(q*rule.PercentPPM + r*rule.PercentPPM/million)
	if rule.Max > 0 && b > rule.Max {
		b = rule.Max
	}
	return b
}

// firstTopUpBonus credits the first-top-up bonus of t, just paid inside tx,
// when no other top-up of the account was paid before, and stores it on
// the top-up. It returns the bonus credited (0 when none was).
func firstTopUpBonus(ctx context.Context, tx *sql.Tx, t store.TopUp, rule store.BonusRule, at time.Time) (money.Micros, error) {
	bonus := bonusFor(t.Credited, rule)
	if bonus == 0 {
		return 0, nil
	}
	var earlier bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM topups
		WHERE account_id = ? AND status = 'paid' AND id <> ?)`, t.AccountID, t.ID).Scan(&earlier); err != nil {
		return 0, fmt.Errorf("earlier top-ups: %w", err)
	}
	if earlier {
		return 0, nil
	}
	if _, err := tx.ExecContext(ctx, `SAVEPOINT first_topup_bonus`); err != nil {
		return 0, err
	}
	_, err := post(ctx, tx, store.LedgerEntry{AccountID: t.AccountID, Kind: store.KindBonus, Amount: bonus,
		Ref: "first-topup-bonus:" + t.AccountID, Note: "first top-up bonus (" + t.ID + ")", Time: at})
	if err != nil {
		if !errors.Is(wrap("", err), store.ErrConflict) {
			return 0, fmt.Errorf("bonus: %w", err)
		}
		// Another top-up of the account got the bonus first.
		if _, err := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT first_topup_bonus`); err != nil {
			return 0, err
		}
		bonus = 0
	}
	if _, err := tx.ExecContext(ctx, `RELEASE SAVEPOINT first_topup_bonus`); err != nil {
		return 0, err
	}
	if bonus == 0 {
		return 0, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE topups SET bonus = ? WHERE id = ?`, bonus, t.ID); err != nil {
		return 0, err
	}
	return bonus, nil
}

// EndTopUp marks a pending top-up failed or expired; a final one is left as
// it is. store.ErrNotFound for an unknown externalID.
func (s *Store) EndTopUp(ctx context.Context, provider, externalID string, status store.TopUpStatus, at time.Time) error {
	op := fmt.Sprintf("end top-up %s/%s", provider, externalID)
	if status != store.TopUpFailed && status != store.TopUpExpired {
		return fmt.Errorf("sqlstore: %s: status %q, want failed or expired", op, status)
	}
	return wrap(op, s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE topups SET status = ?, ended_at = ?
			WHERE provider = ? AND external_id = ? AND status = 'pending'`,
			string(status), toMicros(at), provider, externalID)
		if err := mustAffect(res, err); !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var one int
		return tx.QueryRowContext(ctx, `SELECT 1 FROM topups WHERE provider = ? AND external_id = ?`,
			provider, externalID).Scan(&one)
	}))
}

const codeColumns = `id, hash, batch, amount, created_at, expires_at, redeemed_by, redeemed_at`

// scanCode reads one row of codeColumns.
func scanCode(r scanner) (store.RedeemCode, error) {
	var (
		c                 store.RedeemCode
		created           int64
		expires, redeemed sql.NullInt64
		by                sql.NullString
	)
	if err := r.Scan(&c.ID, &c.Hash, &c.Batch, &c.Amount, &created, &expires, &by, &redeemed); err != nil {
		return store.RedeemCode{}, err
	}
	c.CreatedAt, c.ExpiresAt, c.RedeemedAt = fromMicros(created), fromNullMicros(expires), fromNullMicros(redeemed)
	c.RedeemedBy = by.String
	return c, nil
}

// CreateCodes stores unused codes in one transaction (RedeemedBy and
// RedeemedAt are not stored); store.ErrConflict on a taken hash or ID, and
// then none is stored. A code must credit a positive amount.
func (s *Store) CreateCodes(ctx context.Context, codes []store.RedeemCode) error {
	for _, c := range codes {
		if c.Amount <= 0 {
			return fmt.Errorf("sqlstore: create codes: code %q: amount %d, want > 0", c.ID, c.Amount)
		}
	}
	return wrap("create codes", s.withTx(ctx, func(tx *sql.Tx) error {
		ins, err := tx.PrepareContext(ctx, `INSERT INTO redeem_codes (id, hash, batch, amount, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for _, c := range codes {
			if _, err := ins.ExecContext(ctx, c.ID, c.Hash, c.Batch, c.Amount, toMicros(c.CreatedAt),
				toNullMicros(c.ExpiresAt)); err != nil {
				return fmt.Errorf("code %q: %w", c.ID, err)
			}
		}
		return nil
	}))
}

// RedeemCode credits the unused, unexpired code to accountID and marks it
// used, atomically; see store.Console. A used code is ErrConflict even when
// it has expired since.
func (s *Store) RedeemCode(ctx context.Context, hash []byte, accountID string, at time.Time) (store.RedeemCode, error) {
	var c store.RedeemCode
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		var err error
		c, err = scanCode(tx.QueryRowContext(ctx, `UPDATE redeem_codes SET redeemed_by = ?, redeemed_at = ?
			WHERE hash = ? AND redeemed_by IS NULL AND (expires_at IS NULL OR expires_at > ?)
			RETURNING `+codeColumns, accountID, toMicros(at), hash, toMicros(at)))
		if errors.Is(err, sql.ErrNoRows) {
			// Unknown (ErrNotFound from the scan), used or expired.
			if c, err = scanCode(tx.QueryRowContext(ctx, `SELECT `+codeColumns+` FROM redeem_codes WHERE hash = ?`,
				hash)); err != nil {
				return err
			}
			if c.RedeemedBy != "" {
				return fmt.Errorf("code %q was redeemed: %w", c.ID, store.ErrConflict)
			}
			return fmt.Errorf("code %q expired: %w", c.ID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		note := "redemption code"
		if c.Batch != "" {
			note += " (batch " + c.Batch + ")"
		}
		_, err = post(ctx, tx, store.LedgerEntry{AccountID: accountID, Kind: store.KindCode, Amount: c.Amount,
			Ref: "code:" + c.ID, Note: note, Time: at})
		return err
	})
	if err != nil {
		return store.RedeemCode{}, wrap("redeem code", err)
	}
	return c, nil
}

// ListCodes lists a batch's codes ("" every code), oldest first.
func (s *Store) ListCodes(ctx context.Context, batch string) ([]store.RedeemCode, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+codeColumns+` FROM redeem_codes
		WHERE ? = '' OR batch = ? ORDER BY created_at, id`, batch, batch)
	if err != nil {
		return nil, wrap("list codes", err)
	}
	defer rows.Close()
	var out []store.RedeemCode
	for rows.Next() {
		c, err := scanCode(rows)
		if err != nil {
			return nil, wrap("list codes", err)
		}
		out = append(out, c)
	}
	return out, wrap("list codes", rows.Err())
}
