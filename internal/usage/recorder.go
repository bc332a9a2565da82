// Package usage moves usage records off the request hot path: handlers hand
// each finished request's record to a Recorder with a channel send, and the
// Recorder's flusher writes them to the store in batches, retrying failed
// writes so that no record is dropped.
//
// Lifecycle:
//
//	rec := usage.New(st, usage.Options{Logger: log})
//	go rec.Run(ctx)          // the flusher
//	...                      // handlers call rec.Record(r)
//	srv.Shutdown(shutdownCtx) // no more requests
//	rec.Close(shutdownCtx)    // flush what is buffered, stop the flusher
package usage

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// Writer is where batches go (store.Store satisfies it; see store.Usage).
// Both methods must honour ctx cancellation and must not keep recs after
// returning. AppendUsage stores records that are new (the Recorder's first
// attempt at a batch: each request is recorded once); InsertUsage must skip
// records whose RequestID it already has, so a retried batch is harmless.
type Writer interface {
	AppendUsage(ctx context.Context, recs []store.UsageRecord) error
	InsertUsage(ctx context.Context, recs []store.UsageRecord) error
}

// The defaults of Options. The configuration's usage section fills in the
// same values (internal/app's TestUsageDefaultsMatchTheRecorder keeps them equal).
const (
	DefaultBatchSize     = 8192
	DefaultFlushInterval = time.Second
)

// Options tunes a Recorder; zero fields take the defaults shown.
type Options struct {
	// BatchSize caps a batch: the flusher is woken early when this many
	// records wait (default 8192).
	BatchSize int
	// FlushInterval is how long a record may wait for its batch (default
	// 1s). What a batch costs the store per account and key in it (a
	// block, a balance, a key's spent, rollup rows) is paid once per
	// batch, so the longer a batch gathers, the less each record costs
	// when many tenants are active (docs/usage-records.md).
	FlushInterval time.Duration
	// Buffer is the channel's capacity (default 2 × BatchSize, at least
	// 8192): it holds the batch being gathered and what arrives while the
	// previous one is written.
	Buffer int
	Logger *slog.Logger // where failures and unwritten records go (default slog.Default())

	// RetryBackoff is the wait before retrying a failed batch; it doubles
	// after each failure up to MaxRetryBackoff (default 100ms).
	RetryBackoff time.Duration
	// MaxRetryBackoff caps the wait between retries (default 5s).
	MaxRetryBackoff time.Duration

	// Journal, when set, gets every record before it is queued, so a
	// crash loses none (see Journal).
	Journal *Journal
	// OnCommit, when set, is called by the flusher with each batch once it
	// is stored (billing learns that the batch's charges are in the store).
	OnCommit func([]store.UsageRecord)
}

// withDefaults fills the zero fields of o.
func (o Options) withDefaults() Options {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = DefaultFlushInterval
	}
	if o.Buffer <= 0 {
		o.Buffer = max(8192, 2*o.BatchSize)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = 100 * time.Millisecond
	}
	if o.MaxRetryBackoff <= 0 {
		o.MaxRetryBackoff = 5 * time.Second
	}
	o.MaxRetryBackoff = max(o.MaxRetryBackoff, o.RetryBackoff)
	return o
}

// Recorder buffers usage records and writes them in batches, so the request
// path never waits on the database unless the buffer is full.
type Recorder struct {
	w   Writer
	opt Options
	log *slog.Logger
	ch  chan entry
	// full wakes the flusher when ch holds fullAt records (a batch, or
	// the whole buffer when that is smaller). The flusher does not wait
	// on ch itself: a flusher parked on ch would be woken, and a select
	// over all its channels run, for every record.
	full   chan struct{}
	fullAt int

	// mu is held shared by Record for the whole of its send and exclusively
	// by Close to set closed; once Close holds it, no send is in flight and
	// none can start, so the flusher's final drain of ch is complete.
	mu     sync.RWMutex
	closed bool

	running   atomic.Bool // the flusher loop has been started (by Run or Close)
	closeOnce sync.Once
	sealed    chan struct{} // closed once closed is set: ch gets no more sends
	abandonMu sync.Once
	abandon   chan struct{} // closed when Close's context ends: stop writing, log the rest
	done      chan struct{} // closed when the flusher loop has returned
	err       error         // the loop's result; read only after done is closed
	lost      atomic.Int64  // records given up on (logged, not written)

	// tickets are the journal tickets of the records fill last returned,
	// in the same order; the flusher's alone.
	tickets []Ticket
}

