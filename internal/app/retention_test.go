package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/store/sqlstore"
)

// seedOldUsage stores, before the gateway opens the database, a charged
// record 500 days old and one a day old for a funded account.
func seedOldUsage(t *testing.T, cfg *config.Config) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, strings.TrimPrefix(cfg.Database, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	if err := st.CreateAccount(ctx, store.Account{ID: "acct_old", Name: "old", CreatedAt: now.AddDate(-2, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Post(ctx, store.LedgerEntry{AccountID: "acct_old", Kind: store.KindTopUp, Amount: money.Unit, Time: now.AddDate(-2, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	if err := st.InsertUsage(ctx, []store.UsageRecord{
		{RequestID: "req_ancient", Time: now.Add(-500 * 24 * time.Hour), AccountID: "acct_old", Cost: 300, Status: 200},
		{RequestID: "req_recent", Time: now.Add(-24 * time.Hour), AccountID: "acct_old", Cost: 200, Status: 200},
	}); err != nil {
		t.Fatal(err)
	}
}

// A running gateway purges the records older than usage.retention (the
// default, 400 days, here) and leaves the ledger and the balance alone.
func TestUsageRetentionPurge(t *testing.T) {
	g := startGateway(t, func(cfg *config.Config) { seedOldUsage(t, cfg) })
	st := g.app.Store()
	deadline := time.Now().Add(30 * time.Second)
	for {
		recs, err := st.ListUsage(context.Background(), store.UsageFilter{AccountID: "acct_old"})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 1 {
			if recs[0].RequestID != "req_recent" {
				t.Fatalf("kept %s, want req_recent", recs[0].RequestID)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d records after 30s, want the 500-day-old one purged", len(recs))
		}
		time.Sleep(10 * time.Millisecond)
	}
	a, err := st.AccountByID(context.Background(), "acct_old")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := st.LedgerSum(context.Background(), "acct_old")
	if err != nil || a.Balance != money.Unit-500 || a.Spent != 500 || sum != a.Balance {
		t.Errorf("balance %v spent %v ledger %v (%v); want the charges of purged records kept", a.Balance, a.Spent, sum, err)
	}
}

// usage.retention: 0 keeps every record.
func TestUsageRetentionForever(t *testing.T) {
	g := startGateway(t, func(cfg *config.Config) {
		cfg.Usage.Retention = 0
		seedOldUsage(t, cfg)
	})
	time.Sleep(200 * time.Millisecond) // a purger would have made its first pass
	if recs := g.usage(); len(recs) != 2 {
		t.Errorf("%d records, want both kept", len(recs))
	}
}
