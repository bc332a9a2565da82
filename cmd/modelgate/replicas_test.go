//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/store/pgtest"
)

// TestReplicas runs two or three real `modelgate serve` processes on
// loopback that share one database and one Redis, each with its own usage
// journal, in front of fake upstreams, and shows that what issue 33 asks
// of replicas holds across them: one key's rate limit, one account's
// balance, a key's revocation, video tasks' leases, the usage records of
// a replica killed under load, and a config reload announced to all.
// The binary is built once for all.
func TestReplicas(t *testing.T) {
	b := replicaBackends(t)
	bin := buildModelgate(t, t.TempDir())
	tests := []struct {
		name string
		run  func(t *testing.T, bin string, b backends)
	}{
		{"RateLimit", testReplicaRateLimit},
		{"Balance", testReplicaBalance},
		{"Revoke", testReplicaRevoke},
		{"VideoLeases", testReplicaVideoLeases},
		{"KillUnderLoad", testReplicaKillUnderLoad},
		{"Reload", testReplicaReload},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, bin, b) })
	}
}

// backends are the services the replicas share: PostgreSQL (a URL to a
// database in which each test gets a schema of its own, see pgtest) and
// Redis (rate-limit keys are the test's own keys' ids, so tests share it
// without flushing it under other packages' Redis tests).
type backends struct {
	postgres, redis string
}

// replicaBackends reads MODELGATE_TEST_POSTGRES and MODELGATE_TEST_REDIS,
// skipping the test without them (or with -short).
func replicaBackends(t *testing.T) backends {
	b := backends{postgres: os.Getenv("MODELGATE_TEST_POSTGRES"), redis: os.Getenv("MODELGATE_TEST_REDIS")}
	if b.postgres == "" || b.redis == "" {
		t.Skip("MODELGATE_TEST_POSTGRES and MODELGATE_TEST_REDIS not both set: skipping the replica tests")
	}
	if testing.Short() {
		t.Skip("builds the binary and runs replicas")
	}
	return b
}

// sharedDatabase is the database every replica of a test opens: a fresh
// PostgreSQL schema of the test's own, dropped when it ends.
func sharedDatabase(t *testing.T) string {
	t.Helper()
	return pgtest.DSN(t)
}

// cluster is a test's replicas: their configs (all on one database and
// one Redis, each with its own journal) and the processes running them.
type cluster struct {
	t     *testing.T
	bin   string
	dir   string
	nodes []*replica
}

// replica is one `modelgate serve` process and its config file.
type replica struct {
	cfg  string
	cmd  *exec.Cmd
	base string // http://127.0.0.1:PORT, once started
	exit chan error
	log  *lineLog
}

// clusterSpec shapes a cluster's configs: how many replicas, how often
// they flush usage records, and the YAML each gets besides the shared
// settings (providers, models, video).
type clusterSpec struct {
	replicas int
	flush    string // usage.flush_interval; "" is 200ms
	extra    func(i int) string
}

// newCluster writes the replicas' configs; nothing runs yet (CLI commands
// through c.cli set up accounts and keys first, then c.startAll).
func newCluster(t *testing.T, bin string, b backends, spec clusterSpec) *cluster {
	t.Helper()
	dir := t.TempDir()
	db := sharedDatabase(t)
	flush := spec.flush
	if flush == "" {
		flush = "200ms"
	}
	c := &cluster{t: t, bin: bin, dir: dir}
	for i := range spec.replicas {
		cfg := fmt.Sprintf(`listen: 127.0.0.1:0
database: %q
redis: %q
log: {requests: false}
usage: {journal_dir: %q, flush_interval: %s}
images: {dir: %q}
groups:
  default: {models: ["*"]}
`, db, b.redis, filepath.Join(dir, fmt.Sprintf("journal-%d", i)), flush, filepath.Join(dir, "images"))
		if spec.extra != nil {
			cfg += spec.extra(i)
		}
		path := filepath.Join(dir, fmt.Sprintf("replica-%d.yaml", i))
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		c.nodes = append(c.nodes, &replica{cfg: path})
	}
	t.Cleanup(func() {
		for i, n := range c.nodes {
			if n.cmd != nil {
				_ = n.cmd.Process.Kill()
				<-n.exit
			}
			if t.Failed() && n.log != nil {
				t.Logf("replica %d's last log lines:\n%s", i, n.log.tail(40))
			}
		}
	})
	return c
}

