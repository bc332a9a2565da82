package video

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// Poller defaults, applied to zero fields when the poller first runs.
const (
	DefaultWorkers         = 16
	DefaultLease           = 11 * time.Minute
	DefaultPollTimeout     = 30 * time.Second
	DefaultDownloadTimeout = 10 * time.Minute
	DefaultMaxBytes        = 512 << 20
	DefaultTick            = time.Second
	// purgeEvery is how many Ticks pass between two purges.
	purgeEvery = 60
)

// Poller is the background worker that drives open tasks to their end: it
// claims due tasks with a lease, polls their upstreams with a bounded pool
// (a hung upstream holds one worker, never the others), stores finished
// videos, charges them, times out what passed its deadline, and purges
// expired tasks. Several pollers (replicas) may share one store: the lease
// keeps any task in one poller's hands at a time.
//
// Zero fields take the defaults the first time Run, Step, Purge or Wake is
// called; Store, Makers, Media and Owner are required. Fields must not be
// changed after that.
type Poller struct {
	Store  Store
	Makers Makers
	Media  Media
	Now    func() time.Time // nil: time.Now
	Log    *slog.Logger     // nil: discard
	// Owner names this process as lease owner (its instance id); it must
	// differ between replicas sharing a store.
	Owner string
	// Workers bounds the polls running at once (default 16).
	Workers int
	// Lease is how long a claimed task stays ours (default 11m). A lease
	// lasts only while one poll of the task runs (UpdateTask and
	// FinishTask end it), so it only delays the takeover of tasks a dead
	// process was polling at that moment; it must outlast PollTimeout +
	// DownloadTimeout.
	Lease           time.Duration
	PollTimeout     time.Duration // per status call (default 30s)
	DownloadTimeout time.Duration // fetching and storing a finished video (default 10m)
	// MaxBytes is the largest video stored (default 512 MiB); a larger one
	// fails its task.
	MaxBytes int64
	// PollMin and PollMax shape the Schedule (defaults 5s and 30s).
	PollMin, PollMax time.Duration
	// Tick is how often Run claims due tasks (default 1s); Wake claims at
	// once.
	Tick time.Duration

	once     sync.Once
	setupErr error
	sched    Schedule
	sem      chan struct{} // one token per running poll
	wake     chan struct{}
	backlog  atomic.Bool // the last claim filled every free worker
}

