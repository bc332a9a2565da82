package storetest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// newTopUp returns a pending stripe top-up of account a, not stored yet.
func newTopUp(t *testing.T, a store.Account, amount money.Micros, created time.Time) store.TopUp {
	t.Helper()
	return store.TopUp{ID: "top_" + randHex(t, 8), AccountID: a.ID, Amount: amount, Method: "card",
		Status: store.TopUpPending, Provider: "stripe", ExternalID: "cs_" + randHex(t, 12), CreatedAt: created}
}

func mustCreateTopUp(t *testing.T, s store.Store, tu store.TopUp) {
	t.Helper()
	if err := s.CreateTopUp(ctx(t), tu, store.TopUpLimits{}); err != nil {
		t.Fatalf("CreateTopUp: %v", err)
	}
}

func normTopUp(tu store.TopUp) store.TopUp {
	tu.CreatedAt, tu.PaidAt, tu.EndedAt = utc(tu.CreatedAt), utc(tu.PaidAt), utc(tu.EndedAt)
	return tu
}

// ledgerRefs returns an account's ledger as "kind ref amount" lines.
func ledgerRefs(t *testing.T, s store.Store, id string) []string {
	t.Helper()
	es, err := s.ListLedger(ctx(t), id)
	if err != nil {
		t.Fatalf("ListLedger: %v", err)
	}
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%s %s %d", e.Kind, e.Ref, e.Amount))
	}
	return out
}

func testTopUps(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a := newAccount(t, "alice", at(0))
	mustCreateAccount(t, s, a)
	first := newTopUp(t, a, 10*money.Unit, at(0))
	second := newTopUp(t, a, 20*money.Unit, at(time.Minute))
	second.Method = "alipay"
	mustCreateTopUp(t, s, first)
	mustCreateTopUp(t, s, second)

	sameExt := newTopUp(t, a, 1, at(0))
	sameExt.ExternalID = first.ExternalID
	otherProvider := sameExt
	otherProvider.ID, otherProvider.Provider, otherProvider.CreatedAt = "top_"+randHex(t, 8), "other", at(-time.Minute)
	sameID := newTopUp(t, a, 1, at(0))
	sameID.ID = first.ID
	cases := []struct {
		name string
		tu   store.TopUp
		want error
	}{
		{"duplicate external id", sameExt, store.ErrConflict},
		{"duplicate id", sameID, store.ErrConflict},
		{"missing account", newTopUp(t, store.Account{ID: "acct_missing"}, 1, at(0)), store.ErrNotFound},
		{"same external id at another provider", otherProvider, nil},
	}
	for _, c := range cases {
		wantErr(t, "CreateTopUp "+c.name, s.CreateTopUp(ctx(t), c.tu, store.TopUpLimits{}), c.want)
	}

	got, err := s.TopUpByExternalID(ctx(t), "stripe", first.ExternalID)
	if err != nil {
		t.Fatalf("TopUpByExternalID: %v", err)
	}
	assertEqual(t, "top-up", normTopUp(got), normTopUp(first))
	if _, err := s.TopUpByExternalID(ctx(t), "stripe", "cs_unknown"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TopUpByExternalID unknown: %v, want ErrNotFound", err)
	}
	list, err := s.ListTopUps(ctx(t), a.ID)
	if err != nil {
		t.Fatalf("ListTopUps: %v", err)
	}
	var ids []string
	for _, tu := range list {
		ids = append(ids, tu.ID)
	}
	assertEqual(t, "ListTopUps order", ids, []string{second.ID, first.ID, otherProvider.ID}) // newest first
	checkBalance(t, s, a.ID, 0, 0)
}

