//go:build unix

package main

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
	"github.com/modelgate/modelgate/internal/store"
)

// testReplicaBalance: an account holding enough for about ten requests
// sends sixty at once over three replicas, each request a half-second
// stream. However the replicas split them, what is charged never exceeds
// what was credited, the balance never goes below zero, and the ledger
// agrees with the balance and the usage records.
func testReplicaBalance(t *testing.T, bin string, b backends) {
	up := providertest.NewOpenAI(t)
	c := newCluster(t, bin, b, clusterSpec{replicas: 3, extra: func(int) string { return chatProviders(up.URL) }})
	const credit = "0.3" // 0.029 a request
	secret, _ := c.newKey("acme", credit)
	c.startAll()

	answers := fire(newClient(), c.bases(), secret, pacedChat, 60)
	served := 0
	for _, a := range answers {
		switch {
		case a.status == http.StatusOK && a.complete:
			served++
		case a.status == http.StatusTooManyRequests:
			checkOpenAIError(t, a, http.StatusTooManyRequests, "insufficient_quota", "insufficient_quota")
		default:
			t.Errorf("replica %d: %d %v %.200s", a.replica, a.status, a.err, a.body)
		}
	}
	c.stopAll() // every record and charge reaches the database

	acct, recs := checkLedger(t, c, "acme")
	limit := mustMicros(t, credit)
	var charged money.Micros
	for _, r := range recs {
		charged += r.Cost
	}
	t.Logf("%d of 60 served (%v by status); charged %v of %v; balance %v", served, tally(answers), charged, limit, acct.Balance)
	if acct.Balance < 0 || charged > limit || acct.Spent > limit {
		t.Errorf("overspent across replicas: charged %v, spent %v of %v credited, balance %v", charged, acct.Spent, limit, acct.Balance)
	}
	if served == 0 {
		t.Error("no request was served")
	}
}

// checkLedger reads account's balance, ledger and usage records from the
// shared database and fails the test unless they agree: the ledger sums
// to the balance, every charged record has exactly one charge of its cost
// and no charge lacks a record, and spent is the records' cost.
func checkLedger(t *testing.T, c *cluster, account string) (store.Account, []store.UsageRecord) {
	t.Helper()
	var (
		acct    store.Account
		recs    []store.UsageRecord
		entries []store.LedgerEntry
		sum     money.Micros
	)
	c.withStore(func(ctx context.Context, st store.Store) {
		var err error
		if acct, err = st.AccountByName(ctx, account); err != nil {
			t.Fatal(err)
		}
		if recs, err = st.ListUsage(ctx, store.UsageFilter{AccountID: acct.ID}); err != nil {
			t.Fatal(err)
		}
		if entries, err = st.ListLedger(ctx, acct.ID); err != nil {
			t.Fatal(err)
		}
		if sum, err = st.LedgerSum(ctx, acct.ID); err != nil {
			t.Fatal(err)
		}
	})
	charges := map[string][]money.Micros{}
	var posted money.Micros
	for _, e := range entries {
		posted += e.Amount
		if e.Kind == store.KindCharge {
			charges[e.Ref] = append(charges[e.Ref], -e.Amount)
		}
	}
	var cost money.Micros
	charged := 0
	for _, r := range recs {
		cost += r.Cost
		if r.Cost == 0 {
			continue
		}
		charged++
		if got := charges[r.RequestID]; len(got) != 1 || got[0] != r.Cost {
			t.Errorf("request %s cost %v, charged %v", r.RequestID, r.Cost, got)
		}
	}
	if len(charges) != charged || sum != acct.Balance || posted != acct.Balance || acct.Spent != cost {
		t.Errorf("ledger of %s: %d charges for %d charged records; ledger sum %v (entries %v), balance %v, spent %v, records' cost %v",
			account, len(charges), charged, sum, posted, acct.Balance, acct.Spent, cost)
	}
	return acct, recs
}
