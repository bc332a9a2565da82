// Package task runs the background work of durable tasks: rows in the
// store that hold a reservation until a vendor's job ends (video
// generations, background Responses). A Pool claims due tasks with a lease
// (so replicas sharing a store never work on one task at once, and a dead
// process's tasks are taken over when its lease ends), works each in a
// bounded pool of goroutines (a hung upstream holds one worker, never the
// others), and purges expired tasks periodically. What a claim, a piece of
// work and a purge are is the caller's: this package knows no task type.
//
// Backoff and Jitter are the poll schedule's arithmetic, shared so every
// kind of task spreads its polls the same way.
package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Pool defaults, applied to zero fields when the pool first runs.
const (
	DefaultWorkers    = 16
	DefaultTick       = time.Second
	DefaultPurgeEvery = 60
)

// Pool claims due tasks of type T and works them, at most Workers at a
// time. Claim, Work and Lease are required; zero fields take the defaults
// the first time Run, Step or Wake is called, and must not be changed
// after that.
type Pool[T any] struct {
	// Name prefixes errors and log lines ("video", "responses").
	Name string
	// Claim leases up to limit tasks due at now to this process until
	// now+lease, atomically (see store.Tasks.ClaimTasks).
	Claim func(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]T, error)
	// Work looks at one claimed task once and stores what it learned; its
	// failures are its own to log.
	Work func(ctx context.Context, t T)
	// Purge deletes expired tasks and reports how many (nil: none).
	Purge func(ctx context.Context) (int, error)
	// Lease is how long a claimed task stays this process's.
	Lease   time.Duration
	Workers int              // polls at once (default 16)
	Tick    time.Duration    // how often Run claims (default 1s); Wake claims at once
	Now     func() time.Time // nil: time.Now
	Log     *slog.Logger     // nil: discard
	// PurgeEvery is how many Ticks pass between two purges (default 60).
	PurgeEvery int

	once     sync.Once
	setupErr error
	sem      chan struct{} // one token per running piece of work
	wake     chan struct{}
	backlog  atomic.Bool // the last claim filled every free worker
}

// setup applies the defaults once and checks the required fields.
func (p *Pool[T]) setup() error {
	p.once.Do(func() {
		if p.Now == nil {
			p.Now = time.Now
		}
		if p.Log == nil {
			p.Log = slog.New(slog.DiscardHandler)
		}
		p.Workers = OrDefault(p.Workers, DefaultWorkers)
		p.Tick = OrDefault(p.Tick, DefaultTick)
		p.PurgeEvery = OrDefault(p.PurgeEvery, DefaultPurgeEvery)
		p.sem = make(chan struct{}, p.Workers)
		p.wake = make(chan struct{}, 1)
		if p.Claim == nil || p.Work == nil || p.Lease <= 0 {
			p.setupErr = fmt.Errorf("%s: task pool without Claim, Work or Lease", p.Name)
		}
	})
	return p.setupErr
}

// OrDefault is v, or def when v is not positive.
func OrDefault[N int | int64 | time.Duration](v, def N) N {
	if v <= 0 {
		return def
	}
	return v
}

// Wake makes Run claim due tasks now rather than at the next Tick (call it
// after a submission). It never blocks.
func (p *Pool[T]) Wake() {
	_ = p.setup()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run claims due tasks every Tick or on Wake and works them in the pool,
// and purges every PurgeEvery Ticks, until ctx ends. It returns nil once
// ctx has ended and every piece of work it started has returned: work runs
// under ctx, so shutdown cancels it and the leases simply expire.
func (p *Pool[T]) Run(ctx context.Context) error {
	if err := p.setup(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	if p.Purge != nil {
		wg.Go(func() { p.purgeLoop(ctx) })
	}
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
func (p *Pool[T]) fill(ctx context.Context, wg *sync.WaitGroup) {
	for ctx.Err() == nil {
		free := p.grab(p.Workers)
		if free == 0 {
			p.backlog.Store(true)
			return
		}
		got, err := p.claim(ctx, p.Now(), p.Lease, free, wg, true)
		if err != nil {
			if ctx.Err() == nil {
				p.Log.Warn(p.Name+": claiming tasks failed", "err", err)
			}
			return
		}
		if got < free {
			p.backlog.Store(false)
			return
		}
	}
}

// Step claims every task due now and works each once, at most Workers at
// a time, and returns when all of them have; it reports how many tasks it
// worked. A piece of work that hangs holds one worker: the others go on
// claiming and working the rest.
func (p *Pool[T]) Step(ctx context.Context) (int, error) {
	if err := p.setup(); err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	// Every claim selects with the time the step started: a worked task's
	// next poll is after it, so no task is worked twice in one step.
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
func (p *Pool[T]) grab(n int) int {
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
// caller) and starts the work of each under wg; the tokens it does not use
// are given back, and each piece of work gives back its own when it
// returns.
func (p *Pool[T]) claim(ctx context.Context, now time.Time, lease time.Duration, free int, wg *sync.WaitGroup, wakeAfter bool) (int, error) {
	tasks, err := p.Claim(ctx, now, lease, free)
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
			p.Work(ctx, t)
		})
	}
	if err != nil {
		return len(tasks), fmt.Errorf("%s: claim tasks: %w", p.Name, err)
	}
	return len(tasks), nil
}

// purgeLoop purges at once and then every PurgeEvery Ticks until ctx ends.
func (p *Pool[T]) purgeLoop(ctx context.Context) {
	tick := time.NewTicker(p.Tick * time.Duration(p.PurgeEvery))
	defer tick.Stop()
	for {
		n, err := p.Purge(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled):
			p.Log.Warn(p.Name+": purging expired tasks failed", "purged", n, "err", err)
		case n > 0:
			p.Log.Info(p.Name+": purged expired tasks", "purged", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
