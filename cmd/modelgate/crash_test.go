package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/store/sqlstore"
)

// crashConfig points the gateway at a fake upstream and keeps usage records
// in memory for a long time, so at the moment of a SIGKILL most of them
// (and their charges) exist only in the journal.
func crashConfig(t *testing.T, dir, upstream string) string {
	t.Helper()
	cfg := fmt.Sprintf(`listen: 127.0.0.1:0
database: sqlite:%s
usage: {batch_size: 100000, flush_interval: 1h}
providers:
  - name: fake
    type: openai
    base_url: %s/v1
    api_key: sk-fake
    models:
      - {id: gpt-4o-mini, upstream: gpt-4o-mini-2024-07-18}
      - {id: paced-model, upstream: paced}
models:
  - {id: paced-model, input: 1, output: 2}
groups:
  default: {models: ["*"]}
`, filepath.Join(dir, "data", "modelgate.db"), upstream)
	path := filepath.Join(dir, "modelgate.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runBin runs the binary with args and returns its stdout.
func runBin(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MODELGATE_CONFIG=")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("modelgate %v: %v\n%s", args, err, stderr)
	}
	return string(out)
}

// startWithConfig starts `modelgate serve --config cfg` and returns it with its base URL.
func startWithConfig(t *testing.T, bin, dir, cfg string) (*exec.Cmd, string) {
	t.Helper()
	cmd, _, base := serveProcess(t, bin, dir, "--config", cfg)
	return cmd, base
}

// TestCrashLosesNoCharge kills the gateway with SIGKILL in the middle of a
// load and restarts it: every request the client received in full has its
// usage record and exactly one charge, the balance equals the ledger, and
// the dead process's reservations are released.
func TestCrashLosesNoCharge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildModelgate(t, dir)
	up := providertest.NewOpenAI(t)
	cfg := crashConfig(t, dir, up.URL)
	secret := strings.TrimSpace(runBin(t, bin, dir, "keys", "create", "--group", "default", "--account", "acme", "--config", cfg))
	runBin(t, bin, dir, "accounts", "credit", "acme", "10", "--config", cfg)

	srv, base := startWithConfig(t, bin, dir, cfg)
	var (
		mu       sync.Mutex
		complete []string // request ids of answers the client received in full
		wg       sync.WaitGroup
	)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for w := range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`
				if w%2 == 1 {
					body = `{"model":"paced-model","stream":true,"messages":[{"role":"user","content":"Hi"}]}`
				}
				resp, err := chatPost(secret, base, body)
				if err != nil {
					return // the server is gone
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				full := err == nil && resp.StatusCode == 200 &&
					(w%2 == 0 && strings.HasSuffix(strings.TrimSpace(string(b)), "}") || strings.HasSuffix(string(b), "data: [DONE]\n\n"))
				if full {
					mu.Lock()
					complete = append(complete, resp.Header.Get("X-Request-Id"))
					mu.Unlock()
				} else if err == nil && resp.StatusCode != 200 {
					t.Errorf("status %d: %s", resp.StatusCode, b)
					return
				}
			}
		})
	}
	time.Sleep(2500 * time.Millisecond) // streams in flight, records only journaled, holds published
	if err := srv.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = srv.Wait()
	stop()
	wg.Wait()
	if len(complete) < 20 {
		t.Fatalf("only %d requests completed before the kill", len(complete))
	}
	if n := len(up.Received()); n <= len(complete) {
		t.Logf("upstream saw %d requests, %d completed", n, len(complete))
	}

	// The dead process left reservations of its streams in flight behind.
	if out := runBin(t, bin, dir, "accounts", "show", "acme", "--json", "--config", cfg); strings.Contains(out, `"reserved": "0.000000"`) {
		t.Errorf("no reservations published before the kill:\n%s", out)
	}
	// Restart: the journal is replayed; the dead process's holds go stale
	// and are released.
	srv, _ = startWithConfig(t, bin, dir, cfg)
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := runBin(t, bin, dir, "accounts", "show", "acme", "--json", "--config", cfg)
		if strings.Contains(out, `"reserved": "0.000000"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reservations of the killed process were not released:\n%s", out)
		}
		time.Sleep(250 * time.Millisecond)
	}
	_ = srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}

	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(dir, "data", "modelgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx2 := context.Background()
	acct, err := st.AccountByName(ctx2, "acme")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.ListUsage(ctx2, store.UsageFilter{AccountID: acct.ID})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]store.UsageRecord{}
	var cost money.Micros
	for _, r := range recs {
		byID[r.RequestID] = r
		cost += r.Cost
	}
	for _, id := range complete {
		if r, ok := byID[id]; !ok || r.Cost <= 0 || r.Status != 200 {
			t.Errorf("request %s, answered in full before the kill: record %+v (found %v)", id, r, ok)
		}
	}
	entries, err := st.ListLedger(ctx2, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	charges := map[string]int{}
	var sum money.Micros
	for _, e := range entries {
		sum += e.Amount
		if e.Kind == store.KindCharge {
			charges[e.Ref]++
		}
	}
	var charged int
	for _, r := range recs {
		if r.Cost > 0 {
			charged++
			if charges[r.RequestID] != 1 {
				t.Errorf("request %s charged %d times", r.RequestID, charges[r.RequestID])
			}
		}
	}
	if len(charges) != charged || sum != acct.Balance || acct.Spent != cost || acct.Balance != 10*money.Unit-cost {
		t.Errorf("ledger: %d charges for %d charged records; ledger sum %v, balance %v, spent %v, records cost %v",
			len(charges), charged, sum, acct.Balance, acct.Spent, cost)
	}
	t.Logf("%d requests completed before SIGKILL; %d records after restart, %d charged, balance %v", len(complete), len(recs), charged, acct.Balance)
}
