package app_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store/pgtest"
)

// postgresReplicas starts two gateways on one fresh PostgreSQL schema,
// each with its own journal and media folders and an hour's key cache.
func postgresReplicas(t *testing.T) (*gateway, *gateway) {
	t.Helper()
	dsn := pgtest.DSN(t)
	replica := func(c *config.Config) {
		withBudgetModel(c)
		c.Database = dsn
		c.Usage.JournalDir = t.TempDir()
		c.Images.Dir, c.Video.Dir = t.TempDir(), t.TempDir()
		c.AuthCacheTTL = config.Duration(time.Hour) // revocations must not wait for it
	}
	return startGateway(t, replica), startGateway(t, replica)
}

// budgetChat asks for one budget-model answer (it costs exactly its
// reservation) and returns the status.
func budgetChat(t *testing.T, g *gateway, secret string) int {
	params := oai.ChatCompletionNewParams{Model: "budget-model", MaxTokens: oai.Int(10),
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}}
	c := g.client(secret)
	_, err := c.Chat.Completions.New(context.Background(), params)
	var e *oai.Error
	switch {
	case err == nil:
		return http.StatusOK
	case errors.As(err, &e):
		return e.StatusCode
	}
	t.Errorf("chat: %v", err)
	return 0
}

// TestPostgresReplicasShareTheBalance: concurrent requests spread over two
// replicas never spend more than the account holds (each replica reserves
// within a lease the database granted against the other's), the ledger
// adds up, and what one replica's lease held goes back: the balance is
// spent to the last request's worth.
func TestPostgresReplicasShareTheBalance(t *testing.T) {
	g1, g2 := postgresReplicas(t)
	p := g1.newPayer("default", 9*budgetCost+budgetCost/2, 0, time.Time{}) // nine requests' worth and a half
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for i := range 30 {
		g := []*gateway{g1, g2}[i%2]
		wg.Go(func() {
			switch code := budgetChat(t, g, p.secret); code {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusTooManyRequests:
				refused.Add(1)
			default:
				t.Errorf("status %d", code)
			}
		})
	}
	wg.Wait()
	if ok.Load() > 9 {
		t.Fatalf("%d requests answered on a balance for 9", ok.Load())
	}
	// Leases not in use go back within a second: the rest is spendable
	// through either replica.
	for deadline := time.Now().Add(10 * time.Second); ok.Load() < 9 && time.Now().Before(deadline); {
		g := []*gateway{g1, g2}[ok.Load()%2]
		if budgetChat(t, g, p.secret) == http.StatusOK {
			ok.Add(1)
		} else {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if ok.Load() != 9 {
		t.Fatalf("%d requests answered in all, want 9: a lease kept the balance from use", ok.Load())
	}
	if code := budgetChat(t, g2, p.secret); code != http.StatusTooManyRequests {
		t.Errorf("a tenth request: %d, want 429", code)
	}
	for _, g := range []*gateway{g1, g2} {
		if err := g.stop(); err != nil {
			t.Fatal(err)
		}
	}
	if bal := audit(t, g1.app.Store(), p.accountID); bal != budgetCost/2 {
		t.Errorf("balance %v after nine requests, want %v", bal, money.Micros(budgetCost/2))
	}
}

// TestPostgresRevokeReachesEveryReplica: a key revoked through one replica
// (here its store, as the console does) is refused by the other within
// about keysWatchEvery, although both cache keys for an hour. The bound
// checked is a hang guard (these machines are shared); the delay is logged.
func TestPostgresRevokeReachesEveryReplica(t *testing.T) {
	g1, g2 := postgresReplicas(t)
	p := g1.newPayer("default", money.Unit, 0, time.Time{})
	if code := budgetChat(t, g2, p.secret); code != http.StatusOK {
		t.Fatalf("before revoking: %d", code)
	}
	if _, err := g1.app.Store().RevokeKey(context.Background(), p.keyID, time.Now()); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for budgetChat(t, g2, p.secret) != http.StatusUnauthorized {
		if time.Since(revoked) > 10*time.Second {
			t.Fatal("the other replica still accepts the key 10 s after it was revoked (its cache's TTL is an hour)")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("refused by the other replica %v after the revocation", time.Since(revoked).Round(time.Millisecond))
}

// TestPostgresDeadReplicaLeaseReleased: a replica that died holding a
// lease on the whole balance (its row in holds, no longer rewritten) keeps
// it from the others only until it is 5 s old: then they ignore it, and
// delete it, and the balance is spendable again.
func TestPostgresDeadReplicaLeaseReleased(t *testing.T) {
	g1, _ := postgresReplicas(t)
	p := g1.newPayer("default", 3*budgetCost, 0, time.Time{})
	st := g1.app.Store()
	ctx := context.Background()
	died := time.Now()
	if err := st.PutHolds(ctx, "gw_dead", map[string]money.Micros{p.accountID: 3 * budgetCost}, died); err != nil {
		t.Fatal(err)
	}
	// Answered within 4 s of the lease's write, the request met it live
	// (a busy machine may take longer: then the lease may have gone stale).
	if code := budgetChat(t, g1, p.secret); code != http.StatusTooManyRequests && time.Since(died) < 4*time.Second {
		t.Fatalf("with a live lease on the whole balance elsewhere: %d, want 429", code)
	}
	for budgetChat(t, g1, p.secret) != http.StatusOK {
		if time.Since(died) > 30*time.Second {
			t.Fatal("the dead replica's lease still holds the balance after 30 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if waited := time.Since(died); waited < 4*time.Second {
		t.Errorf("served %v after the lease was written: a live replica's lease was ignored", waited)
	}
	for {
		held, err := st.Reserved(ctx, p.accountID)
		if err != nil {
			t.Fatal(err)
		}
		if held < 3*budgetCost { // the dead replica's row is gone
			break
		}
		if time.Since(died) > 30*time.Second {
			t.Fatalf("the dead replica's hold is still in the table: %v reserved", held)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("balance spendable again %v after the replica's last write", time.Since(died).Round(100*time.Millisecond))
}
