package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// paidTopUp stores a top-up of a and pays it with payment ref pi and the
// first-top-up bonus rule (10%); it returns the paid top-up.
func paidTopUp(t *testing.T, s store.Store, a store.Account, amount money.Micros, pi string) store.TopUp {
	t.Helper()
	tu := newTopUp(t, a, amount, at(0))
	mustCreateTopUp(t, s, tu)
	got, credited, err := s.PayTopUp(ctx(t), "stripe", tu.ExternalID, pi, amount, store.BonusRule{PercentPPM: 100_000}, at(time.Minute))
	if err != nil || !credited || got.PaymentRef != pi {
		t.Fatalf("PayTopUp: %+v credited %v, %v", got, credited, err)
	}
	return got
}

func reversal(pi string, kind store.ReversalKind, total money.Micros) store.TopUpReversal {
	return store.TopUpReversal{Provider: "stripe", PaymentRef: pi, Kind: kind, Total: total}
}

func testReverseTopUp(t *testing.T, newStore func(t *testing.T) store.Store) {
	u := money.Unit
	type step struct {
		r       store.TopUpReversal
		debited money.Micros // taken from the balance by this step
	}
	cases := []struct {
		name                string
		steps               []step
		reversed, bonusBack money.Micros // the top-up's after all steps
	}{
		{"full refund takes the bonus too", []step{{reversal("pi_1", store.ReversalRefund, 50*u), 55 * u}}, 50 * u, 5 * u},
		{"partial refunds, each its share", []step{
			{reversal("pi_1", store.ReversalRefund, 10*u), 11 * u},
			{reversal("pi_1", store.ReversalRefund, 30*u), 22 * u}, // the running total: 20 more
			{reversal("pi_1", store.ReversalRefund, 50*u), 22 * u},
		}, 50 * u, 5 * u},
		{"repeated and out of order", []step{
			{reversal("pi_1", store.ReversalRefund, 30*u), 33 * u},
			{reversal("pi_1", store.ReversalRefund, 30*u), 0},
			{reversal("pi_1", store.ReversalRefund, 10*u), 0},
		}, 30 * u, 3 * u},
		{"a dispute after a partial refund stops at what was paid", []step{
			{reversal("pi_1", store.ReversalRefund, 20*u), 22 * u},
			{reversal("pi_1", store.ReversalDispute, 50*u), 33 * u},
			{reversal("pi_1", store.ReversalRefund, 50*u), 0},
		}, 50 * u, 5 * u},
		{"the bonus share rounds down", []step{{reversal("pi_1", store.ReversalRefund, 7), 7}}, 7, 0},
		{"zero", []step{{reversal("pi_1", store.ReversalDispute, 0), 0}}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			a := newAccount(t, "alice", at(0))
			mustCreateAccount(t, s, a)
			tu := paidTopUp(t, s, a, 50*u, "pi_1")
			if tu.Bonus != 5*u {
				t.Fatalf("bonus %v", tu.Bonus)
			}
			var taken money.Micros
			for i, st := range c.steps {
				got, debited, err := s.ReverseTopUp(ctx(t), st.r, at(time.Duration(i+2)*time.Minute))
				if err != nil || debited != st.debited || got.ID != tu.ID {
					t.Fatalf("step %d: top-up %s debited %v, %v; want %v", i, got.ID, debited, err, st.debited)
				}
				taken += debited
			}
			stored, err := s.TopUpByExternalID(ctx(t), "stripe", tu.ExternalID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Reversed != c.reversed || stored.BonusReversed != c.bonusBack || stored.Status != store.TopUpPaid ||
				stored.Credited != 50*u || stored.Bonus != 5*u {
				t.Errorf("top-up after: %+v; want reversed %v, bonus reversed %v", stored, c.reversed, c.bonusBack)
			}
			if taken != c.reversed+c.bonusBack {
				t.Errorf("taken %v, want %v", taken, c.reversed+c.bonusBack)
			}
			checkBalance(t, s, a.ID, 55*u-taken, 0)
		})
	}

	t.Run("Ledger", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		mustCreateAccount(t, s, a)
		tu := paidTopUp(t, s, a, 50*u, "pi_1")
		for _, total := range []money.Micros{20 * u, 50 * u} {
			if _, _, err := s.ReverseTopUp(ctx(t), reversal("pi_1", store.ReversalRefund, total), at(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		assertEqual(t, "ledger", ledgerRefs(t, s, a.ID), []string{
			fmt.Sprintf("topup topup:%s %d", tu.ID, 50*u),
			fmt.Sprintf("bonus first-topup-bonus:%s %d", a.ID, 5*u),
			fmt.Sprintf("topup topup-reversal:%s:%d %d", tu.ID, 20*u, -20*u),
			fmt.Sprintf("bonus topup-reversal-bonus:%s:%d %d", tu.ID, 20*u, -2*u),
			fmt.Sprintf("topup topup-reversal:%s:%d %d", tu.ID, 50*u, -30*u),
			fmt.Sprintf("bonus topup-reversal-bonus:%s:%d %d", tu.ID, 50*u, -3*u),
		})
	})

	// What was spent stays spent: the balance goes below zero.
	t.Run("BelowZero", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		mustCreateAccount(t, s, a)
		paidTopUp(t, s, a, 50*u, "pi_1")
		if _, err := s.Post(ctx(t), store.LedgerEntry{AccountID: a.ID, Kind: store.KindCharge, Amount: -40 * u, Time: at(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.ReverseTopUp(ctx(t), reversal("pi_1", store.ReversalDispute, 50*u), at(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		checkBalance(t, s, a.ID, -40*u, 40*u)
	})

	// A refund can arrive before the payment's top-up is known as paid:
	// it is kept and taken back when the top-up is paid.
	t.Run("BeforePaid", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		mustCreateAccount(t, s, a)
		tu := newTopUp(t, a, 50*u, at(0))
		mustCreateTopUp(t, s, tu)
		if _, _, err := s.ReverseTopUp(ctx(t), reversal("pi_1", store.ReversalRefund, 25*u), at(time.Minute)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("ReverseTopUp before paid: %v, want ErrNotFound", err)
		}
		checkBalance(t, s, a.ID, 0, 0)
		got, credited, err := s.PayTopUp(ctx(t), "stripe", tu.ExternalID, "pi_1", 50*u, store.BonusRule{PercentPPM: 100_000}, at(2*time.Minute))
		if err != nil || !credited || got.Reversed != 25*u || got.BonusReversed != 5*u/2 {
			t.Fatalf("PayTopUp: %+v credited %v, %v", got, credited, err)
		}
		checkBalance(t, s, a.ID, 55*u/2, 0)
		// A payment nobody paid a top-up with is kept too, and takes nothing.
		if _, _, err := s.ReverseTopUp(ctx(t), reversal("pi_other", store.ReversalRefund, u), at(time.Hour)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ReverseTopUp of an unknown payment: %v, want ErrNotFound", err)
		}
		checkBalance(t, s, a.ID, 55*u/2, 0)
	})

	// A top-up paid by an event that did not name the payment learns it
	// from a later one, and what was reversed meanwhile is taken back.
	t.Run("PaymentLearnedLater", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		mustCreateAccount(t, s, a)
		tu := newTopUp(t, a, 10*u, at(0))
		mustCreateTopUp(t, s, tu)
		if _, _, err := s.PayTopUp(ctx(t), "stripe", tu.ExternalID, "", 10*u, store.BonusRule{}, at(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.ReverseTopUp(ctx(t), reversal("pi_9", store.ReversalRefund, 10*u), at(2*time.Minute)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("ReverseTopUp: %v, want ErrNotFound", err)
		}
		got, credited, err := s.PayTopUp(ctx(t), "stripe", tu.ExternalID, "pi_9", 10*u, store.BonusRule{}, at(3*time.Minute))
		if err != nil || credited || got.PaymentRef != "pi_9" || got.Reversed != 10*u {
			t.Fatalf("PayTopUp again: %+v credited %v, %v", got, credited, err)
		}
		checkBalance(t, s, a.ID, 0, 0)
		// The payment belongs to one top-up.
		other := newTopUp(t, a, 10*u, at(0))
		mustCreateTopUp(t, s, other)
		if _, _, err := s.PayTopUp(ctx(t), "stripe", other.ExternalID, "pi_9", 10*u, store.BonusRule{}, at(time.Hour)); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a second top-up paid with the same payment: %v, want ErrConflict", err)
		}
		checkBalance(t, s, a.ID, 0, 0)
	})

	t.Run("BadInput", func(t *testing.T) {
		s := newStore(t)
		for _, r := range []store.TopUpReversal{
			{Provider: "stripe", PaymentRef: "pi_1", Kind: "chargeback", Total: 1},
			{Provider: "stripe", PaymentRef: "pi_1", Kind: store.ReversalRefund, Total: -1},
			{Provider: "stripe", Kind: store.ReversalRefund, Total: 1},
		} {
			if _, _, err := s.ReverseTopUp(ctx(t), r, at(0)); err == nil || errors.Is(err, store.ErrNotFound) {
				t.Errorf("ReverseTopUp(%+v): %v, want a refusal", r, err)
			}
		}
	})
}

func testTopUpLimits(t *testing.T, newStore func(t *testing.T) store.Store) {
	lim := func(now time.Time) store.TopUpLimits {
		return store.TopUpLimits{MaxOpen: 2, OpenSince: now.Add(-time.Hour), MaxRecent: 3, RecentSince: now.Add(-time.Hour)}
	}
	t.Run("Counts", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		b := newAccount(t, "bob", at(0))
		mustCreateAccount(t, s, a)
		mustCreateAccount(t, s, b)
		create := func(acct store.Account, created, now time.Time) (store.TopUp, error) {
			tu := newTopUp(t, acct, money.Unit, created)
			return tu, s.CreateTopUp(ctx(t), tu, lim(now))
		}
		now := at(2 * time.Hour)
		// An open top-up from before the window no longer counts.
		if _, err := create(a, now.Add(-90*time.Minute), now.Add(-90*time.Minute)); err != nil {
			t.Fatal(err)
		}
		first, err := create(a, now.Add(-time.Minute), now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := create(a, now, now); err != nil {
			t.Fatal(err)
		}
		wantErr(t, "a third open top-up", s.CheckTopUpLimits(ctx(t), a.ID, lim(now)), store.ErrLimit)
		if _, err := create(a, now, now); !errors.Is(err, store.ErrLimit) {
			t.Fatalf("a third open top-up: %v, want ErrLimit", err)
		}
		wantErr(t, "another account", s.CheckTopUpLimits(ctx(t), b.ID, lim(now)), nil)
		wantErr(t, "no limits", s.CheckTopUpLimits(ctx(t), a.ID, store.TopUpLimits{}), nil)
		// Once one ends, a third may start, but a fourth in the hour may not.
		if err := s.EndTopUp(ctx(t), "stripe", first.ExternalID, store.TopUpExpired, now); err != nil {
			t.Fatal(err)
		}
		wantErr(t, "after one ended", s.CheckTopUpLimits(ctx(t), a.ID, lim(now)), nil)
		if _, err := create(a, now, now); err != nil {
			t.Fatalf("a third top-up in the hour: %v", err)
		}
		list, _ := s.ListTopUps(ctx(t), a.ID)
		for _, tu := range list {
			if tu.Status == store.TopUpPending && tu.CreatedAt.Equal(now) {
				if err := s.EndTopUp(ctx(t), "stripe", tu.ExternalID, store.TopUpFailed, now); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := create(a, now, now); !errors.Is(err, store.ErrLimit) {
			t.Fatalf("a fourth top-up in the hour: %v, want ErrLimit", err)
		}
		// An hour later the window has moved on.
		later := now.Add(time.Hour + time.Second)
		if _, err := create(a, later, later); err != nil {
			t.Fatalf("an hour later: %v", err)
		}
		if list, _ = s.ListTopUps(ctx(t), a.ID); len(list) != 5 {
			t.Errorf("%d top-ups stored, want 5", len(list))
		}
	})

	// Racing creations are counted one after the other: exactly MaxOpen win.
	t.Run("Race", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		mustCreateAccount(t, s, a)
		const n = 8
		now := at(time.Hour)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = s.CreateTopUp(ctx(t), newTopUp(t, a, money.Unit, now), lim(now)) })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrLimit):
				t.Errorf("CreateTopUp: %v", err)
			}
		}
		if list, _ := s.ListTopUps(ctx(t), a.ID); won != 2 || len(list) != 2 {
			t.Errorf("%d creations won, %d stored; want 2", won, len(list))
		}
	})
}
