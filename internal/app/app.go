// Package app wires a validated configuration into a running gateway: the
// store, the providers and router, the gate, the usage recorder and the
// HTTP server. cmd/modelgate parses flags and calls it; tests build it
// directly around httptest servers.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/modelgate/modelgate/internal/api/anthropic"
	"github.com/modelgate/modelgate/internal/api/openai"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/chain"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/console"
	"github.com/modelgate/modelgate/internal/fetch"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/imagestore"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/ratelimit/redislimit"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/server"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/store/sqlstore"
	"github.com/modelgate/modelgate/internal/telemetry"
	"github.com/modelgate/modelgate/internal/tokenize"
	"github.com/modelgate/modelgate/internal/usage"
	"github.com/modelgate/modelgate/internal/video"
)

// Options are what the caller supplies besides the configuration.
type Options struct {
	Logger     *slog.Logger
	Out        io.Writer // where the first-start key is printed (stdout)
	Now        func() time.Time
	HTTPClient *http.Client // nil gives each provider its own pooled client
	Version    string
	// FetchPrivate lets the image fetcher reach loopback and private
	// addresses: tests only (their image servers are httptest servers).
	FetchPrivate bool
	// FileLimit is the process's file descriptor limit (RLIMIT_NOFILE),
	// from which max_connections defaults (0: unknown; then connections
	// are capped only by a configured max_connections).
	FileLimit uint64
	// NoKeysWatch leaves cached keys to auth_cache_ttl alone (no
	// keysWatchEvery reads): tests of the cache's own behaviour only.
	NoKeysWatch bool
}

// App is a wired gateway.
type App struct {
	cfg      *config.Config
	log      *slog.Logger
	out      io.Writer
	now      func() time.Time
	store    store.Store
	recorder *usage.Recorder
	journal  *usage.Journal
	reserver *billing.Reserver
	instance string        // this process, in the holds table
	router   *route.Router // the first config's (bootstrap, metrics labels)
	tokens   *tokenize.Set
	opts     Options

	live     atomic.Pointer[live]         // what a reload replaces (reload.go)
	current  atomic.Pointer[http.Handler] // the public listener's routes, over live
	handler  *openai.Handler              // the /v1 handler's template: each live gets a copy
	con      *console.Console             // nil: console off
	server   *server.Server
	sweepers []*imagestore.Sweeper // delete images whose URLs expired, and orphaned videos
	auth     *gate.Authenticator   // its cache forgets keys when the keys version moves (keysWatchEvery)
	upkeep   *upkeep               // usage retention, refused-request counter (upkeep.go)
	poller   *video.Poller         // drives video tasks (video.go)
	maxConns int                   // client connections held at once (0: no cap)

	metrics   *telemetry.Metrics // nil: metrics.listen not set (metrics.go)
	metricsLn net.Listener       // the metrics listener, opened by New, served by Run
	tracer    *telemetry.Tracer  // nil: telemetry.otlp_endpoint not set

	redis *redis.Client        // nil: no redis configured (ratelimit.go)
	slots *redislimit.Admitter // the limits in Redis (and its slots' lease); nil without it
	// redisFailures counts the rate-limit checks Redis failed (and that
	// were let through); nil without Redis.
	redisFailures func() int64
}

// OpenStore opens the configured database (CLI commands share it); log
// hears of long work while it opens (a schema upgrade moving data).
func OpenStore(ctx context.Context, cfg *config.Config, log *slog.Logger) (store.Store, error) {
	kind, target, err := cfg.DatabaseKind()
	if err != nil {
		return nil, err
	}
	switch kind {
	case "sqlite":
		return sqlstore.OpenSQLite(ctx, target, sqlstore.WithLogger(log))
	case "postgres":
		return sqlstore.OpenPostgres(ctx, target, sqlstore.WithLogger(log))
	default:
		return nil, fmt.Errorf("database %q: %s is not supported yet", cfg.Database, kind)
	}
}

