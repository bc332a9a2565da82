//go:build unix

package main

import (
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// testReplicaReload: both replicas' config files gain a group limit, and
// only replica 0 is sent SIGHUP; replica 1 hears of it through Redis,
// rereads its own file and answers with the new limit's headers.
func testReplicaReload(t *testing.T, bin string, b backends) {
	up := providertest.NewOpenAI(t)
	c := newCluster(t, bin, b, clusterSpec{replicas: 2, extra: func(int) string { return chatProviders(up.URL) }})
	secret, _ := c.newKey("acme", "10")
	c.startAll()
	client := newClient()
	for i, base := range c.bases() {
		a := post(client, base, secret, quickChat)
		if a.status != http.StatusOK || a.header.Get("X-Ratelimit-Limit-Requests") != "" {
			t.Fatalf("replica %d before the reload: %d, limit header %q", i, a.status, a.header.Get("X-Ratelimit-Limit-Requests"))
		}
	}
	for _, n := range c.nodes {
		b, err := os.ReadFile(n.cfg)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), `default: {models: ["*"]}`, `default: {models: ["*"], limits: {rpm: 1000}}`, 1)
		if s == string(b) {
			t.Fatal("the config has no default group to change")
		}
		if err := os.WriteFile(n.cfg, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sent := time.Now()
	if err := c.nodes[0].cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for i, base := range c.bases() {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) { // a hang guard
			a := post(client, base, secret, quickChat)
			if a.status == http.StatusOK && a.header.Get("X-Ratelimit-Limit-Requests") == "1000" {
				t.Logf("replica %d answers with the new limit %v after the SIGHUP to replica 0", i, time.Since(sent).Round(time.Millisecond))
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %d never applied the reload: %d %s", i, a.status, a.body)
			}
		}
	}
	if !strings.Contains(c.nodes[1].log.tail(400), "another replica reloaded its config") {
		t.Error("replica 1's log does not say why it reloaded")
	}
}
