package sqlstore

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// TestUpgradeLedgerKinds opens a database of schema 16 and checks that 0017
// turns a redeemed code's topup entry into a code entry and leaves a paid
// top-up alone, and that blocks written before 0017 (no first_charge) are
// paged like new ones.
func TestUpgradeLedgerKinds(t *testing.T) {
	ctx := testCtx(t)
	path, db := oldSchema(t, 16)
	for _, q := range []string{
		`INSERT INTO accounts (id, name, created_at, balance) VALUES ('acct_1', 'acme', 0, 3000000)`,
		`INSERT INTO ledger (account_id, kind, amount, balance_after, ref, created_at) VALUES
			('acct_1', 'topup', 1000000, 1000000, 'topup:top_1', 1), ('acct_1', 'topup', 2000000, 3000000, 'code:code_1', 2)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s := openAt(t, path)
	var recs []store.UsageRecord
	for i := range 40 {
		recs = append(recs, store.UsageRecord{RequestID: fmt.Sprintf("req_%02d", i), AccountID: "acct_1",
			Time: time.Unix(100+int64(i), 0), Cost: 10, Status: 200})
	}
	for i := 0; i < len(recs); i += 7 {
		if err := s.InsertUsage(ctx, recs[i:min(i+7, len(recs))]); err != nil {
			t.Fatal(err)
		}
	}
	// As if the blocks were written before 0017.
	if _, err := s.db.ExecContext(ctx, `UPDATE usage_blocks SET first_charge = NULL`); err != nil {
		t.Fatal(err)
	}
	full, err := s.ListLedger(ctx, "acct_1")
	if err != nil || len(full) != 42 || full[0].Kind != store.KindTopUp || full[1].Kind != store.KindCode {
		t.Fatalf("ledger after 0017: %d entries %+v, %v", len(full), full[:min(2, len(full))], err)
	}
	slices.Reverse(full)
	var got []store.LedgerEntry
	q := store.LedgerQuery{AccountID: "acct_1", Limit: 6}
	for {
		page, next, err := s.LedgerPage(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page...)
		if next == 0 {
			break
		}
		q.Before = next
	}
	if len(got) != len(full) {
		t.Fatalf("paged %d entries, want %d", len(got), len(full))
	}
	for i := range got {
		if got[i].ID != full[i].ID || got[i].Kind != full[i].Kind || got[i].BalanceAfter != full[i].BalanceAfter {
			t.Fatalf("entry %d: got %+v, want %+v", i, got[i], full[i])
		}
	}
}
