package video

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/store"
)

// TestHungTasksDoNotDelayOthers: 500 tasks due at once, 20 of whose
// upstream calls hang. One Step moves the other 480 forward while the 20
// hang, schedules each task from its own poll time, and never runs more
// than Workers polls at once.
func TestHungTasksDoNotDelayOthers(t *testing.T) {
	const total, hung, workers = 500, 20, 32
	ctx := testCtx(t)
	s, c, media := newStore(t), newClock(), newMedia()
	var tasks []store.VideoTask
	isHung := map[string]bool{}
	for i := range total {
		task := newTask(fmt.Sprintf("video_%03d", i), t0)
		if i%25 == 0 { // spread through the claim order, the first among them
			isHung[task.UpstreamID] = true
		}
		tasks = append(tasks, task)
	}
	if len(isHung) != hung {
		t.Fatalf("%d hung tasks", len(isHung))
	}
	createTasks(t, s, tasks...)

	release := make(chan struct{})
	hanging := make(chan string, hung)
	var running, peak atomic.Int64
	m := &fakeMaker{Status: func(ctx context.Context, id string) (provider.VideoJob, error) {
		n := running.Add(1)
		defer running.Add(-1)
		raise(&peak, n)
		if isHung[id] {
			hanging <- id
			select {
			case <-release:
			case <-ctx.Done():
				return provider.VideoJob{}, ctx.Err()
			}
		}
		return job(id, provider.VideoRunning, 10)
	}}
	ns := &notifyStore{Store: s, done: make(chan string, total)}
	p := newPoller(ns, m, media, c, "a")
	p.Workers = workers
	p.PollTimeout = time.Hour // the fake clock never ends a poll here

	type result struct {
		n   int
		err error
	}
	stepped := make(chan result, 1)
	go func() {
		n, err := p.Step(ctx)
		stepped <- result{n, err}
	}()
	// The 480 are written while the 20 still hang.
	await(t, ctx, hanging, hung)
	done := await(t, ctx, ns.done, total-hung)
	for _, id := range done {
		if isHung["up_"+id] {
			t.Fatalf("hung task %s was written before its release", id)
		}
	}
	select {
	case r := <-stepped:
		t.Fatalf("Step returned (%d, %v) while polls hang", r.n, r.err)
	default:
	}
	base := p.Schedule().Interval(8, 1)
	for _, task := range tasks {
		got := getTask(t, s, task.ID)
		if isHung[task.UpstreamID] {
			if got.State != store.TaskPending || got.LeaseOwner != "a" {
				t.Errorf("hung %s: %s leased by %q, want pending leased by a", task.ID, got.State, got.LeaseOwner)
			}
			continue
		}
		if got.State != store.TaskProcessing || got.Polls != 1 {
			t.Errorf("%s: %s after %d polls, want processing after 1", task.ID, got.State, got.Polls)
		}
		if d := got.NextPollAt.Sub(t0); d < base-base/10 || d > base+base/10 {
			t.Errorf("%s: next poll t0+%v, want about t0+%v", task.ID, d, base)
		}
	}

	// The hung polls return later; each schedules from its own poll time.
	c.Advance(4 * time.Second)
	close(release)
	r := <-stepped
	if r.err != nil || r.n != total {
		t.Fatalf("Step = (%d, %v), want (%d, nil)", r.n, r.err, total)
	}
	for _, task := range tasks {
		if !isHung[task.UpstreamID] {
			continue
		}
		got := getTask(t, s, task.ID)
		from := t0.Add(4 * time.Second)
		if d := got.NextPollAt.Sub(from); got.State != store.TaskProcessing || d < base-base/10 || d > base+base/10 {
			t.Errorf("released %s: %s next poll from+%v, want processing about from+%v", task.ID, got.State, d, base)
		}
	}
	if pk := peak.Load(); pk > workers || pk <= hung {
		t.Errorf("peak concurrent polls %d, want within (%d, %d]", pk, hung, workers)
	}
}