// cli runs a modelgate command in this process against the shared
// database (through replica 0's config) and returns its stdout; the test
// fails when it exits non-zero.
func (c *cluster) cli(args ...string) string {
	c.t.Helper()
	var out, errb bytes.Buffer
	cfg := c.nodes[0].cfg
	code := run(append(args, "--config", cfg), env{stdout: &out, stderr: &errb,
		getenv: func(string) (string, bool) { return "", false }})
	if code != 0 {
		c.t.Fatalf("modelgate %v: exit %d\n%s", args, code, errb.String())
	}
	return out.String()
}

// newKey creates a key of the default group for account (credited
// credit, unless "") with extra `keys create` flags, and returns its
// secret and id.
func (c *cluster) newKey(account, credit string, flags ...string) (secret, id string) {
	c.t.Helper()
	secret = strings.TrimSpace(c.cli(append([]string{"keys", "create", "--group", "default", "--account", account}, flags...)...))
	if credit != "" {
		c.cli("accounts", "credit", account, credit)
	}
	c.withStore(func(ctx context.Context, st store.Store) {
		keys, err := st.ListKeys(ctx)
		if err != nil {
			c.t.Fatal(err)
		}
		for _, k := range keys {
			if strings.HasPrefix(secret, k.Prefix) {
				id = k.ID
			}
		}
	})
	if id == "" {
		c.t.Fatalf("no key has the prefix of the one created")
	}
	return secret, id
}

// withStore opens the shared database as the CLI does and runs f.
func (c *cluster) withStore(f func(ctx context.Context, st store.Store)) {
	c.t.Helper()
	cfg, problems, err := config.Load(c.nodes[0].cfg, func(string) (string, bool) { return "", false })
	if err != nil || config.HasErrors(problems) {
		c.t.Fatalf("config: %v %v", err, problems)
	}
	ctx := context.Background()
	st, err := app.OpenStore(ctx, cfg, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	defer st.Close()
	f(ctx, st)
}

// startAll starts every replica at once and waits until all listen.
func (c *cluster) startAll() {
	c.t.Helper()
	all := make([]int, len(c.nodes))
	for i := range all {
		all[i] = i
	}
	c.start(all...)
}

// start (re)starts the replicas numbered is at once and waits until they
// listen.
func (c *cluster) start(is ...int) {
	c.t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(is))
	for k, i := range is {
		wg.Go(func() { errs[k] = c.launch(i) })
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			c.t.Fatalf("replica %d: %v", is[k], err)
		}
	}
}

// launch starts replica i's process and waits for the address it logs.
func (c *cluster) launch(i int) error {
	n := c.nodes[i]
	cmd := exec.Command(c.bin, "serve", "--config", n.cfg)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "MODELGATE_CONFIG=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	n.cmd, n.base, n.exit, n.log = cmd, "", make(chan error, 1), &lineLog{}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			n.log.add(sc.Text())
			if m := addrLine.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		n.exit <- cmd.Wait() // after stderr is drained, as Wait wants
	}()
	select {
	case a := <-addr:
		n.base = "http://" + a
		return nil
	case err := <-n.exit:
		n.exit <- err
		return fmt.Errorf("exited at start (%v):\n%s", err, n.log.tail(20))
	case <-time.After(30 * time.Second):
		return fmt.Errorf("did not report its address within 30s:\n%s", n.log.tail(20))
	}
}

// kill ends replica i with SIGKILL: no drain, no flush, no goodbye.
func (c *cluster) kill(i int) {
	c.t.Helper()
	n := c.nodes[i]
	if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	<-n.exit
	n.cmd, n.base = nil, ""
}

// stop ends replica i with SIGTERM, which drains and flushes; the test
// fails unless it exits 0.
func (c *cluster) stop(i int) {
	c.t.Helper()
	if err := c.nodes[i].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		c.t.Fatal(err)
	}
	c.waitExit(i)
}

// stopAll stops every running replica with SIGTERM, all at once.
func (c *cluster) stopAll() {
	c.t.Helper()
	for _, n := range c.nodes {
		if n.cmd != nil {
			_ = n.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for i, n := range c.nodes {
		if n.cmd != nil {
			c.waitExit(i) // a second SIGTERM would cut the drain short
		}
	}
}

// waitExit waits for signalled replica i to exit; the test fails unless
// it exits 0.
func (c *cluster) waitExit(i int) {
	c.t.Helper()
	n := c.nodes[i]
	err := <-n.exit
	n.cmd, n.base = nil, ""
	if err != nil {
		c.t.Fatalf("replica %d after SIGTERM: %v\n%s", i, err, n.log.tail(20))
	}
}

// lineLog keeps a process's last log lines, to show when a test fails.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) >= 400 {
		l.lines = append(l.lines[:0], l.lines[200:]...)
	}
	l.lines = append(l.lines, s)
}

// tail is the last n lines, one per line.
func (l *lineLog) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines[max(0, len(l.lines)-n):], "\n")
}
