package app_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
	"github.com/modelgate/modelgate/internal/store"
)

// gateway is a running modelgate (real listener, real SQLite, real usage
// recorder) in front of a fake OpenAI upstream.
type gateway struct {
	t        *testing.T
	URL      string
	cfg      *config.Config
	app      *app.App
	upstream *providertest.OpenAI
	keys     map[string]string // group → secret
	revoked  string
	stop     func() error
	stopped  bool
}

// upstreamModels are the public ids served by the fake upstream; the
// upstream id picks the fake's scenario.
var upstreamModels = []config.ModelRef{
	{ID: "gpt-4o-mini", Upstream: "gpt-4o-mini-2024-07-18"},
	{ID: "tool-model", Upstream: "tool-call"},
	{ID: "err-400", Upstream: "err-400"},
	{ID: "err-401", Upstream: "err-401"},
	{ID: "err-404", Upstream: "err-404"},
	{ID: "err-429", Upstream: "err-429"},
	{ID: "err-429-quota", Upstream: "err-429-quota"},
	{ID: "err-500", Upstream: "err-500"},
	{ID: "err-503", Upstream: "err-503"},
	{ID: "malformed", Upstream: "malformed"},
	{ID: "slow", Upstream: "slow"},
	{ID: "endless", Upstream: "endless"},
	{ID: "cut", Upstream: "cut"},
	{ID: "paced", Upstream: "paced"},
	{ID: "midstream-error", Upstream: "midstream-error"},
	{ID: "stream-json", Upstream: "stream-json"},
}

func testConfig(t *testing.T, upstreamURL string) *config.Config {
	cfg := &config.Config{
		Database: "sqlite:" + filepath.Join(t.TempDir(), "modelgate.db"),
		Providers: []config.Provider{
			{Name: "fake-openai", Type: "openai", BaseURL: upstreamURL + "/v1", APIKey: "sk-upstream-secret",
				Models: upstreamModels, Timeout: config.Duration(3 * time.Second), IdleTimeout: config.Duration(time.Second)},
			{Name: "demo", Type: "demo"},
			{Name: "down", Type: "openai", BaseURL: "http://127.0.0.1:1/v1", Models: []config.ModelRef{{ID: "unreachable"}}},
		},
		Groups: map[string]config.Group{
			"default": {Models: []string{"*"}},
			"basic":   {Models: []string{"gpt-4o-mini", "demo-*"}},
		},
		ShutdownTimeout: config.Duration(5 * time.Second),
		AuthCacheTTL:    config.Duration(time.Nanosecond), // revocations in tests take effect at once
		Usage:           config.Usage{BatchSize: 64, FlushInterval: config.Duration(20 * time.Millisecond)},
		// One fake vendor answers every scenario, failing ones included:
		// its circuit must not open in the middle of other tests (the
		// circuit's own tests set their own).
		Circuit: config.Circuit{Failures: 1 << 20},
	}
	// The fake upstream's scenario models are not in the catalog: price
	// them like a cheap chat model ($1 in, $2 out per million tokens).
	in, out := config.Amount(money.Unit), config.Amount(2*money.Unit)
	for _, m := range upstreamModels {
		if m.ID != "gpt-4o-mini" {
			cfg.Models = append(cfg.Models, config.ModelConfig{ID: m.ID, Input: &in, Output: &out})
		}
	}
	cfg.Models = append(cfg.Models, config.ModelConfig{ID: "unreachable", Input: &in, Output: &out})
	cfg.ApplyDefaults()
	if ps := cfg.Validate(); config.HasErrors(ps) {
		t.Fatalf("test config: %v", ps)
	}
	return cfg
}

func startGateway(t *testing.T, mutate ...func(*config.Config)) *gateway {
	t.Helper()
	up := providertest.NewOpenAI(t)
	cfg := testConfig(t, up.URL)
	for _, m := range mutate {
		m(cfg)
	}
	g := serveApp(t, cfg, app.Options{Logger: testLogger(t), Version: "test"})
	g.upstream = up
	for _, group := range []string{"default", "basic"} {
		g.keys[group] = g.createKey(group, false)
	}
	g.revoked = g.createKey("default", true)
	return g
}

