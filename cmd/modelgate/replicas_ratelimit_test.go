//go:build unix

package main

import (
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// testReplicaRateLimit: a key limited to 60 requests a minute sends 120
// at once, spread round-robin over three replicas. Exactly 60 are
// answered and reach the vendor; the other 60 get OpenAI's 429
// rate_limit_exceeded, whichever replica they went to.
func testReplicaRateLimit(t *testing.T, bin string, b backends) {
	up := providertest.NewOpenAI(t)
	c := newCluster(t, bin, b, clusterSpec{replicas: 3, extra: func(int) string { return chatProviders(up.URL) }})
	secret, _ := c.newKey("acme", "10", "--rpm", "60")
	c.startAll()

	answers := fire(newClient(), c.bases(), secret, quickChat, 120)
	perReplica := map[int]int{}
	for _, a := range answers {
		switch {
		case a.status == http.StatusOK && a.complete:
			perReplica[a.replica]++
		case a.status == http.StatusTooManyRequests:
			checkOpenAIError(t, a, http.StatusTooManyRequests, "requests", "rate_limit_exceeded")
			if a.header.Get("Retry-After") == "" {
				t.Errorf("replica %d: a 429 without Retry-After", a.replica)
			}
		}
		if got := a.header.Get("X-Ratelimit-Limit-Requests"); a.err == nil && got != "60" {
			t.Errorf("replica %d: %d with x-ratelimit-limit-requests %q, want 60", a.replica, a.status, got)
		}
	}
	got := tally(answers)
	if got[http.StatusOK] != 60 || got[http.StatusTooManyRequests] != 60 || len(got) != 2 {
		t.Fatalf("120 requests over 3 replicas with a limit of 60 a minute: %v by status, want 60 × 200 and 60 × 429", got)
	}
	if n := len(up.Received()); n != 60 {
		t.Errorf("the vendor received %d requests, want the 60 answered", n)
	}
	t.Logf("answered per replica: %v", perReplica)
}
