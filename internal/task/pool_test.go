package task

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

// queue is a store of due ids that hands each out once per claim.
type queue struct {
	mu      sync.Mutex
	due     []string
	claims  int
	failAt  int // the claim (1-based) that fails; 0: none
	claimed []string
}

func (q *queue) claim(_ context.Context, _ time.Time, _ time.Duration, limit int) ([]string, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.claims++
	if q.claims == q.failAt {
		return nil, errors.New("database is locked")
	}
	n := min(limit, len(q.due))
	out := slices.Clone(q.due[:n])
	q.due = q.due[n:]
	q.claimed = append(q.claimed, out...)
	return out, nil
}

func TestPoolRequiresItsParts(t *testing.T) {
	for name, p := range map[string]*Pool[string]{
		"no claim": {Work: func(context.Context, string) {}, Lease: time.Minute},
		"no work":  {Claim: (&queue{}).claim, Lease: time.Minute},
		"no lease": {Claim: (&queue{}).claim, Work: func(context.Context, string) {}},
	} {
		if _, err := p.Step(context.Background()); err == nil {
			t.Errorf("%s: Step ran", name)
		}
		if err := p.Run(context.Background()); err == nil {
			t.Errorf("%s: Run ran", name)
		}
	}
}

// TestPoolStep works every due task once, never more than Workers at a
// time, and reports how many.
func TestPoolStep(t *testing.T) {
	const total, workers = 50, 4
	q := &queue{}
	for i := range total {
		q.due = append(q.due, string(rune('A'+i)))
	}
	var running, peak atomic.Int64
	var mu sync.Mutex
	worked := map[string]int{}
	p := &Pool[string]{Name: "test", Claim: q.claim, Lease: time.Minute, Workers: workers, Now: func() time.Time { return t0 },
		Work: func(_ context.Context, id string) {
			n := running.Add(1)
			defer running.Add(-1)
			for {
				old := peak.Load()
				if n <= old || peak.CompareAndSwap(old, n) {
					break
				}
			}
			mu.Lock()
			worked[id]++
			mu.Unlock()
		}}
	n, err := p.Step(context.Background())
	if err != nil || n != total {
		t.Fatalf("Step = (%d, %v), want (%d, nil)", n, err, total)
	}
	for id, c := range worked {
		if c != 1 {
			t.Errorf("%s worked %d times", id, c)
		}
	}
	if len(worked) != total {
		t.Errorf("worked %d tasks, want %d", len(worked), total)
	}
	if pk := peak.Load(); pk > workers {
		t.Errorf("peak %d pieces of work at once, want at most %d", pk, workers)
	}
}

// TestPoolStepClaimError returns the claim's error with what it worked.
func TestPoolStepClaimError(t *testing.T) {
	q := &queue{due: []string{"a", "b", "c"}, failAt: 2}
	p := &Pool[string]{Name: "test", Claim: q.claim, Lease: time.Minute, Workers: 2, Work: func(context.Context, string) {}}
	n, err := p.Step(context.Background())
	if n != 2 || err == nil || err.Error() != "test: claim tasks: database is locked" {
		t.Fatalf("Step = (%d, %v)", n, err)
	}
}

// TestPoolRunWakesAndPurges: Run purges at once, claims on Wake without
// waiting for its Tick, and returns when ctx ends.
func TestPoolRunWakesAndPurges(t *testing.T) {
	q := &queue{}
	worked := make(chan string, 1)
	purged := make(chan struct{}, 1)
	p := &Pool[string]{Name: "test", Claim: q.claim, Lease: time.Minute, Tick: time.Hour,
		Work: func(_ context.Context, id string) { worked <- id },
		Purge: func(context.Context) (int, error) {
			select {
			case purged <- struct{}{}:
			default:
			}
			return 0, nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	<-purged
	q.mu.Lock()
	q.due = append(q.due, "late")
	q.mu.Unlock()
	p.Wake()
	select {
	case id := <-worked:
		if id != "late" {
			t.Errorf("worked %q", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wake did not make Run claim")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}
