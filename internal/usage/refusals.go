package usage

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// RefusalWriter is where refusal counts go (store.Store has it).
type RefusalWriter interface {
	AddRefusals(ctx context.Context, counts []store.RefusalCount) error
}

// maxRefusalRows bounds the rows a Refusals holds between two writes: past
// it, the write is started at once rather than waiting for the interval.
const maxRefusalRows = 4096

// Refusals counts the requests an authenticated key had refused before any
// upstream call, one count per account, key, UTC minute, endpoint and reason, and
// writes the counts every interval, adding to the stored ones (see
// store.Refusals). A flood of refusals from one key costs a map increment
// each and one row per minute, where a usage record each would cost a
// journal write, a record kept for months and a share of a batch.
//
// Counts are not money: a count that cannot be written is kept and tried
// again at the next interval, and on Close; one still unwritten when
// Close gives up is logged, not kept.
type Refusals struct {
	w     RefusalWriter
	log   *slog.Logger
	every time.Duration

	mu      sync.Mutex
	pending map[refusalKey]*store.RefusalCount
	wake    chan struct{} // a write is due before the interval: pending is full
	writeMu sync.Mutex    // one write at a time (Run's and Close's)
}

type refusalKey struct {
	account, key, endpoint, reason string
	minute                         int64 // Unix seconds of the minute's start
}

// NewRefusals returns a Refusals writing to w every every (default
// DefaultFlushInterval); start it with Run.
func NewRefusals(w RefusalWriter, every time.Duration, log *slog.Logger) *Refusals {
	if every <= 0 {
		every = DefaultFlushInterval
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Refusals{w: w, log: log, every: every, pending: map[refusalKey]*store.RefusalCount{},
		wake: make(chan struct{}, 1)}
}

// Count counts one refused request: c.Count is ignored (one), c.Minute is
// the request's time (truncated here to its UTC minute).
func (r *Refusals) Count(c store.RefusalCount) {
	m := c.Minute.UTC().Truncate(time.Minute)
	k := refusalKey{account: c.AccountID, key: c.KeyID, endpoint: c.Endpoint, reason: c.Reason, minute: m.Unix()}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.pending[k]; p != nil {
		p.Count++
		p.Status = c.Status
		return
	}
	c.Minute, c.Count = m, 1
	r.pending[k] = &c
	if len(r.pending) == maxRefusalRows {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// Run writes the counts every interval until ctx ends; Close writes the
// rest.
func (r *Refusals) Run(ctx context.Context) error {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-r.wake:
		}
		if err := r.Flush(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("usage: writing refusal counts failed; trying again at the next interval", "err", err)
		}
	}
}

// Flush writes the counts held now. Counts it could not write are kept
// for the next Flush (added to what arrives meanwhile).
func (r *Refusals) Flush(ctx context.Context) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.Lock()
	if len(r.pending) == 0 {
		r.mu.Unlock()
		return nil
	}
	held := r.pending
	r.pending = make(map[refusalKey]*store.RefusalCount, len(held))
	r.mu.Unlock()
	counts := make([]store.RefusalCount, 0, len(held))
	for _, c := range held {
		counts = append(counts, *c)
	}
	if err := r.w.AddRefusals(ctx, counts); err != nil {
		r.mu.Lock()
		for k, c := range held {
			if p := r.pending[k]; p != nil {
				p.Count += c.Count
			} else {
				r.pending[k] = c
			}
		}
		r.mu.Unlock()
		return fmt.Errorf("usage: refusals: %w", err)
	}
	return nil
}

// Close writes what is held; when that fails it logs the counts at ERROR
// level (they are not kept) and returns the error. Counts that arrive
// after Close wait for a Flush that may never come: call it once no
// request is served any more.
func (r *Refusals) Close(ctx context.Context) error {
	err := r.Flush(ctx)
	if err == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.pending {
		r.log.Error("usage: refusal count not written", "account_id", c.AccountID, "key_id", c.KeyID,
			"minute", c.Minute.Format(time.RFC3339), "reason", c.Reason, "status", c.Status, "count", c.Count)
	}
	r.pending = map[refusalKey]*store.RefusalCount{}
	return err
}
