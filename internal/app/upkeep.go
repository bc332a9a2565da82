package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/refused"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/usage"
)

// upkeep keeps the usage table bounded: the purger deletes records past
// usage.retention, the refused counter stands in for the records that
// requests without an authenticated key no longer leave (it logs a summary
// at most once a minute), and refusals for those of keys' requests the
// gateway refused before any upstream call (a row per key, reason and
// minute). more holds other periodic workers (the
// console's session purge, the background responses' worker).
type upkeep struct {
	purger   *usage.Purger
	refused  *refused.Counter
	refusals *usage.Refusals // keys' requests refused before an upstream call, per minute
	more     []func(context.Context) error
}

func newUpkeep(cfg *config.Config, st store.Store, log *slog.Logger, now func() time.Time) *upkeep {
	return &upkeep{
		purger:   &usage.Purger{Store: st, Retention: time.Duration(cfg.Usage.Retention), Now: now, Log: log},
		refused:  refused.New(refused.Options{Logger: log, Now: now}),
		refusals: usage.NewRefusals(st, time.Duration(cfg.Usage.FlushInterval), log),
	}
}

// start runs the workers until ctx ends; the returned func waits for them.
func (u *upkeep) start(ctx context.Context) (wait func()) {
	var wg sync.WaitGroup
	for _, run := range append([]func(context.Context) error{u.purger.Run, u.refused.Run, u.refusals.Run}, u.more...) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = run(ctx)
		}()
	}
	return wg.Wait
}

// Refused counts the requests refused before a key was authenticated, by
// reason (the error code); they leave no usage record. The telemetry
// exporter reads its Counts.
func (a *App) Refused() *refused.Counter { return a.upkeep.refused }
