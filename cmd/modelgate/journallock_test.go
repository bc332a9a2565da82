//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// TestSecondServeOnSameJournal starts `modelgate serve` twice on one data
// directory: the second exits non-zero at once, naming the journal folder
// and the first one's pid. After the first is killed with SIGKILL (records
// only journaled), the next start takes the folder and replays them.
func TestSecondServeOnSameJournal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildModelgate(t, dir)
	up := providertest.NewOpenAI(t)
	cfg := crashConfig(t, dir, up.URL) // flush_interval 1h: records stay in the journal
	secret := strings.TrimSpace(runBin(t, bin, dir, "keys", "create", "--group", "default", "--account", "acme", "--config", cfg))
	runBin(t, bin, dir, "accounts", "credit", "acme", "10", "--config", cfg)

	first, base := startWithConfig(t, bin, dir, cfg)
	const sent = 5
	for range sent {
		resp, err := chatPost(secret, base, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	second := exec.CommandContext(ctx, bin, "serve", "--config", cfg) // listen 127.0.0.1:0: its own port
	second.Dir = dir
	second.Env = append(os.Environ(), "MODELGATE_CONFIG=")
	out, err := second.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 || ctx.Err() != nil {
		t.Fatalf("second serve on the same journal: %v (want a non-zero exit at start)\n%s", err, out)
	}
	t.Logf("second serve: %s", out)
	journal := filepath.Join(dir, "data", "journal")
	for _, want := range []string{journal, "pid " + strconv.Itoa(first.Process.Pid), "give each replica its own usage.journal_dir"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("second serve's output does not say %q:\n%s", want, out)
		}
	}

	if n := len(usageOf(t, bin, dir, cfg)); n != 0 {
		t.Fatalf("%d records in the database before the kill; the test wants them only journaled", n)
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	restarted, _ := startWithConfig(t, bin, dir, cfg)
	if n := len(usageOf(t, bin, dir, cfg)); n != sent {
		t.Errorf("%d records after the restart, want the %d the killed process journaled", n, sent)
	}
	_ = restarted.Process.Signal(syscall.SIGTERM)
	if err := restarted.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}

// usageOf lists acme's usage records with `modelgate usage --json`.
func usageOf(t *testing.T, bin, dir, cfg string) []usageJSON {
	t.Helper()
	var recs []usageJSON
	out := runBin(t, bin, dir, "usage", "--json", "--account", "acme", "--config", cfg)
	if err := json.Unmarshal([]byte(out), &recs); err != nil {
		t.Fatalf("usage --json: %v\n%s", err, out)
	}
	return recs
}
