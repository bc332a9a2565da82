//go:build unix

package main

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/provider/providertest"
	"github.com/modelgate/modelgate/internal/store"
)

// testReplicaKillUnderLoad: three replicas, each keeping its usage
// records in its own journal (flushed hourly, so at the kill they are
// nowhere else), serve a steady load of quick answers and half-second
// streams. Replica 1 is killed with SIGKILL in the middle of it and
// restarted on its journal folder; the others are stopped, which flushes
// them. Every request that got a complete 200, from any replica, has its
// usage record and its one charge.
func testReplicaKillUnderLoad(t *testing.T, bin string, b backends) {
	up := providertest.NewOpenAI(t)
	c := newCluster(t, bin, b, clusterSpec{replicas: 3, flush: "1h", extra: func(int) string { return chatProviders(up.URL) }})
	secret, _ := c.newKey("acme", "100")
	c.startAll()
	bases := c.bases()

	var (
		mu       sync.Mutex
		complete = map[string]int{} // request id → replica, of answers received in full
		wg       sync.WaitGroup
	)
	client := newClient()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for w := range 12 {
		replica, body := w%3, quickChat
		if w/3%2 == 1 {
			body = pacedChat
		}
		wg.Go(func() {
			for ctx.Err() == nil {
				a := post(client, bases[replica], secret, body)
				switch {
				case a.complete:
					mu.Lock()
					complete[a.header.Get("X-Request-Id")] = replica
					mu.Unlock()
				case a.status == 0 || a.status == http.StatusOK:
					if replica != 1 {
						t.Errorf("replica %d: %v", replica, a.err)
					}
					return // replica 1 is gone
				default:
					t.Errorf("replica %d: %d %s", replica, a.status, a.body)
					return
				}
			}
		})
	}
	time.Sleep(2 * time.Second) // streams in flight, records only journaled
	c.kill(1)
	time.Sleep(500 * time.Millisecond) // the others serve on
	stop()
	wg.Wait()

	byReplica := map[int]int{}
	for _, r := range complete {
		byReplica[r]++
	}
	if byReplica[1] < 10 {
		t.Fatalf("only %d requests completed on replica 1 before the kill (%v by replica)", byReplica[1], byReplica)
	}
	c.withStore(func(ctx context.Context, st store.Store) {
		if recs, err := st.ListUsage(ctx, store.UsageFilter{}); err != nil || len(recs) != 0 {
			t.Fatalf("%d records in the database before the restart (%v); the test wants them only journaled", len(recs), err)
		}
	})

	c.start(1) // replays replica 1's journal
	c.stopAll()
	_, recs := checkLedger(t, c, "acme")
	stored := map[string]store.UsageRecord{}
	for _, r := range recs {
		stored[r.RequestID] = r
	}
	for id, replica := range complete {
		if r, ok := stored[id]; !ok || r.Status != http.StatusOK || r.Cost <= 0 {
			t.Errorf("request %s, answered in full by replica %d: record %+v (found %v)", id, replica, r, ok)
		}
	}
	t.Logf("completed by replica: %v; %d records after the restart", byReplica, len(recs))
}