// setup applies the defaults once and checks the required fields.
func (p *Poller) setup() error {
	p.once.Do(func() {
		if p.Now == nil {
			p.Now = time.Now
		}
		if p.Log == nil {
			p.Log = slog.New(slog.DiscardHandler)
		}
		p.Workers = orDefault(p.Workers, DefaultWorkers)
		p.Lease = orDefault(p.Lease, DefaultLease)
		p.PollTimeout = orDefault(p.PollTimeout, DefaultPollTimeout)
		p.DownloadTimeout = orDefault(p.DownloadTimeout, DefaultDownloadTimeout)
		p.MaxBytes = orDefault(p.MaxBytes, DefaultMaxBytes)
		p.PollMin = orDefault(p.PollMin, DefaultPollMin)
		p.PollMax = orDefault(p.PollMax, DefaultPollMax)
		p.Tick = orDefault(p.Tick, DefaultTick)
		p.sched = Schedule{Min: p.PollMin, Max: p.PollMax}
		p.sem = make(chan struct{}, p.Workers)
		p.wake = make(chan struct{}, 1)
		var missing []string
		for name, ok := range map[string]bool{"Store": p.Store != nil, "Makers": p.Makers != nil, "Media": p.Media != nil, "Owner": p.Owner != ""} {
			if !ok {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			p.setupErr = fmt.Errorf("video: poller without %v", missing)
		}
	})
	return p.setupErr
}

// orDefault is v, or def when v is not positive.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Schedule is the poll schedule the poller uses (the service computes a
// new task's first NextPollAt with the same one).
func (p *Poller) Schedule() Schedule {
	_ = p.setup()
	return p.sched
}

// Wake makes Run claim due tasks now rather than at the next Tick (call it
// after a submission). It never blocks.
func (p *Poller) Wake() {
	_ = p.setup()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run claims due tasks every Tick or on Wake and polls them in the pool,
// and purges expired tasks every 60 Ticks, until ctx ends. It returns nil
// once ctx has ended and every poll it started has returned: polls run
// under ctx, so shutdown cancels them and their leases simply expire.
func (p *Poller) Run(ctx context.Context) error {
	if err := p.setup(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { p.purgeLoop(ctx) })
	tick := time.NewTicker(p.Tick)
	defer tick.Stop()
	for {
		p.fill(ctx, &wg)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-p.wake:
		}
	}
}

// fill claims as many due tasks as there are free workers, without
// waiting for any: when every worker is busy, the first to finish wakes
// Run to claim again.
func (p *Poller) fill(ctx context.Context, wg *sync.WaitGroup) {
	for ctx.Err() == nil {
		free := p.grab(p.Workers)
		if free == 0 {
			p.backlog.Store(true)
			return
		}
		got, err := p.claim(ctx, p.Now(), p.Lease, free, wg, true)
		if err != nil {
			if ctx.Err() == nil {
				p.Log.Warn("video: claiming tasks failed", "err", err)
			}
			return
		}
		if got < free {
			p.backlog.Store(false)
			return
		}
	}
}

// Step claims every task due now and polls each once, at most Workers at a
// time, and returns when all those polls have; it reports how many tasks
// it polled. A poll that hangs holds one worker: the others go on claiming
// and polling the rest.
func (p *Poller) Step(ctx context.Context) (int, error) {
	if err := p.setup(); err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	// Every claim selects with the time the step started: a polled task's
	// next poll is after it, so no task is polled twice in one step.
	start := p.Now()
	n := 0
	for {
		select {
		case p.sem <- struct{}{}:
		case <-ctx.Done():
			return n, ctx.Err()
		}
		free := 1 + p.grab(p.Workers-1)
		// The lease lasts Lease from the claim, however long the step
		// waited for a worker.
		lease := p.Lease + max(p.Now().Sub(start), 0)
		got, err := p.claim(ctx, start, lease, free, &wg, false)
		n += got
		if err != nil {
			return n, err
		}
		if got < free {
			return n, nil
		}
	}
}

// grab takes up to n free worker tokens without waiting.
func (p *Poller) grab(n int) int {
	for i := range n {
		select {
		case p.sem <- struct{}{}:
		default:
			return i
		}
	}
	return n
}

// claim leases up to free due tasks (free worker tokens are held by the
// caller) and starts a poll for each under wg; the tokens it does not use
// are given back, and each poll gives back its own when it returns.
func (p *Poller) claim(ctx context.Context, now time.Time, lease time.Duration, free int, wg *sync.WaitGroup, wakeAfter bool) (int, error) {
	tasks, err := p.Store.ClaimTasks(ctx, p.Owner, now, lease, free)
	for range free - len(tasks) {
		<-p.sem
	}
	for _, t := range tasks {
		wg.Go(func() {
			defer func() {
				<-p.sem
				if wakeAfter && p.backlog.Load() {
					p.Wake()
				}
			}()
			p.poll(ctx, t)
		})
	}
	if err != nil {
		return len(tasks), fmt.Errorf("video: claim tasks: %w", err)
	}
	return len(tasks), nil
}

// logResult logs what a store write of a poll answered.
func (p *Poller) logResult(ctx context.Context, t store.VideoTask, what string, err error) {
	switch {
	case err == nil:
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
		p.Log.Info("video: task changed meanwhile; skipped", "task", t.ID, "write", what, "err", err)
	case ctx.Err() != nil:
		// Shutdown: the lease expires and another poll takes over.
	default:
		p.Log.Error("video: storing a poll's result failed", "task", t.ID, "write", what, "err", err)
	}
}
