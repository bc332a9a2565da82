//go:build unix

package main

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// testReplicaRevoke: three replicas answer a key (so each has it cached,
// for a minute: auth_cache_ttl); `modelgate keys revoke` changes the
// shared database; every replica refuses the key with OpenAI's 401 within
// one second of the command returning, and never answers it again.
func testReplicaRevoke(t *testing.T, bin string, b backends) {
	up := providertest.NewOpenAI(t)
	c := newCluster(t, bin, b, clusterSpec{replicas: 3, extra: func(int) string {
		return "auth_cache_ttl: 1m\n" + chatProviders(up.URL) // the revocation must not wait for it
	}})
	secret, id := c.newKey("acme", "10")
	c.startAll()
	client := newClient()
	for i, base := range c.bases() {
		if a := post(client, base, secret, quickChat); a.status != http.StatusOK {
			t.Fatalf("replica %d before the revocation: %d %s", i, a.status, a.body)
		}
	}

	// Each replica is asked every 20 ms, from before the revocation until
	// 1.5 s after it.
	const within = time.Second
	var revoked time.Time // when `keys revoke` returned
	ready := make(chan struct{})
	polls := make([][]answer, len(c.nodes))
	var wg sync.WaitGroup
	for i, base := range c.bases() {
		wg.Go(func() {
			<-ready
			for end := revoked.Add(within + 500*time.Millisecond); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				a := post(client, base, secret, quickChat)
				a.replica = i
				polls[i] = append(polls[i], a)
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // cache entries a little older than new
	c.cli("keys", "revoke", id)
	revoked = time.Now()
	close(ready)
	wg.Wait()

	for i, as := range polls {
		var refusedAt time.Time
		for _, a := range as {
			switch {
			case a.err != nil:
				t.Errorf("replica %d: %v", i, a.err)
			case a.status == http.StatusOK && !refusedAt.IsZero():
				t.Errorf("replica %d answered the revoked key %v after the revocation, having refused it already", i, a.sent.Sub(revoked))
			case a.status == http.StatusOK && a.sent.Sub(revoked) >= within:
				t.Errorf("replica %d still answered the revoked key %v after the revocation", i, a.sent.Sub(revoked).Round(time.Millisecond))
			case a.status == http.StatusOK:
			default:
				checkOpenAIError(t, a, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key")
				if refusedAt.IsZero() {
					refusedAt = a.sent
				}
			}
		}
		if refusedAt.IsZero() {
			t.Errorf("replica %d never refused the revoked key (%d requests)", i, len(as))
			continue
		}
		t.Logf("replica %d refused the key from %v after the revocation", i, refusedAt.Sub(revoked).Round(time.Millisecond))
	}
}
