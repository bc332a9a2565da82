package usage

import (
	"context"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// loop is the flusher: it wakes when a batch is full (Record's wake) or
// FlushInterval has passed, then writes what the buffer holds in batches of
// at most BatchSize; after Close it drains the buffer and returns. It sets
// r.err and closes r.done on the way out. Records wait in the channel
// rather than in a batch, so the loop sleeps between batches instead of
// being woken for every record.
func (r *Recorder) loop(ctx context.Context) {
	defer close(r.done)

	// Writes outlive ctx (records keep arriving during shutdown) but stop
	// when Close gives up, so a hung write cannot hold Close past its deadline.
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		select {
		case <-r.abandon:
			cancel()
		case <-base.Done():
		}
	}()

	ticker := time.NewTicker(r.opt.FlushInterval)
	defer ticker.Stop()
	ctxDone := ctx.Done()
	for {
		all := true // write partial batches too
		select {
		case <-r.full:
			all = false
		case <-ticker.C:
		case <-ctxDone:
			ctxDone = nil // flush now, then keep going until Close
		case <-r.sealed:
			r.drain(base)
			return
		case <-r.abandon:
			r.giveUp(nil)
			return
		}
		if !r.flush(base, all) {
			return
		}
	}
}

// flush writes the whole batches the buffer holds, and with all what is
// left of the last one too (the ticker's flush, a partial batch). It
// stops once the buffer has less than a batch (or, with all, at the first
// partial batch), so records that trickle in during a write wait for the
// next wake. It reports false, having given up, when Close abandoned a
// write.
func (r *Recorder) flush(ctx context.Context, all bool) bool {
	for all || len(r.ch) >= r.fullAt {
		batch := r.fill(r.newBatch())
		if len(batch) == 0 {
			return true
		}
		if !r.write(ctx, batch) {
			r.giveUp(batch)
			return false
		}
		all = all && len(batch) == r.opt.BatchSize
	}
	return true
}

// newBatch returns an empty batch; each batch gets its own backing array so
// that a Writer is never handed memory the loop reuses.
func (r *Recorder) newBatch() []store.UsageRecord {
	return make([]store.UsageRecord, 0, r.opt.BatchSize)
}

// fill moves already-queued records into the empty batch, and their
// journal tickets into r.tickets, without waiting, until the batch is full
// or the channel is empty.
func (r *Recorder) fill(batch []store.UsageRecord) []store.UsageRecord {
	r.tickets = r.tickets[:0]
	for len(batch) < r.opt.BatchSize {
		select {
		case e := <-r.ch:
			batch = append(batch, e.rec)
			r.tickets = append(r.tickets, e.ticket)
		default:
			return batch
		}
	}
	return batch
}

// drain writes everything left in the channel, after Close sealed it, in
// batches of at most BatchSize, checking between batches whether Close
// gave up.
func (r *Recorder) drain(ctx context.Context) {
	for {
		batch := r.fill(r.newBatch())
		if len(batch) == 0 {
			return
		}
		select {
		case <-r.abandon:
			r.giveUp(batch)
			return
		default:
		}
		if !r.write(ctx, batch) {
			r.giveUp(batch)
			return
		}
	}
}

// write writes batch (fill's last), retrying with exponential backoff until it succeeds
// (true) or Close gives up (false). While it retries the loop reads nothing,
// so a full channel pushes back on Record instead of growing without bound.
//
// The first attempt appends (AppendUsage): the batch's records are new,
// since every request is recorded once and a batch is written once. A
// retry inserts (InsertUsage), which skips what is stored: the failed
// attempt may have committed (a store whose reply to COMMIT was lost).
func (r *Recorder) write(ctx context.Context, batch []store.UsageRecord) bool {
	backoff := r.opt.RetryBackoff
	for attempt := 1; ; attempt++ {
		put := r.w.InsertUsage
		if attempt == 1 {
			put = r.w.AppendUsage
		}
		err := put(ctx, batch)
		if err == nil {
			if r.opt.Journal != nil {
				r.opt.Journal.Committed(r.tickets)
			}
			if r.opt.OnCommit != nil {
				r.opt.OnCommit(batch)
			}
			return true
		}
		select {
		case <-r.abandon:
			return false
		default:
		}
		r.log.Warn("usage: writing batch failed, will retry",
			"records", len(batch), "attempt", attempt, "retry_in", backoff, "err", err)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-r.abandon:
			t.Stop()
			return false
		}
		backoff = min(2*backoff, r.opt.MaxRetryBackoff)
	}
}

// giveUp runs once Close's context has ended: it waits until no Record can
// send any more, then logs batch and everything still queued as unwritten
// and sets the loop's error.
func (r *Recorder) giveUp(batch []store.UsageRecord) {
	<-r.sealed // prompt: blocked Record calls return on abandon
	for {
		for _, rec := range batch {
			r.logUnwritten("usage: record not written before Close gave up", rec)
		}
		r.lost.Add(int64(len(batch)))
		batch = r.fill(batch[:0])
		if len(batch) == 0 {
			break
		}
	}
	if n := r.lost.Load(); n > 0 {
		r.log.Error("usage: records not written, see the records logged above", "count", n)
		r.err = fmt.Errorf("%d usage records not written (logged at ERROR level)", n)
	}
}