// TestRestartTakesOver: a poller stops (its context ends) in the middle
// of polling processing tasks; a poller with another Owner on the same
// store takes them over once the lease has ended, and completes them.
func TestRestartTakesOver(t *testing.T) {
	const n = 5
	ctx := testCtx(t)
	s, c, media := newStore(t), newClock(), newMedia()
	var tasks []store.VideoTask
	for i := range n {
		tasks = append(tasks, newTask(fmt.Sprintf("video_r%d", i), t0))
	}
	createTasks(t, s, tasks...)
	running := &fakeMaker{Status: func(_ context.Context, id string) (provider.VideoJob, error) {
		return job(id, provider.VideoRunning, 20)
	}}
	if got := step(t, newPoller(s, running, media, c, "a")); got != n {
		t.Fatalf("first step polled %d", got)
	}
	c.Advance(time.Minute)

	// Poller a hangs in every status call until it is stopped.
	inFlight := make(chan string, n)
	var aborted atomic.Int64
	hang := &fakeMaker{Status: func(ctx context.Context, id string) (provider.VideoJob, error) {
		inFlight <- id
		<-ctx.Done()
		aborted.Add(1)
		return provider.VideoJob{}, ctx.Err()
	}}
	a := newPoller(s, hang, media, c, "a")
	a.Tick = time.Hour // only the start and Wake claim
	a.PollTimeout = time.Hour
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- a.Run(runCtx) }()
	await(t, ctx, inFlight, n)
	stop()
	if err := <-ran; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if aborted.Load() != n {
		t.Errorf("Run returned with %d of %d polls still running", n-aborted.Load(), n)
	}
	for _, task := range tasks {
		if got := getTask(t, s, task.ID); got.State != store.TaskProcessing || got.LeaseOwner != "a" || got.Polls != 1 {
			t.Fatalf("after the stop: %s %s leased by %q with %d polls", task.ID, got.State, got.LeaseOwner, got.Polls)
		}
	}

	b := newPoller(s, &fakeMaker{}, media, c, "b")
	if got := step(t, b); got != 0 {
		t.Fatalf("poller b took %d tasks while a's leases last", got)
	}
	c.Advance(a.Lease)
	if got := step(t, b); got != n {
		t.Fatalf("poller b took %d tasks after the leases ended, want %d", got, n)
	}
	for _, task := range tasks {
		if got := getTask(t, s, task.ID); got.State != store.TaskCompleted || got.Cost != task.Held {
			t.Errorf("%s: %s cost %v, want completed %v", task.ID, got.State, got.Cost, task.Held)
		}
	}
	if ch, a := charges(t, s), account(t, s); len(ch) != n || a.Held != 0 || a.Balance != testBalance-n*8*testPrice {
		t.Errorf("%d charges, held %v, balance %v", len(ch), a.Held, a.Balance)
	}
}

// TestRunWakes: Run claims a task submitted after it started when woken,
// long before its Tick.
func TestRunWakes(t *testing.T) {
	ctx := testCtx(t)
	s, c, media := newStore(t), newClock(), newMedia()
	ns := &notifyStore{Store: s, done: make(chan string, 4)}
	p := newPoller(ns, &fakeMaker{}, media, c, "a")
	p.Tick = time.Hour
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- p.Run(runCtx) }()
	task := newTask("video_wake", c.Now())
	createTasks(t, s, task)
	p.Wake()
	if id := await(t, ctx, ns.done, 1)[0]; id != task.ID {
		t.Fatalf("Run finished %s, want %s", id, task.ID)
	}
	stop()
	if err := <-ran; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if got := getTask(t, s, task.ID); got.State != store.TaskCompleted {
		t.Errorf("task %s, want completed", got.State)
	}
}

// TestTwoPollersNeverShareATask runs two pollers on one store, round after
// round: every due task is polled exactly once per round, never by both.
func TestTwoPollersNeverShareATask(t *testing.T) {
	const n, rounds = 200, 4
	ctx := testCtx(t)
	s, c, media := newStore(t), newClock(), newMedia()
	for i := range n {
		createTasks(t, s, newTask(fmt.Sprintf("video_%03d", i), t0))
	}
	var mu sync.Mutex
	inFlight := map[string]bool{}
	polled := map[string]int{}
	var overlaps atomic.Int64
	status := func(_ context.Context, id string) (provider.VideoJob, error) {
		mu.Lock()
		if inFlight[id] {
			overlaps.Add(1)
		}
		inFlight[id] = true
		polled[id]++
		mu.Unlock()
		for range 10 {
			runtime.Gosched() // let the other poller's polls interleave
		}
		mu.Lock()
		delete(inFlight, id)
		mu.Unlock()
		return job(id, provider.VideoRunning, 50)
	}
	pa := newPoller(s, &fakeMaker{Status: status}, media, c, "a")
	pb := newPoller(s, &fakeMaker{Status: status}, media, c, "b")
	for r := 1; r <= rounds; r++ {
		var wg sync.WaitGroup
		counts := make([]int, 2)
		for i, p := range []*Poller{pa, pb} {
			wg.Go(func() {
				k, err := p.Step(ctx)
				if err != nil {
					t.Errorf("round %d: Step: %v", r, err)
				}
				counts[i] = k
			})
		}
		wg.Wait()
		if counts[0]+counts[1] != n {
			t.Errorf("round %d: pollers polled %d + %d tasks, want %d in all", r, counts[0], counts[1], n)
		}
		mu.Lock()
		for id, k := range polled {
			if k != r {
				t.Errorf("round %d: %s polled %d times", r, id, k)
			}
		}
		mu.Unlock()
		c.Advance(2 * DefaultPollMax) // every task is due again
	}
	if k := overlaps.Load(); k != 0 {
		t.Errorf("%d polls of a task ran while another poll of it did", k)
	}
}

// raise sets a to v when v is larger.
func raise(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}
