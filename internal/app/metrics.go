package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/modelgate/modelgate/internal/api/openai"
	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/telemetry"
)

// CodeNotReady is the error code of a /readyz that fails.
const CodeNotReady = "not_ready"

// readyTimeout bounds the database round trip of one /readyz probe: a
// database slower than that is not ready to serve requests either.
const readyTimeout = 2 * time.Second

// openMetrics makes the metrics and their listener when metrics.listen is
// set, and hands the metrics to h. The listener is opened here, not in
// Run, so that a port already taken fails New (and `serve` at once) and
// tests learn the bound address of a ":0" listen (MetricsAddr).
func (a *App) openMetrics(cfg *config.Config, h *openai.Handler) error {
	if cfg.Metrics == nil || cfg.Metrics.Listen == "" {
		return nil
	}
	names := make([]string, len(cfg.Providers))
	for i, p := range cfg.Providers {
		names[i] = p.Name
	}
	m := telemetry.New(telemetry.Options{Models: modelIDs(a.router), Providers: names, Refused: a.upkeep.refused.Counts,
		Circuits: a.circuits()})
	ln, err := net.Listen("tcp", cfg.Metrics.Listen)
	if err != nil {
		return fmt.Errorf("metrics.listen: %w", err)
	}
	a.metrics, a.metricsLn, h.Metrics = m, ln, m
	if a.redisFailures != nil {
		m.Registry().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "modelgate",
			Name: "ratelimit_redis_failures_total",
			Help: "Rate-limit checks and concurrency slots Redis failed or answered too late for, each let through (fail-open)."},
			func() float64 { return float64(a.redisFailures()) }))
	}
	return nil
}

// MetricsAddr is the address the metrics listener is bound to ("" when
// metrics are off).
func (a *App) MetricsAddr() string {
	if a.metricsLn == nil {
		return ""
	}
	return a.metricsLn.Addr().String()
}

// serveMetrics serves GET /metrics (and nothing else) on the metrics
// listener until stop is called, which closes it at once: a scrape is
// short, and nothing depends on the last one finishing.
func (a *App) serveMetrics() (stop func()) {
	if a.metricsLn == nil {
		return func() {}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metrics.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(a.metricsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("metrics: the listener stopped", "err", err)
		}
	}()
	a.log.Info("metrics: serving /metrics", "addr", a.MetricsAddr())
	return func() {
		_ = srv.Close()
		<-done
	}
}

// ready serves GET /readyz: 200 "ready" when the database answers within
// readyTimeout (the configuration is loaded by the time the app exists),
// 503 with the reason in the OpenAI error shape otherwise, so a load
// balancer sends no traffic to a gateway that could only fail it.
func (a *App) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := a.store.Ping(ctx); err != nil {
		a.log.Warn("readyz: the database does not answer", "err", err)
		apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer,
			Code: CodeNotReady, Message: "Not ready: the database does not answer.", Err: err})
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte("ready\n"))
}
