package sqlstore

import (
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// TestUpgradeKeepsLedger opens a database written by the schema before
// 0008 (charges as ledger rows) and checks that the upgrade reads the same
// ledger, charges new records once with ids after the old ones, and does not
// charge again an old record stored again after the purge.
func TestUpgradeKeepsLedger(t *testing.T) {
	ctx := testCtx(t)
	path, db := oldSchema(t, 7)
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	us := func(d time.Duration) int64 { return toMicros(t0.Add(d)) }
	// What the old InsertUsage wrote: a top-up, two records, two charge rows.
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO accounts (id, name, created_at, balance, spent) VALUES ('acct_1', 'acme', ?, 997000, 3000)`, []any{us(0)}},
		{`INSERT INTO ledger (account_id, kind, amount, balance_after, ref, created_at) VALUES ('acct_1', 'topup', 1000000, 1000000, 'pay_1', ?)`, []any{us(0)}},
		{`INSERT INTO usage_records (request_id, time, account_id, cost, status) VALUES ('req_old1', ?, 'acct_1', 1000, 200), ('req_old2', ?, 'acct_1', 2000, 200)`, []any{us(time.Second), us(2 * time.Second)}},
		{`INSERT INTO ledger (account_id, kind, amount, balance_after, ref, created_at) VALUES ('acct_1', 'charge', -1000, 999000, 'req_old1', ?), ('acct_1', 'charge', -2000, 997000, 'req_old2', ?)`, []any{us(time.Second), us(2 * time.Second)}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := openAt(t, path)
	before, err := s.ListLedger(ctx, "acct_1")
	if err != nil || len(before) != 3 || before[2].ID != 3 || before[2].Ref != "req_old2" {
		t.Fatalf("ledger after the upgrade: %+v, %v", before, err)
	}
	checkSum := func(balance money.Micros) {
		t.Helper()
		a, err := s.AccountByID(ctx, "acct_1")
		if err != nil {
			t.Fatal(err)
		}
		sum, err := s.LedgerSum(ctx, "acct_1")
		if err != nil || a.Balance != balance || sum != balance {
			t.Errorf("balance %v, ledger sum %v (%v); want %v", a.Balance, sum, err, balance)
		}
	}
	checkSum(997000)

	rec := func(id string, cost money.Micros, at time.Duration) store.UsageRecord {
		return store.UsageRecord{RequestID: id, Time: t0.Add(at), AccountID: "acct_1", Cost: cost, Status: 200}
	}
	// req_old1 comes back (its record purged, say): stored, not charged.
	if _, err := s.PurgeUsage(ctx, t0.Add(1500*time.Millisecond), 10); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertUsage(ctx, []store.UsageRecord{rec("req_old1", 1000, time.Second), rec("req_new", 500, time.Hour)}); err != nil {
		t.Fatal(err)
	}
	checkSum(996500)
	if _, err := s.Post(ctx, store.LedgerEntry{AccountID: "acct_1", Kind: store.KindBonus, Amount: 7, Time: t0.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	checkSum(996507)
	after, err := s.ListLedger(ctx, "acct_1")
	if err != nil || len(after) != 5 {
		t.Fatalf("ledger: %+v, %v", after, err)
	}
	if e := after[3]; e.ID != 4 || e.Kind != store.KindCharge || e.Ref != "req_new" || e.Amount != -500 || e.BalanceAfter != 996500 {
		t.Errorf("new charge %+v, want id 4 after the old rows", e)
	}
	if e := after[4]; e.ID != 5 || e.Kind != store.KindBonus {
		t.Errorf("bonus %+v, want id 5: Post continues after the record's charge", e)
	}
}
