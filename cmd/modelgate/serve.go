package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"github.com/modelgate/modelgate/internal/app"
)

// serveCmd runs the gateway until SIGINT or SIGTERM, then drains; SIGHUP
// reloads the config file (reload.go).
func serveCmd(args []string, e env) int {
	fs, path := newFlags("serve", e)
	listen := fs.String("listen", "", "address to listen on (overrides the config's listen)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (for go tool pprof)")
	if _, err := parseFlags(fs, args); err != nil {
		return 2
	}
	cfg, err := loadConfig(*path, e, true)
	if err != nil {
		return 1
	}
	zeroOff := ""
	if *listen != "" {
		cfg.Listen = *listen
		zeroOff = cfg.ZeroConsole() // without a file, the console follows the listener
		// The file was checked with its own listen address.
		if err := cfg.CheckOrigin(); err != nil {
			fmt.Fprintf(e.stderr, "modelgate: --listen %s: %v\n", *listen, err)
			return 1
		}
	}
	log := newLogger(cfg, e.stderr)
	if zeroOff != "" {
		log.Warn("zero-config: " + zeroOff)
	}
	gc, limit := applyGC(cfg.GCPercent, cfg.MemoryLimit, e.getenv)
	if *cpuprofile != "" {
		stopProfile, err := startCPUProfile(*cpuprofile)
		if err != nil {
			fmt.Fprintf(e.stderr, "modelgate: %v\n", err)
			return 1
		}
		defer stopProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); stop() }() // a second signal kills at once

	a, err := app.New(ctx, cfg, app.Options{Logger: log, Out: e.stdout, Version: version, FileLimit: fileLimit()})
	if err != nil {
		fmt.Fprintf(e.stderr, "modelgate: %v\n", err)
		return 1
	}
	defer a.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(e.stderr, "modelgate: listen: %v\n", err)
		return 1
	}
	if err := a.Bootstrap(ctx, ln.Addr().String()); err != nil {
		fmt.Fprintf(e.stderr, "modelgate: %v\n", err)
		return 1
	}
	if err := watchReload(ctx, a, *path, *listen, e, log); err != nil {
		fmt.Fprintf(e.stderr, "modelgate: %v\n", err)
		return 1
	}
	log.Info("modelgate listening", "addr", "http://"+ln.Addr().String()+"/v1", "version", version,
		"database", databaseForLog(cfg.Database), "providers", len(cfg.Providers),
		"gc_percent", gc, "memory_limit", limit, "max_connections", a.MaxConns())
	if err := a.Run(ctx, ln); err != nil {
		log.Error("stopped with an error", "err", err)
		return 1
	}
	log.Info("stopped cleanly")
	return 0
}

// applyGC sets the garbage collector from the config, except where the
// environment already did (GOGC, GOMEMLIMIT: the Go runtime applied them
// at start, and they win), and describes the result for the log.
//
// gc_percent (default 200) lets the heap grow to three times what is live
// between collections instead of Go's two: the gateway's live heap is
// small, and collecting half as often cut its CPU per streamed request by
// about 6%. memory_limit (default 4 × max_body_memory) makes the collector
// work harder as the heap nears it, so a flood of large bodies peaks lower
// than it did at Go's defaults (docs/benchmark.md, docs/operations.md).
func applyGC(gcPercent int, memoryLimit int64, getenv func(string) (string, bool)) (gc, limit string) {
	if v, ok := getenv("GOGC"); ok && v != "" {
		gc = "GOGC=" + v
	} else {
		debug.SetGCPercent(gcPercent)
		gc = strconv.Itoa(gcPercent)
	}
	switch v, ok := getenv("GOMEMLIMIT"); {
	case ok && v != "":
		limit = "GOMEMLIMIT=" + v
	case memoryLimit > 0:
		debug.SetMemoryLimit(memoryLimit)
		limit = strconv.FormatInt(memoryLimit, 10) + "B"
		if memoryLimit%(1<<20) == 0 {
			limit = strconv.FormatInt(memoryLimit>>20, 10) + "MiB"
		}
	default:
		limit = "none"
	}
	return gc, limit
}

// startCPUProfile profiles until the returned function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// databaseForLog is the database setting as the start's log line shows
// it: a PostgreSQL URL redacted as provider URLs are (app.RedactURL: no
// user info, no query values), a SQLite path as it is.
func databaseForLog(db string) string {
	if !strings.HasPrefix(db, "postgres") {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "postgres (an unparsable URL)"
	}
	return app.RedactURL(u)
}
