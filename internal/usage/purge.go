package usage

import (
	"context"
	"log/slog"
	"strconv"
	"time"
)

// Purge defaults: how often the purger wakes, how many records one
// statement deletes, and the pause between two statements.
const (
	DefaultPurgeEvery = time.Hour
	DefaultPurgeBatch = 1000
	DefaultPurgePause = 100 * time.Millisecond
)

// Purgeable is the store method the purger needs (store.Store has it).
type Purgeable interface {
	PurgeUsage(ctx context.Context, before time.Time, limit int) (int, error)
}

// RefusalPurgeable is the store method that purges refusal counts
// (store.Store has it); a Purgeable that has it gets its counts purged
// with the same retention as its records.
type RefusalPurgeable interface {
	PurgeRefusals(ctx context.Context, before time.Time, limit int) (int, error)
}

// Purger deletes usage records older than the retention: once when Run
// starts and then every Every. Each pass deletes Batch records per
// statement, pausing Pause between statements, so the transactions stay
// small and the usage flusher (the only other writer on the request
// path) gets the database between them. The ledger and balances are
// never touched: money has no retention.
type Purger struct {
	Store     Purgeable
	Retention time.Duration    // records older than this go; <= 0 keeps them forever
	Every     time.Duration    // between passes (default DefaultPurgeEvery)
	Batch     int              // records per statement (default DefaultPurgeBatch)
	Pause     time.Duration    // between statements (default DefaultPurgePause)
	Now       func() time.Time // the clock (default time.Now)
	Log       *slog.Logger     // where passes and failures go (default: discarded)
}

// Run purges at once and then every Every until ctx ends, and returns
// ctx's error. A failed pass is logged and tried again at the next one.
// With no retention it only waits for ctx.
func (p *Purger) Run(ctx context.Context) error {
	if p.Retention <= 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	every := p.Every
	if every <= 0 {
		every = DefaultPurgeEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		_, _ = p.Purge(ctx)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Purge runs one pass: it deletes every record (and refusal count) older
// than the retention, in batches, and returns how many records it
// deleted. It stops early, with the error, when ctx ends or a statement
// fails (logged at WARN).
func (p *Purger) Purge(ctx context.Context) (int, error) {
	if p.Retention <= 0 {
		return 0, nil
	}
	batch, pause, log := p.Batch, p.Pause, p.Log
	if batch <= 0 {
		batch = DefaultPurgeBatch
	}
	if pause <= 0 {
		pause = DefaultPurgePause
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	// The cut-off is fixed for the pass: records that age past it while
	// the pass runs wait for the next one, so a pass always ends.
	before := now().Add(-p.Retention)
	total, err := p.purge(ctx, p.Store.PurgeUsage, before, batch, pause)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("usage: purging old records failed; trying again at the next pass", "purged", total, "err", err)
		}
		return total, err
	}
	if total > 0 {
		log.Info("usage: purged records older than the retention", "records", total,
			"before", before.UTC().Format(time.RFC3339), "retention", days(p.Retention))
	}
	if rp, ok := p.Store.(RefusalPurgeable); ok {
		n, err := p.purge(ctx, rp.PurgeRefusals, before, batch, pause)
		if err != nil && ctx.Err() == nil {
			log.Warn("usage: purging old refusal counts failed; trying again at the next pass", "purged", n, "err", err)
		}
		if n > 0 {
			log.Info("usage: purged refusal counts older than the retention", "rows", n,
				"before", before.UTC().Format(time.RFC3339), "retention", days(p.Retention))
		}
	}
	return total, nil
}

// purge calls del with batch until it deletes less than batch, pausing
// between calls, and returns how many it deleted.
func (p *Purger) purge(ctx context.Context, del func(context.Context, time.Time, int) (int, error),
	before time.Time, batch int, pause time.Duration) (int, error) {
	total := 0
	for {
		n, err := del(ctx, before, batch)
		total += n
		if err != nil {
			return total, err
		}
		if n < batch {
			return total, nil
		}
		timer := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			timer.Stop()
			return total, ctx.Err()
		case <-timer.C:
		}
	}
}

// days writes a whole number of days as "90d", anything else as Go does.
func days(d time.Duration) string {
	const day = 24 * time.Hour
	if d > 0 && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	return d.String()
}
