package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// Refunds and disputes of paid top-ups. The provider reports running
// totals per payment (a charge's amount_refunded grows with each partial
// refund); the store keeps the highest of each kind and takes back from
// the account what the sum newly covers, so a repeated or out-of-order
// event changes nothing and every event is applied once.

// ReverseTopUp records r and takes back what it newly covers; see
// store.Console.
func (s *Store) ReverseTopUp(ctx context.Context, r store.TopUpReversal, at time.Time) (store.TopUp, money.Micros, error) {
	op := fmt.Sprintf("reverse top-up %s/%s", r.Provider, r.PaymentRef)
	if r.Kind != store.ReversalRefund && r.Kind != store.ReversalDispute {
		return store.TopUp{}, 0, fmt.Errorf("sqlstore: %s: kind %q, want refund or dispute", op, r.Kind)
	}
	if r.Total < 0 || r.PaymentRef == "" {
		return store.TopUp{}, 0, fmt.Errorf("sqlstore: %s: total %d, payment %q", op, r.Total, r.PaymentRef)
	}
	var (
		t       store.TopUp
		debited money.Micros
		found   bool
	)
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO topup_reversals (provider, payment_ref, kind, total, updated_at)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (provider, payment_ref, kind) DO UPDATE SET total = excluded.total, updated_at = excluded.updated_at
			WHERE excluded.total > topup_reversals.total`,
			r.Provider, r.PaymentRef, string(r.Kind), r.Total, toMicros(at)); err != nil {
			return fmt.Errorf("record: %w", err)
		}
		var err error
		t, err = scanTopUp(tx.QueryRowContext(ctx, selectTopUp+` WHERE provider = ? AND payment_ref = ? AND status = 'paid'`,
			r.Provider, r.PaymentRef))
		if errors.Is(err, sql.ErrNoRows) {
			return nil // kept for PayTopUp
		}
		if err != nil {
			return err
		}
		found = true
		t, debited, err = applyReversals(ctx, tx, t, at)
		return err
	})
	if err != nil {
		return store.TopUp{}, 0, wrap(op, err)
	}
	if !found {
		return store.TopUp{}, 0, fmt.Errorf("sqlstore: %s: no paid top-up with this payment yet (kept): %w", op, store.ErrNotFound)
	}
	return t, debited, nil
}

// applyReversals takes back from t's account, inside tx, what the recorded
// reversals of t's payment cover beyond t.Reversed, and the same share of
// t.Bonus beyond t.BonusReversed. It returns t as stored after and the
// amount taken from the balance now.
func applyReversals(ctx context.Context, tx *sql.Tx, t store.TopUp, at time.Time) (store.TopUp, money.Micros, error) {
	if t.PaymentRef == "" || t.Credited <= 0 {
		return t, 0, nil
	}
	var total money.Micros
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(total), 0) FROM topup_reversals
		WHERE provider = ? AND payment_ref = ?`, t.Provider, t.PaymentRef).Scan(&total); err != nil {
		return t, 0, fmt.Errorf("reversals: %w", err)
	}
	target := min(total, t.Credited)
	if target <= t.Reversed {
		return t, 0, nil
	}
	bonusTarget := max(share(t.Bonus, target, t.Credited), t.BonusReversed)
	step := strconv.FormatInt(int64(target), 10)
	paid, bonus := target-t.Reversed, bonusTarget-t.BonusReversed
	if _, err := post(ctx, tx, store.LedgerEntry{AccountID: t.AccountID, Kind: store.KindTopUp, Amount: -paid,
		Ref: "topup-reversal:" + t.ID + ":" + step, Note: "refunded or disputed: top-up " + t.ID + " via " + t.Provider, Time: at}); err != nil {
		return t, 0, fmt.Errorf("take back: %w", err)
	}
	if bonus > 0 {
		if _, err := post(ctx, tx, store.LedgerEntry{AccountID: t.AccountID, Kind: store.KindBonus, Amount: -bonus,
			Ref: "topup-reversal-bonus:" + t.ID + ":" + step, Note: "bonus of refunded or disputed top-up " + t.ID, Time: at}); err != nil {
			return t, 0, fmt.Errorf("take back bonus: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE topups SET reversed = ?, bonus_reversed = ? WHERE id = ?`,
		target, bonusTarget, t.ID); err != nil {
		return t, 0, err
	}
	t.Reversed, t.BonusReversed = target, bonusTarget
	return t, paid + bonus, nil
}

// share is part/whole of v, rounded down: the bonus that goes with part of
// a top-up. The product is 128-bit, so no amount overflows it.
func share(v, part, whole money.Micros) money.Micros {
	if v <= 0 || part <= 0 || whole <= 0 {
		return 0
	}
	if part >= whole {
		return v
	}
	hi, lo := bits.Mul64(uint64(v), uint64(part))
	q, _ := bits.Div64(hi, lo, uint64(whole)) // hi < whole since part < whole
	return money.Micros(q)
}