// New builds the gateway; the caller must Close it.
func New(ctx context.Context, cfg *config.Config, o Options) (*App, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	st, err := OpenStore(ctx, cfg, o.Logger)
	if err != nil {
		return nil, err
	}
	a := &App{cfg: cfg, log: o.Logger, out: o.Out, now: o.Now, store: st, instance: NewID("gw_"), maxConns: cfg.MaxConnections,
		tokens: tokenize.NewSet(), opts: o} // one token set: each vocabulary is loaded once per process
	if a.maxConns == 0 && o.FileLimit > 0 {
		a.maxConns = server.DefaultMaxConns(o.FileLimit)
	}
	if a.journal, err = usage.OpenJournal(journalDir(cfg)); err != nil {
		_ = st.Close()
		return nil, err
	}
	if err := replayJournal(ctx, a.journal, st, o.Logger); err != nil {
		_ = a.Close()
		return nil, err
	}
	bo := billing.Options{Now: o.Now, Log: o.Logger}
	if kind, _, _ := cfg.DatabaseKind(); kind == "postgres" { // replicas share it: lease their balances
		bo.Lease = &billing.Lease{Store: st, Instance: a.instance, Stale: holdsStale}
	}
	a.reserver = billing.NewReserver(st, bo)
	l, err := a.newLive(cfg)
	if err != nil {
		_ = a.Close()
		return nil, err
	}
	a.live.Store(l)
	a.router = l.router
	images, sweepers, err := newImageStore(cfg, o.Now, o.Logger)
	if err != nil {
		_ = a.Close()
		return nil, err
	}
	a.sweepers = sweepers
	a.upkeep = newUpkeep(cfg, st, o.Logger, o.Now)
	a.recorder = usage.New(st, usage.Options{BatchSize: cfg.Usage.BatchSize,
		FlushInterval: time.Duration(cfg.Usage.FlushInterval), Logger: o.Logger,
		Journal: a.journal, OnCommit: committed(a.reserver)})
	bill := a.liveBilling()
	limits, err := a.rateLimits(ctx, cfg)
	if err != nil {
		_ = a.Close()
		return nil, err
	}
	links, err := origin(cfg, cfg.Images.PublicURL)
	if err != nil {
		_ = a.Close()
		return nil, err
	}
	a.auth = gate.NewAuthenticator(st, time.Duration(cfg.AuthCacheTTL), o.Now)
	core := &lifecycle.Core{
		Billing: bill,
		Auth:    a.auth,
		Policy:  gate.NewPolicy(groupPatterns(cfg), modelIDs(a.router)).WithRules(groupRules(cfg)),
		Router:  a.router,
		Usage:   a.recorder,
		MaxBody: cfg.MaxRequestBytes,
		Log:     o.Logger,
		Now:     o.Now,
		Refused: a.upkeep.refused,

		KeyRefusals: a.upkeep.refusals,

		WriteTimeout: time.Duration(cfg.WriteTimeout),
		DrainTimeout: time.Duration(cfg.DrainTimeout),

		// In memory, per replica; in Redis, shared, when redis is set.
		RateLimits: limits,

		Retry:     retryOf(cfg),
		FirstByte: firstByte(cfg),
	}
	h := &openai.Handler{
		Core:      core,
		Images:    images,
		Origin:    links,
		Responses: st,
		Chains:    chain.New(st, chain.Options{Log: o.Logger}),
	}
	a.upkeep.more = append(a.upkeep.more, h.Chains.Run)
	if err := a.openMetrics(cfg, h); err != nil {
		_ = a.Close()
		return nil, err
	}
	if cfg.Telemetry.Enabled() {
		tr, err := telemetry.NewTracer(ctx, telemetry.TraceOptions{Endpoint: cfg.Telemetry.OTLPEndpoint,
			ServiceName: cfg.Telemetry.ServiceName, ServiceVersion: o.Version, Logger: o.Logger,
			SampleRatio: cfg.Telemetry.Ratio()})
		if err != nil {
			_ = a.Close()
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		a.tracer, h.Tracer = tr, tr
	}
	h.Videos = a.newVideos(cfg, bill, images, fetch.New(fetchOptions(cfg.Fetch, o)))
	h.Background = a.newBackground(cfg, bill, h.Chains)
	op := &operator{live: a.live.Load, currency: cfg.Billing.Currency}
	var conOrigin server.Origin
	if cfg.Console != nil {
		conOrigin = links
		conOrigin.PublicURL = cfg.Console.PublicURL
	}
	con, err := newConsole(cfg, st, op, conOrigin, a.reserver.Stale, o.Now, o.Logger)
	if err != nil {
		_ = a.Close()
		return nil, err
	}
	a.handler, a.con = h, con
	if err := a.wirePlayground(cfg); err != nil {
		_ = a.Close()
		return nil, err
	}
	if con != nil {
		a.upkeep.more = append(a.upkeep.more, con.PurgeSessions)
	}
	mux := a.mux(h, cfg)
	a.current.Store(&mux)
	a.server = server.New(http.HandlerFunc(a.serveHTTP), time.Duration(cfg.ShutdownTimeout),
		server.Options{Logger: o.Logger, LogRequests: cfg.Log.RequestsEnabled(), Now: o.Now,
			ReadTimeout: time.Duration(cfg.ReadTimeout), BodyMemory: cfg.MaxBodyMemory, MaxConns: a.maxConns})
	return a, nil
}

// mux routes the public listener to h (the /v1 handler), the image
// files, the console and the probes.
func (a *App) mux(h *openai.Handler, cfg *config.Config) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", a.ready)
	h.Routes(mux)
	// The Anthropic Messages door, on the same lifecycle; GET /v1/models
	// answers in Anthropic's shape to clients that send anthropic-version.
	msg := &anthropic.Handler{Core: h.Core, Forward: cfg.Messages.ForwardHeaders}
	msg.Routes(mux)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if anthropic.Wants(r) {
			msg.ListModels(w, r)
			return
		}
		h.ListModels(w, r)
	})
	mux.HandleFunc("GET /v1/models/{model...}", func(w http.ResponseWriter, r *http.Request) {
		if anthropic.Wants(r) {
			msg.GetModel(w, r)
			return
		}
		h.GetModel(w, r)
	})
	// Claude Code probes the base URL before its first request.
	probe := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }
	mux.HandleFunc("HEAD /{$}", probe)
	mux.HandleFunc("HEAD /api/hello", probe)
	mux.Handle("GET "+imagestore.FilesPath+"{name}", h.ImageFiles())
	mountConsole(mux, a.con)
	return mux
}