// serveApp builds the gateway from cfg and serves it on a loopback port
// until the test ends.
func serveApp(t *testing.T, cfg *config.Config, o app.Options) *gateway {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveAppOn(t, cfg, o, ln)
}

// serveAppOn is serveApp on a listener of the test's making.
func serveAppOn(t *testing.T, cfg *config.Config, o app.Options, ln net.Listener) *gateway {
	t.Helper()
	a, err := app.New(context.Background(), cfg, o)
	if err != nil {
		_ = ln.Close()
		t.Fatalf("app.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, ln) }()
	g := &gateway{t: t, URL: "http://" + ln.Addr().String(), cfg: cfg, app: a, keys: map[string]string{}}
	g.stop = func() error {
		if g.stopped {
			return nil
		}
		g.stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(60 * time.Second):
			t.Fatal("gateway did not stop within 60s")
			return nil
		}
	}
	t.Cleanup(func() {
		if err := g.stop(); err != nil {
			t.Errorf("gateway stopped with error: %v", err)
		}
		_ = a.Close()
	})
	return g
}

// testLogger discards the gateway's log, or shows it with -v.
func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (g *gateway) createKey(group string, revoked bool) string {
	g.t.Helper()
	ctx := context.Background()
	st := g.app.Store()
	acct := store.Account{ID: app.NewID("acct_"), Name: app.NewID("test-"), CreatedAt: time.Now().UTC()}
	if err := st.CreateAccount(ctx, acct); err != nil {
		g.t.Fatal(err)
	}
	secret, display, hash := apikey.Generate()
	k := store.Key{ID: app.NewID("key_"), AccountID: acct.ID, Group: group, Prefix: display, Hash: hash, CreatedAt: time.Now().UTC()}
	if err := st.CreateKey(ctx, k); err != nil {
		g.t.Fatal(err)
	}
	if _, err := st.Post(ctx, store.LedgerEntry{AccountID: acct.ID, Kind: store.KindTopUp, Amount: 100 * money.Unit, Time: time.Now()}); err != nil {
		g.t.Fatal(err)
	}
	if revoked {
		if _, err := st.RevokeKey(ctx, k.ID, time.Now().UTC()); err != nil {
			g.t.Fatal(err)
		}
	}
	return secret
}

// client is the official SDK pointed at the gateway, without retries so
// each error is seen as the gateway sent it.
func (g *gateway) client(key string, opts ...option.RequestOption) oai.Client {
	base := []option.RequestOption{option.WithBaseURL(g.URL + "/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0)}
	return oai.NewClient(append(base, opts...)...)
}

// usage stops the gateway (flushing every record) and returns all records.
func (g *gateway) usage() []store.UsageRecord {
	g.t.Helper()
	if err := g.stop(); err != nil {
		g.t.Fatalf("stop: %v", err)
	}
	recs, err := g.app.Store().ListUsage(context.Background(), store.UsageFilter{})
	if err != nil {
		g.t.Fatal(err)
	}
	return recs
}

// post sends a raw request (for inputs the SDK would never produce).
func (g *gateway) post(path, contentType, key string, body io.Reader) (*http.Response, []byte) {
	g.t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.URL+path, body)
	if err != nil {
		g.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// apiError asserts err is the SDK's *Error with the given status and code.
func apiError(t *testing.T, err error, status int, code string) *oai.Error {
	t.Helper()
	var e *oai.Error
	if !errors.As(err, &e) {
		t.Fatalf("want *openai.Error %d %s, got %T %v", status, code, err, err)
	}
	if e.StatusCode != status || e.Code != code {
		t.Fatalf("got %d %q (%s), want %d %q", e.StatusCode, e.Code, e.Message, status, code)
	}
	return e
}
