package video

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/task"
)

// Poller defaults, applied to zero fields when the poller first runs.
const (
	DefaultWorkers         = task.DefaultWorkers
	DefaultLease           = 11 * time.Minute
	DefaultPollTimeout     = 30 * time.Second
	DefaultDownloadTimeout = 10 * time.Minute
	DefaultMaxBytes        = 512 << 20
	DefaultTick            = task.DefaultTick
	// purgeEvery is how many Ticks pass between two purges.
	purgeEvery = 60
)

// Poller is the background worker that drives open tasks to their end: it
// claims due tasks with a lease, polls their upstreams with a bounded pool
// (a hung upstream holds one worker, never the others), stores finished
// videos, charges them, times out what passed its deadline, and purges
// expired tasks. Several pollers (replicas) may share one store: the lease
// keeps any task in one poller's hands at a time. The claiming, the pool
// and the purge schedule are internal/task's; this type knows videos.
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
	pool     *task.Pool[store.VideoTask]
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
		p.Workers = task.OrDefault(p.Workers, DefaultWorkers)
		p.Lease = task.OrDefault(p.Lease, DefaultLease)
		p.PollTimeout = task.OrDefault(p.PollTimeout, DefaultPollTimeout)
		p.DownloadTimeout = task.OrDefault(p.DownloadTimeout, DefaultDownloadTimeout)
		p.MaxBytes = task.OrDefault(p.MaxBytes, DefaultMaxBytes)
		p.PollMin = task.OrDefault(p.PollMin, DefaultPollMin)
		p.PollMax = task.OrDefault(p.PollMax, DefaultPollMax)
		p.Tick = task.OrDefault(p.Tick, DefaultTick)
		p.sched = Schedule{Min: p.PollMin, Max: p.PollMax}
		p.pool = &task.Pool[store.VideoTask]{Name: "video", Work: p.poll, Purge: p.Purge,
			Claim: func(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]store.VideoTask, error) {
				return p.Store.ClaimTasks(ctx, p.Owner, now, lease, limit)
			},
			Lease: p.Lease, Workers: p.Workers, Tick: p.Tick, Now: p.Now, Log: p.Log, PurgeEvery: purgeEvery}
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
	p.pool.Wake()
}

// Run claims due tasks every Tick or on Wake and polls them in the pool,
// and purges expired tasks every 60 Ticks, until ctx ends. It returns nil
// once ctx has ended and every poll it started has returned: polls run
// under ctx, so shutdown cancels them and their leases simply expire.
func (p *Poller) Run(ctx context.Context) error {
	if err := p.setup(); err != nil {
		return err
	}
	return p.pool.Run(ctx)
}

// Step claims every task due now and polls each once, at most Workers at a
// time, and returns when all those polls have; it reports how many tasks
// it polled. A poll that hangs holds one worker: the others go on claiming
// and polling the rest.
func (p *Poller) Step(ctx context.Context) (int, error) {
	if err := p.setup(); err != nil {
		return 0, err
	}
	return p.pool.Step(ctx)
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
