package app_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// TestRateLimitsAcrossReplicas: two gateways (two replicas) sharing one
// database and one Redis; a key limited to 5 requests per minute gets at
// most 5 successes across both together, concurrent requests included.
func TestRateLimitsAcrossReplicas(t *testing.T) {
	url := os.Getenv("MODELGATE_TEST_REDIS")
	if url == "" {
		t.Skip("MODELGATE_TEST_REDIS not set (e.g. redis://127.0.0.1:6379/15): skipping the replicas' rate-limit test")
	}
	g1 := startGateway(t, func(c *config.Config) { c.Redis = url })
	g2 := startGateway(t, func(c *config.Config) {
		c.Redis = url
		c.Database = g1.cfg.Database     // the same accounts and keys
		c.Usage.JournalDir = t.TempDir() // each replica its own journal
		c.Images.Dir, c.Video.Dir = t.TempDir(), t.TempDir()
	})
	p := g1.limitedPayer("default", 10*money.Unit, store.KeyLimits{RPM: 5})
	ctx := context.Background()
	var mu sync.Mutex
	status := map[int]int{}
	var wg sync.WaitGroup
	for i := range 12 {
		g := g1
		if i%2 == 1 {
			g = g2
		}
		wg.Go(func() {
			resp, err := limitedChat(ctx, g, p, "gpt-4o-mini", 0)
			code := http.StatusOK
			if err != nil {
				var e *oai.Error
				if !errors.As(err, &e) || e.Code != "rate_limit_exceeded" {
					t.Errorf("request %d: %v", i, err)
					return
				}
				code = e.StatusCode
			}
			if resp == nil || resp.Header.Get("x-ratelimit-limit-requests") != "5" {
				t.Errorf("no rate-limit headers: %v", resp)
			}
			mu.Lock()
			status[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if status[http.StatusOK] != 5 || status[http.StatusTooManyRequests] != 7 {
		t.Fatalf("answers across two replicas: %v, want 5 OK and 7 refused", status)
	}
}

// TestUnreachableRedis: a gateway configured with a Redis that does not
// answer refuses to start, saying so.
func TestUnreachableRedis(t *testing.T) {
	cfg := testConfig(t, "http://127.0.0.1:1")
	cfg.Redis = "redis://:s3cret@127.0.0.1:1/0"
	a, err := app.New(context.Background(), cfg, app.Options{Logger: testLogger(t)})
	if err == nil {
		_ = a.Close()
		t.Fatal("a gateway started with an unreachable Redis")
	}
	if !strings.Contains(err.Error(), "redis at 127.0.0.1:1") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %q: want one naming the Redis address, not its password", err)
	}
}

// TestRedisFailuresMetric: once the Redis the gateway limits with stops
// answering, its rate-limited requests are let through (fail-open) and
// modelgate_ratelimit_redis_failures_total counts them.
func TestRedisFailuresMetric(t *testing.T) {
	url := os.Getenv("MODELGATE_TEST_REDIS")
	if url == "" {
		t.Skip("MODELGATE_TEST_REDIS not set (e.g. redis://127.0.0.1:6379/15): skipping the Redis failure metric test")
	}
	hostPort, db, _ := strings.Cut(strings.TrimPrefix(url, "redis://"), "/")
	fwd := newForwarder(t, hostPort)
	g := startGateway(t, func(c *config.Config) {
		c.Redis = "redis://" + fwd.addr + "/" + db
		c.Metrics = &config.Metrics{Listen: "127.0.0.1:0"}
	})
	p := g.limitedPayer("default", 10*money.Unit, store.KeyLimits{RPM: 100})
	metric := "modelgate_ratelimit_redis_failures_total"
	if got := scrapeMetrics(t, "http://"+g.app.MetricsAddr()+"/metrics")[metric]; got != 0 {
		t.Fatalf("%s = %v before any failure", metric, got)
	}
	fwd.stop() // Redis stops answering
	for i := range 3 {
		if _, err := limitedChat(context.Background(), g, p, "gpt-4o-mini", 0); err != nil {
			t.Fatalf("request %d with Redis gone: %v (want it let through)", i, err)
		}
	}
	if got := scrapeMetrics(t, "http://"+g.app.MetricsAddr()+"/metrics")[metric]; got < 3 {
		t.Errorf("%s = %v after three requests without Redis, want at least 3", metric, got)
	}
}

// forwarder relays TCP connections to a target until stopped, which
// closes them all: a Redis that goes away.
type forwarder struct {
	addr  string
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newForwarder(t *testing.T, target string) *forwarder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{addr: ln.Addr().String(), ln: ln}
	t.Cleanup(f.stop)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			f.mu.Lock()
			f.conns = append(f.conns, c, u)
			f.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); _ = u.Close() }()
			go func() { _, _ = io.Copy(c, u); _ = c.Close() }()
		}
	}()
	return f
}

func (f *forwarder) stop() {
	_ = f.ln.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		_ = c.Close()
	}
	f.conns = nil
}