func testPayTopUp(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("CreditsOnce", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		mustCreateAccount(t, s, a)
		tu := newTopUp(t, a, 10*money.Unit, at(0))
		mustCreateTopUp(t, s, tu)
		paid := 9 * money.Unit // the provider's amount wins over the asked one
		want := tu
		want.Status, want.Credited, want.PaidAt, want.EndedAt = store.TopUpPaid, paid, at(time.Minute), at(time.Minute)
		for i := range 3 { // the first credits, repeats change nothing
			got, credited, err := s.PayTopUp(ctx(t), "stripe", tu.ExternalID, "", paid+money.Micros(i), store.BonusRule{}, at(time.Duration(i+1)*time.Minute))
			if err != nil {
				t.Fatalf("PayTopUp %d: %v", i, err)
			}
			if credited != (i == 0) {
				t.Errorf("PayTopUp %d: credited %v", i, credited)
			}
			assertEqual(t, fmt.Sprintf("PayTopUp %d top-up", i), normTopUp(got), normTopUp(want))
		}
		stored, err := s.TopUpByExternalID(ctx(t), "stripe", tu.ExternalID)
		if err != nil {
			t.Fatal(err)
		}
		assertEqual(t, "stored top-up", normTopUp(stored), normTopUp(want))
		checkBalance(t, s, a.ID, paid, 0)
		assertEqual(t, "ledger", ledgerRefs(t, s, a.ID), []string{fmt.Sprintf("topup topup:%s %d", tu.ID, paid)})
		es, _ := s.ListLedger(ctx(t), a.ID)
		if len(es) == 1 && !strings.Contains(es[0].Note, "stripe") {
			t.Errorf("ledger note %q does not name the provider", es[0].Note)
		}
		if _, _, err := s.PayTopUp(ctx(t), "stripe", "cs_unknown", "", 1, store.BonusRule{}, at(0)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("PayTopUp unknown: %v, want ErrNotFound", err)
		}
		if _, _, err := s.PayTopUp(ctx(t), "other", tu.ExternalID, "", 1, store.BonusRule{}, at(0)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("PayTopUp at another provider: %v, want ErrNotFound", err)
		}
		// A paid top-up is final: ending it changes nothing.
		if err := s.EndTopUp(ctx(t), "stripe", tu.ExternalID, store.TopUpFailed, at(time.Hour)); err != nil {
			t.Errorf("EndTopUp of a paid top-up: %v", err)
		}
		if got, _ := s.TopUpByExternalID(ctx(t), "stripe", tu.ExternalID); got.Status != store.TopUpPaid || !got.EndedAt.Equal(at(time.Minute)) {
			t.Errorf("paid top-up after EndTopUp: %+v", got)
		}
	})

	t.Run("EndedIsFinal", func(t *testing.T) {
		for _, status := range []store.TopUpStatus{store.TopUpFailed, store.TopUpExpired} {
			t.Run(string(status), func(t *testing.T) {
				s := newStore(t)
				a := newAccount(t, "alice", at(0))
				mustCreateAccount(t, s, a)
				tu := newTopUp(t, a, 10*money.Unit, at(0))
				mustCreateTopUp(t, s, tu)
				if err := s.EndTopUp(ctx(t), "stripe", tu.ExternalID, status, at(time.Minute)); err != nil {
					t.Fatalf("EndTopUp: %v", err)
				}
				// A second end, with the other status, leaves the first.
				other := map[store.TopUpStatus]store.TopUpStatus{store.TopUpFailed: store.TopUpExpired, store.TopUpExpired: store.TopUpFailed}[status]
				if err := s.EndTopUp(ctx(t), "stripe", tu.ExternalID, other, at(time.Hour)); err != nil {
					t.Errorf("EndTopUp again: %v", err)
				}
				_, credited, err := s.PayTopUp(ctx(t), "stripe", tu.ExternalID, "", 10*money.Unit, store.BonusRule{PercentPPM: 100_000}, at(2*time.Hour))
				if !errors.Is(err, store.ErrConflict) || credited {
					t.Errorf("PayTopUp after EndTopUp: credited %v, %v; want ErrConflict", credited, err)
				}
				want := tu
				want.Status, want.EndedAt = status, at(time.Minute)
				got, err := s.TopUpByExternalID(ctx(t), "stripe", tu.ExternalID)
				if err != nil {
					t.Fatal(err)
				}
				assertEqual(t, "ended top-up", normTopUp(got), normTopUp(want))
				checkBalance(t, s, a.ID, 0, 0)
				if err := s.EndTopUp(ctx(t), "stripe", "cs_unknown", status, at(0)); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("EndTopUp unknown: %v, want ErrNotFound", err)
				}
			})
		}
	})
}