// entry is a queued record and where the journal holds it.
type entry struct {
	rec    store.UsageRecord
	ticket Ticket
}

// New returns a Recorder writing to w; start its flusher with Run.
func New(w Writer, o Options) *Recorder {
	o = o.withDefaults()
	return &Recorder{
		w:       w,
		opt:     o,
		log:     o.Logger,
		ch:      make(chan entry, o.Buffer),
		full:    make(chan struct{}, 1),
		fullAt:  min(o.BatchSize, o.Buffer),
		sealed:  make(chan struct{}),
		abandon: make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// Record queues rec for writing; it is safe for concurrent use and costs a
// channel send into the buffer (the flusher is woken only when a batch is
// full, or by its ticker). It never drops a record: when the buffer is
// full it blocks until the flusher makes room. A record that cannot be queued any more
// (Record called after Close, or still blocked when Close gives up) is not
// written but logged at ERROR level as JSON, so nothing vanishes silently.
func (r *Recorder) Record(rec store.UsageRecord) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		r.logUnwritten("usage: record after Close, not written", rec)
		return
	}
	e := entry{rec: rec}
	if j := r.opt.Journal; j != nil {
		t, err := j.Append(&rec)
		if err != nil {
			r.log.Error("usage: journal append failed; the record is only in memory", "request_id", rec.RequestID, "err", err)
		}
		e.ticket = t
	}
	select {
	case r.ch <- e:
		if len(r.ch) >= r.fullAt {
			r.wake()
		}
		return
	default: // buffer full: wait for the flusher (backpressure)
	}
	r.wake()
	select {
	case r.ch <- e:
	case <-r.abandon:
		r.lost.Add(1)
		r.logUnwritten("usage: record not written before Close gave up", rec)
	}
}

// wake tells the flusher that a batch is waiting; a wake already pending
// is enough.
func (r *Recorder) wake() {
	select {
	case r.full <- struct{}{}:
	default:
	}
}

// Run is the flusher loop. It writes batches until Close is called and then
// returns once everything recorded before Close has been written (nil) or
// logged as unwritten (an error). ctx ending does not stop it by itself,
// because requests still finishing during shutdown keep recording; it only
// makes Run flush what is buffered right away. Calling Run again, or after
// Close started the flusher itself, just waits for the flusher to finish.
func (r *Recorder) Run(ctx context.Context) error {
	if r.running.CompareAndSwap(false, true) {
		r.loop(ctx)
	}
	<-r.done
	return r.err
}

// Close stops accepting records, flushes everything still buffered and waits
// for the flusher to finish (starting it if Run never was). If ctx ends
// first, the records not yet written are logged at ERROR level as JSON and
// Close returns an error; a Writer that honours ctx makes that prompt.
func (r *Recorder) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		if r.running.CompareAndSwap(false, true) {
			go r.loop(context.Background())
		}
		go r.seal()
	})
	select {
	case <-r.done:
	case <-ctx.Done():
		r.abandonMu.Do(func() { close(r.abandon) })
		<-r.done
	}
	if r.err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("usage: close: %w: %w", cerr, r.err)
		}
		return fmt.Errorf("usage: close: %w", r.err)
	}
	return nil
}

// seal waits for in-flight Record calls to finish and stops new ones from
// sending, then tells the flusher that ch can be drained for the last time.
func (r *Recorder) seal() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	close(r.sealed)
}

// logUnwritten logs rec at ERROR level, as JSON, with msg.
func (r *Recorder) logUnwritten(msg string, rec store.UsageRecord) {
	b, err := json.Marshal(rec)
	if err != nil {
		r.log.Error(msg, "request_id", rec.RequestID, "record", fmt.Sprintf("%+v", rec))
		return
	}
	r.log.Error(msg, "request_id", rec.RequestID, "record", json.RawMessage(b))
}