func groupPatterns(cfg *config.Config) map[string][]string {
	out := make(map[string][]string, len(cfg.Groups))
	for name, g := range cfg.Groups {
		out[name] = g.Models
	}
	return out
}

// groupRules are the groups' responses rules.
func groupRules(cfg *config.Config) map[string]gate.Rules {
	out := make(map[string]gate.Rules, len(cfg.Groups))
	for name, g := range cfg.Groups {
		r := g.Responses
		l := g.Limits
		out[name] = gate.Rules{AllowUnsized: r.AllowUnsized, Reserve: r.Reserve.Micros(), MaxToolCalls: r.MaxToolCalls,
			Limits: gate.Limits{RPM: l.RPM, TPM: l.TPM, Concurrency: l.Concurrency}}
	}
	return out
}

func modelIDs(r *route.Router) []string {
	ms := r.Models()
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids
}

// MaxConns is the cap on client connections held at once: max_connections,
// or the default from the file limit (0: none).
func (a *App) MaxConns() int { return a.maxConns }

// Store is the app's store (tests inspect it).
func (a *App) Store() store.Store { return a.store }

// Handler is the complete HTTP handler, middleware included.
func (a *App) Handler() http.Handler { return a.server.Handler() }

// keysWatchEvery is how often a running gateway reads the keys version, so
// that a key revoked or an account disabled anywhere (another replica, the
// CLI, the console) is refused here within about this long, whatever
// auth_cache_ttl says: one indexed read of one row.
const keysWatchEvery = 250 * time.Millisecond

// Run serves on ln and flushes usage records until ctx is cancelled, then
// drains in-flight requests and writes every remaining record.
func (a *App) Run(ctx context.Context, ln net.Listener) error {
	rctx, stopRecorder := context.WithCancel(context.Background())
	defer stopRecorder()
	recDone := make(chan error, 1)
	go func() { recDone <- a.recorder.Run(rctx) }()
	hctx, stopBackground := context.WithCancel(context.Background())
	// The holds outlive the recorder's last flush: the charges it writes
	// are held until the balance has them.
	holdsCtx, stopHolds := context.WithCancel(context.Background())
	defer stopHolds()
	holdsDone := make(chan struct{})
	go func() { a.publishHolds(holdsCtx); close(holdsDone) }()
	watchDone := make(chan struct{})
	go func() {
		if !a.opts.NoKeysWatch {
			a.auth.Watch(hctx, keysWatchEvery)
		}
		close(watchDone)
	}()
	sweepDone := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, s := range a.sweepers {
			wg.Go(func() { _ = s.Run(hctx) })
		}
		wg.Wait()
		close(sweepDone)
	}()
	upkeepDone := a.upkeep.start(hctx)
	slotsDone := a.runSlots(hctx) // stopped once requests are drained
	pollerDone := make(chan struct{})
	go func() {
		if err := a.poller.Run(hctx); err != nil {
			a.log.Error("video: the task poller stopped", "err", err)
		}
		close(pollerDone)
	}()

	stopMetrics := a.serveMetrics()
	serveErr := a.server.Serve(ctx, ln)
	stopMetrics()
	stopBackground()
	<-watchDone
	<-sweepDone
	upkeepDone()
	<-pollerDone
	slotsDone()

	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	closeErr := errors.Join(a.recorder.Close(cctx), a.upkeep.refusals.Close(cctx), a.tracer.Shutdown(cctx))
	stopHolds()
	<-holdsDone
	stopRecorder()
	runErr := <-recDone
	if errors.Is(runErr, context.Canceled) {
		runErr = nil
	}
	return errors.Join(serveErr, closeErr, runErr)
}

// Close releases the journal, the store and the metrics listener.
func (a *App) Close() error {
	if a.metricsLn != nil {
		_ = a.metricsLn.Close() // already closed when Run served it
	}
	var jerr error
	if a.journal != nil {
		jerr = a.journal.Close()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = a.tracer.Shutdown(sctx) // flushed by Run already; safe twice
	return errors.Join(jerr, a.closeRedis(), a.store.Close())
}

func (a *App) nowUTC() time.Time { return a.now().UTC() }