func testFirstTopUpBonus(t *testing.T, newStore func(t *testing.T) store.Store) {
	cases := []struct {
		name   string
		rule   store.BonusRule
		amount money.Micros
		want   money.Micros
	}{
		{"10% of 50", store.BonusRule{PercentPPM: 100_000}, 50 * money.Unit, 5 * money.Unit},
		{"10% of 500 capped at 20", store.BonusRule{PercentPPM: 100_000, Max: 20 * money.Unit}, 500 * money.Unit, 20 * money.Unit},
		{"10% of 50 under the cap", store.BonusRule{PercentPPM: 100_000, Max: 20 * money.Unit}, 50 * money.Unit, 5 * money.Unit},
		{"rounds down", store.BonusRule{PercentPPM: 100_000}, 59, 5},
		{"percent 0", store.BonusRule{Max: 20 * money.Unit}, 50 * money.Unit, 0},
	}
	s := newStore(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAccount(t, "acct-"+randHex(t, 4), at(0))
			mustCreateAccount(t, s, a)
			first := newTopUp(t, a, 1, at(0)) // asked 1: the bonus follows the paid amount
			second := newTopUp(t, a, c.amount, at(time.Minute))
			mustCreateTopUp(t, s, first)
			mustCreateTopUp(t, s, second)

			got, credited, err := s.PayTopUp(ctx(t), "stripe", first.ExternalID, "", c.amount, c.rule, at(time.Hour))
			if err != nil || !credited || got.Bonus != c.want {
				t.Fatalf("first PayTopUp: bonus %v credited %v, %v; want bonus %v", got.Bonus, credited, err, c.want)
			}
			if stored, _ := s.TopUpByExternalID(ctx(t), "stripe", first.ExternalID); stored.Bonus != c.want {
				t.Errorf("stored bonus %v, want %v", stored.Bonus, c.want)
			}
			got, credited, err = s.PayTopUp(ctx(t), "stripe", second.ExternalID, "", c.amount, c.rule, at(2*time.Hour))
			if err != nil || !credited || got.Bonus != 0 {
				t.Errorf("second PayTopUp: bonus %v credited %v, %v; want no bonus", got.Bonus, credited, err)
			}
			checkBalance(t, s, a.ID, 2*c.amount+c.want, 0)
			want := []string{fmt.Sprintf("topup topup:%s %d", first.ID, c.amount)}
			if c.want > 0 {
				want = append(want, fmt.Sprintf("bonus first-topup-bonus:%s %d", a.ID, c.want))
			}
			want = append(want, fmt.Sprintf("topup topup:%s %d", second.ID, c.amount))
			assertEqual(t, "ledger", ledgerRefs(t, s, a.ID), want)
		})
	}

	// A bonus ref already in the ledger (an operator's manual posting, or a
	// racing transaction that committed first) means no second bonus; the
	// top-up is still paid, and balance and ledger stay together.
	t.Run("bonus ref taken", func(t *testing.T) {
		a := newAccount(t, "acct-"+randHex(t, 4), at(0))
		mustCreateAccount(t, s, a)
		if _, err := s.Post(ctx(t), store.LedgerEntry{AccountID: a.ID, Kind: store.KindBonus, Amount: 3,
			Ref: "first-topup-bonus:" + a.ID, Time: at(0)}); err != nil {
			t.Fatalf("Post: %v", err)
		}
		tu := newTopUp(t, a, 50*money.Unit, at(0))
		mustCreateTopUp(t, s, tu)
		got, credited, err := s.PayTopUp(ctx(t), "stripe", tu.ExternalID, "", 50*money.Unit, store.BonusRule{PercentPPM: 100_000}, at(time.Hour))
		if err != nil || !credited || got.Bonus != 0 {
			t.Fatalf("PayTopUp: bonus %v credited %v, %v; want credited, no bonus", got.Bonus, credited, err)
		}
		if stored, _ := s.TopUpByExternalID(ctx(t), "stripe", tu.ExternalID); stored.Bonus != 0 || stored.Status != store.TopUpPaid {
			t.Errorf("stored top-up %+v", stored)
		}
		checkBalance(t, s, a.ID, 50*money.Unit+3, 0)
		assertEqual(t, "ledger", ledgerRefs(t, s, a.ID), []string{"bonus first-topup-bonus:" + a.ID + " 3",
			fmt.Sprintf("topup topup:%s %d", tu.ID, 50*money.Unit)})
	})
}

