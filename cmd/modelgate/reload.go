package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelgate/modelgate/internal/app"
)

// watchReload reloads the config file on each SIGHUP until ctx ends:
// providers, groups, models and prices, routing and circuit settings
// change for new requests, while those in flight finish on the old ones.
// A file with errors is reported and the running config kept. listen is
// the --listen override, applied again. With Redis, a reload a SIGHUP
// caused is announced to the other replicas of the same database, which
// reload their own files as if they had been sent one.
func watchReload(ctx context.Context, a *app.App, path, listen string, e env, log *slog.Logger) error {
	remote, err := a.ReloadRequests(ctx)
	if err != nil {
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			local := true
			select {
			case <-ctx.Done():
				return
			case <-hup:
			case from := <-remote:
				local = false
				log.Info("config reload: another replica reloaded its config, rereading this one's", "replica", from)
			}
			cfg, err := loadConfig(path, e, true) // its problems are printed as at start
			if err != nil {
				log.Error("config reload failed: the file has errors; the running config is kept")
				continue
			}
			if listen != "" {
				cfg.Listen = listen
				cfg.ZeroConsole() // as at start
			}
			warnings, err := a.Reload(cfg)
			if err != nil {
				log.Error("config reload failed; the running config is kept", "err", err)
				continue
			}
			for _, w := range warnings {
				log.Warn("config reload: " + w)
			}
			if local {
				if err := a.AnnounceReload(ctx); err != nil {
					log.Warn("config reload: the other replicas were not told", "err", err)
				}
			}
		}
	}()
	return nil
}