func testPayTopUpRaces(t *testing.T, newStore func(t *testing.T) store.Store) {
	const n = 8
	rule := store.BonusRule{PercentPPM: 100_000}
	amount := 10 * money.Unit

	t.Run("DifferentFirstTopUps", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		mustCreateAccount(t, s, a)
		tus := make([]store.TopUp, n)
		for i := range tus {
			tus[i] = newTopUp(t, a, amount, at(time.Duration(i)*time.Second))
			mustCreateTopUp(t, s, tus[i])
		}
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			bonuses int
		)
		for _, tu := range tus {
			wg.Go(func() {
				got, credited, err := s.PayTopUp(ctx(t), "stripe", tu.ExternalID, "", amount, rule, at(time.Hour))
				if err != nil || !credited {
					t.Errorf("PayTopUp %s: credited %v, %v", tu.ID, credited, err)
				}
				if got.Bonus != 0 {
					mu.Lock()
					bonuses++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if bonuses != 1 {
			t.Errorf("%d top-ups got the bonus, want 1", bonuses)
		}
		checkBalance(t, s, a.ID, n*amount+money.Unit, 0)
		list, err := s.ListTopUps(ctx(t), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		var stored money.Micros
		for _, tu := range list {
			stored += tu.Bonus
		}
		if stored != money.Unit {
			t.Errorf("stored bonuses sum to %v, want %v", stored, money.Unit)
		}
	})

	t.Run("SameTopUp", func(t *testing.T) {
		s := newStore(t)
		a := newAccount(t, "alice", at(0))
		mustCreateAccount(t, s, a)
		tu := newTopUp(t, a, amount, at(0))
		mustCreateTopUp(t, s, tu)
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			credits int
		)
		for range n {
			wg.Go(func() {
				got, credited, err := s.PayTopUp(ctx(t), "stripe", tu.ExternalID, "", amount, rule, at(time.Hour))
				if err != nil || got.Status != store.TopUpPaid {
					t.Errorf("PayTopUp: %+v, %v", got, err)
				}
				if credited {
					mu.Lock()
					credits++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if credits != 1 {
			t.Errorf("%d calls credited, want 1", credits)
		}
		checkBalance(t, s, a.ID, amount+money.Unit, 0)
		if refs := ledgerRefs(t, s, a.ID); len(refs) != 2 {
			t.Errorf("ledger %q, want one top-up and one bonus", refs)
		}
	})
}

// newCode returns an unused code of batch, not stored yet.
func newCode(t *testing.T, batch string, amount money.Micros, created, expires time.Time) store.RedeemCode {
	t.Helper()
	sum := sha256.Sum256([]byte(randHex(t, 16)))
	return store.RedeemCode{ID: "code_" + randHex(t, 8), Hash: sum[:], Batch: batch, Amount: amount,
		CreatedAt: created, ExpiresAt: expires}
}

func normCode(c store.RedeemCode) store.RedeemCode {
	c.CreatedAt, c.ExpiresAt, c.RedeemedAt = utc(c.CreatedAt), utc(c.ExpiresAt), utc(c.RedeemedAt)
	return c
}

func codeIDs(t *testing.T, s store.Store, batch string) []string {
	t.Helper()
	cs, err := s.ListCodes(ctx(t), batch)
	if err != nil {
		t.Fatalf("ListCodes(%q): %v", batch, err)
	}
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}

func testCodes(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("CreateRedeem", func(t *testing.T) {
		s := newStore(t)
		alice := newAccount(t, "alice", at(0))
		bob := newAccount(t, "bob", at(0))
		mustCreateAccount(t, s, alice)
		mustCreateAccount(t, s, bob)
		plain := newCode(t, "b1", 5*money.Unit, at(0), time.Time{})
		dated := newCode(t, "b1", 7*money.Unit, at(time.Second), at(time.Hour))
		stale := newCode(t, "b1", 9*money.Unit, at(2*time.Second), at(time.Hour))
		other := newCode(t, "b2", 1*money.Unit, at(3*time.Second), time.Time{})
		if err := s.CreateCodes(ctx(t), []store.RedeemCode{plain, dated, stale}); err != nil {
			t.Fatalf("CreateCodes: %v", err)
		}
		if err := s.CreateCodes(ctx(t), []store.RedeemCode{other}); err != nil {
			t.Fatalf("CreateCodes: %v", err)
		}
		fresh := newCode(t, "b3", 1, at(0), time.Time{})
		dupHash := newCode(t, "b3", 1, at(0), time.Time{})
		dupHash.Hash = plain.Hash
		dupID := newCode(t, "b3", 1, at(0), time.Time{})
		dupID.ID = plain.ID
		inBatch := newCode(t, "b3", 1, at(0), time.Time{})
		inBatch.Hash = fresh.Hash
		for name, batch := range map[string][]store.RedeemCode{
			"taken hash":          {fresh, dupHash},
			"taken id":            {fresh, dupID},
			"hash twice in batch": {fresh, inBatch},
		} {
			wantErr(t, "CreateCodes "+name, s.CreateCodes(ctx(t), batch), store.ErrConflict)
		}
		assertEqual(t, "batch b3 after conflicts", codeIDs(t, s, "b3"), []string(nil))
		assertEqual(t, "batch b1", codeIDs(t, s, "b1"), []string{plain.ID, dated.ID, stale.ID})
		assertEqual(t, "every code", codeIDs(t, s, ""), []string{plain.ID, dated.ID, stale.ID, other.ID})
		cs, _ := s.ListCodes(ctx(t), "b1")
		if len(cs) == 3 {
			assertEqual(t, "listed code", normCode(cs[1]), normCode(dated))
		}

		steps := []struct {
			name    string
			hash    []byte
			account store.Account
			at      time.Time
			want    error
		}{
			{"plain", plain.Hash, alice, at(time.Minute), nil},
			{"plain again", plain.Hash, alice, at(time.Minute), store.ErrConflict},
			{"plain by another", plain.Hash, bob, at(time.Minute), store.ErrConflict},
			{"dated before expiry", dated.Hash, bob, at(time.Hour - time.Microsecond), nil},
			{"stale at expiry", stale.Hash, alice, at(time.Hour), store.ErrNotFound},
			{"unknown", make([]byte, 32), alice, at(0), store.ErrNotFound},
			{"missing account", other.Hash, store.Account{ID: "acct_missing"}, at(0), store.ErrNotFound},
		}
		for _, st := range steps {
			c, err := s.RedeemCode(ctx(t), st.hash, st.account.ID, st.at)
			wantErr(t, "RedeemCode "+st.name, err, st.want)
			if err == nil && (c.RedeemedBy != st.account.ID || !c.RedeemedAt.Equal(st.at) || c.Amount == 0) {
				t.Errorf("RedeemCode %s: %+v", st.name, c)
			}
		}
		checkBalance(t, s, alice.ID, 5*money.Unit, 0)
		checkBalance(t, s, bob.ID, 7*money.Unit, 0)
		assertEqual(t, "alice's ledger", ledgerRefs(t, s, alice.ID), []string{fmt.Sprintf("code code:%s %d", plain.ID, 5*money.Unit)})
		assertEqual(t, "bob's ledger", ledgerRefs(t, s, bob.ID), []string{fmt.Sprintf("code code:%s %d", dated.ID, 7*money.Unit)})
		cs, _ = s.ListCodes(ctx(t), "")
		var redeemed []string
		for _, c := range cs {
			if c.RedeemedBy != "" {
				redeemed = append(redeemed, c.ID+" "+c.RedeemedBy)
			}
		}
		assertEqual(t, "redeemed codes", redeemed, []string{plain.ID + " " + alice.ID, dated.ID + " " + bob.ID})
	})

	t.Run("RedeemRace", func(t *testing.T) {
		const n = 8
		s := newStore(t)
		code := newCode(t, "race", 3*money.Unit, at(0), time.Time{})
		if err := s.CreateCodes(ctx(t), []store.RedeemCode{code}); err != nil {
			t.Fatal(err)
		}
		accts := make([]store.Account, n)
		for i := range accts {
			accts[i] = newAccount(t, fmt.Sprintf("racer-%d", i), at(0))
			mustCreateAccount(t, s, accts[i])
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			wins int
		)
		for _, a := range accts {
			wg.Go(func() {
				_, err := s.RedeemCode(ctx(t), code.Hash, a.ID, at(time.Minute))
				switch {
				case err == nil:
					mu.Lock()
					wins++
					mu.Unlock()
				case !errors.Is(err, store.ErrConflict):
					t.Errorf("RedeemCode: %v, want nil or ErrConflict", err)
				}
			})
		}
		wg.Wait()
		if wins != 1 {
			t.Errorf("%d redemptions won, want 1", wins)
		}
		var total money.Micros
		for _, a := range accts {
			got, err := s.AccountByID(ctx(t), a.ID)
			if err != nil {
				t.Fatal(err)
			}
			checkBalance(t, s, a.ID, got.Balance, 0)
			total += got.Balance
		}
		if total != code.Amount {
			t.Errorf("credited %v in total, want %v", total, code.Amount)
		}
	})
}
