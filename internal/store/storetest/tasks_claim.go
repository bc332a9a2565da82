package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

func testClaimTasks(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	task := func(name string, due time.Duration) store.VideoTask {
		v := newTask(t, a, k.ID, at(-time.Hour))
		v.ID, v.NextPollAt = "video_"+name, at(due)
		mustCreateTask(t, s, v)
		return v
	}
	d1, d2, d3 := task("d1", -2*time.Second), task("d2", -time.Second), task("d3", 0)
	fut := task("fut", 10*time.Second)
	fin := task("fin", -3*time.Second)
	finish(t, s, fin, store.TaskFailed)
	stored := map[string]store.VideoTask{}
	for _, v := range []store.VideoTask{d1, d2, d3, fut} {
		stored[v.ID] = normTask(v)
	}

	steps := []struct {
		owner string
		now   time.Duration
		limit int
		want  []string
	}{
		{"p1", 0, 2, []string{d1.ID, d2.ID}},                        // due, earliest first, limit
		{"p2", 0, 10, []string{d3.ID}},                              // not the leased, the future or the final
		{"p2", 0, 10, nil},                                          // nothing left
		{"p3", 10 * time.Second, 10, []string{fut.ID}},              // due now
		{"p3", 29 * time.Second, 10, nil},                           // leases last 30s
		{"p3", 31 * time.Second, 10, []string{d1.ID, d2.ID, d3.ID}}, // ended leases go to anyone
	}
	const lease = 30 * time.Second
	for i, st := range steps {
		now := at(st.now)
		got := mustClaim(t, s, st.owner, now, lease, st.limit)
		if ids := taskIDs(got); !slices.Equal(ids, st.want) {
			t.Fatalf("step %d: %s claimed %v, want %v", i, st.owner, ids, st.want)
		}
		for _, v := range got {
			want := stored[v.ID]
			want.LeaseOwner, want.LeaseUntil = st.owner, now.Add(lease)
			assertEqual(t, fmt.Sprintf("step %d: claimed %s", i, v.ID), normTask(v), want)
			assertEqual(t, fmt.Sprintf("step %d: stored %s", i, v.ID), mustTask(t, s, v.ID), want)
		}
	}
	if err := s.UpdateTask(ctx(t), "p1", stored[d1.ID]); !errors.Is(err, store.ErrConflict) {
		t.Errorf("UpdateTask by the owner of an ended, re-claimed lease: %v, want ErrConflict", err)
	}
	if err := s.UpdateTask(ctx(t), "p3", stored[d1.ID]); err != nil {
		t.Errorf("UpdateTask by the new owner: %v", err)
	}
}

func testConcurrentClaims(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	const tasks, claimers, limit = 200, 8, 7
	for i := range tasks {
		v := newTask(t, a, k.ID, at(time.Duration(i)*time.Microsecond))
		mustCreateTask(t, s, v)
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		counts = map[string]int{}
	)
	start := make(chan struct{})
	for c := range claimers {
		wg.Go(func() {
			<-start
			for {
				got, err := s.ClaimTasks(ctx(t), fmt.Sprintf("p%d", c), at(time.Hour), time.Hour, limit)
				if err != nil {
					t.Errorf("claimer %d: %v", c, err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, v := range got {
					counts[v.ID]++
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if len(counts) != tasks {
		t.Errorf("%d distinct tasks claimed, want %d", len(counts), tasks)
	}
	for id, n := range counts {
		if n != 1 {
			t.Errorf("task %s claimed %d times while leased", id, n)
		}
	}
}

// testTaskStateMoves tries every move from × to: UpdateTask for open
// targets, FinishTask for final ones, by the lease's owner. A move is
// allowed exactly when the task is open and the rank does not decrease.
func testTaskStateMoves(t *testing.T, newStore func(t *testing.T) store.Store) {
	states := []store.TaskState{store.TaskPending, store.TaskProcessing, store.TaskCompleted, store.TaskFailed}
	for _, from := range states {
		for _, to := range states {
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				s := newStore(t)
				a, k := taskFixture(t, s, "alice")
				v := newTask(t, a, k.ID, at(0))
				mustCreateTask(t, s, v)
				switch {
				case from == store.TaskProcessing:
					mustClaim(t, s, "setup", at(0), time.Minute, 1)
					p := v
					p.State, p.StartedAt = store.TaskProcessing, at(time.Second)
					if err := s.UpdateTask(ctx(t), "setup", p); err != nil {
						t.Fatalf("setup UpdateTask: %v", err)
					}
				case from.Final():
					finish(t, s, v, from)
				}
				mustClaim(t, s, "p", at(time.Minute), time.Minute, 1) // leases it if open

				m := v
				m.State, m.FinishedAt, m.UpdatedAt = to, at(2*time.Minute), at(2*time.Minute)
				var err error
				if to.Final() {
					err = s.FinishTask(ctx(t), "p", m, nil)
				} else {
					err = s.UpdateTask(ctx(t), "p", m)
				}
				got := mustTask(t, s, v.ID)
				if from.Final() || to.Rank() < from.Rank() {
					if !errors.Is(err, store.ErrConflict) {
						t.Fatalf("move: %v, want ErrConflict", err)
					}
					if got.State != from {
						t.Errorf("state %s after a refused move, want %s", got.State, from)
					}
					return
				}
				if err != nil {
					t.Fatalf("move: %v", err)
				}
				if got.State != to || got.LeaseOwner != "" || !got.LeaseUntil.IsZero() {
					t.Errorf("after the move: state %s lease %q until %v; want %s and no lease",
						got.State, got.LeaseOwner, got.LeaseUntil, to)
				}
			})
		}
	}
}

func testUpdateTask(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	v := newTask(t, a, k.ID, at(0))
	mustCreateTask(t, s, v)
	mustClaim(t, s, "p1", at(0), time.Minute, 1)

	polled := v
	polled.State, polled.Progress, polled.UpstreamRef = store.TaskProcessing, 40, "files/abc"
	polled.StartedAt, polled.NextPollAt, polled.Polls, polled.UpdatedAt = at(3*time.Second), at(13*time.Second), 1, at(4*time.Second)
	// Fields UpdateTask does not store: a poller's copy may be stale.
	stale := polled
	stale.Held, stale.Prompt, stale.Error, stale.Cost = 1, "changed", "changed", 5

	tests := []struct {
		name  string
		owner string
		task  store.VideoTask
		want  error // nil and bad: any error
		bad   bool
	}{
		{"another owner", "p2", stale, store.ErrConflict, true},
		{"final state", "p1", func() store.VideoTask { f := stale; f.State = store.TaskCompleted; return f }(), nil, true},
		{"invalid state", "p1", func() store.VideoTask { f := stale; f.State = "done"; return f }(), nil, true},
		{"unknown id", "p1", func() store.VideoTask { f := stale; f.ID = "video_missing"; return f }(), store.ErrNotFound, true},
		{"the holder", "p1", stale, nil, false},
		{"the holder again, lease ended", "p1", stale, store.ErrConflict, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := mustTask(t, s, v.ID)
			err := s.UpdateTask(ctx(t), tc.owner, tc.task)
			after := mustTask(t, s, v.ID)
			if tc.bad {
				if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
					t.Fatalf("UpdateTask: %v, want %v", err, tc.want)
				}
				assertEqual(t, "task after a refused update", after, before)
				return
			}
			if err != nil {
				t.Fatalf("UpdateTask: %v", err)
			}
			want := normTask(polled) // the poll's fields, the rest as stored, no lease
			want.LeaseOwner, want.LeaseUntil = "", time.Time{}
			assertEqual(t, "task after update", after, want)
		})
	}
}

func testFinishTask(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	mk := func(held money.Micros) store.VideoTask {
		v := newTask(t, a, k.ID, at(0))
		v.Held = held
		mustCreateTask(t, s, v)
		return v
	}
	done, cancelled, stolen := mk(3000), mk(2000), mk(500)
	checkHeld(t, s, a, k, 5500, 5500)
	if got := mustClaim(t, s, "p1", at(0), time.Minute, 10); len(got) != 3 {
		t.Fatalf("claimed %d tasks, want 3", len(got))
	}
	rec := func(v store.VideoTask, id string, cost money.Micros) *store.UsageRecord {
		return &store.UsageRecord{RequestID: id, Time: at(time.Minute), AccountID: a.ID, KeyID: k.ID,
			Endpoint: "videos", Model: v.Model, Provider: v.Provider, UpstreamModel: v.UpstreamModel,
			Cost: cost, Status: 200}
	}
	const cost = 2500
	fin := done
	fin.State, fin.FinishedAt, fin.Progress, fin.Cost = store.TaskCompleted, at(time.Minute), 100, cost
	fin.ContentKey, fin.ContentType, fin.ContentSize = "videos/"+done.ID+".mp4", "video/mp4", 123_456
	fin.UpdatedAt = at(time.Minute)
	fin.Prompt = "not stored by FinishTask"

	steps := []struct {
		name    string
		owner   string
		task    store.VideoTask
		rec     *store.UsageRecord
		want    error // nil and bad: any error
		bad     bool
		charged bool // afterwards: done is finished and charged once
	}{
		{"another owner", "p2", fin, rec(done, "req_other", 999), store.ErrConflict, true, false},
		{"not final", "p1", func() store.VideoTask { f := fin; f.State = store.TaskProcessing; return f }(), rec(done, "req_bad", 999), nil, true, false},
		{"unknown id", "", func() store.VideoTask { f := fin; f.ID = "video_missing"; return f }(), rec(done, "req_missing", 999), store.ErrNotFound, true, false},
		{"the holder", "p1", fin, rec(done, done.RequestID, cost), nil, false, true},
		{"again by the holder", "p1", fin, rec(done, "req_again", 999), store.ErrConflict, true, true},
		{"again by anyone", "", fin, rec(done, "req_again2", 999), store.ErrConflict, true, true},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			err := s.FinishTask(ctx(t), st.owner, st.task, st.rec)
			if st.bad {
				if err == nil || (st.want != nil && !errors.Is(err, st.want)) {
					t.Fatalf("FinishTask: %v, want %v", err, st.want)
				}
			} else if err != nil {
				t.Fatalf("FinishTask: %v", err)
			}
			// Before the charge nothing moved; after it, exactly one charge.
			charged := st.charged
			wantBalance, wantSpent, wantHeld, wantRecs := 10*money.Unit, money.Micros(0), money.Micros(5500), 0
			if charged {
				wantBalance, wantSpent, wantHeld, wantRecs = 10*money.Unit-cost, cost, 2500, 1
			}
			checkBalance(t, s, a.ID, wantBalance, wantSpent)
			checkHeld(t, s, a, k, wantHeld, wantHeld)
			if gk, err := s.KeyByID(ctx(t), k.ID); err != nil || gk.Spent != wantSpent {
				t.Errorf("key spent %v (%v), want %v", gk.Spent, err, wantSpent)
			}
			recs := listUsage(t, s, store.UsageFilter{AccountID: a.ID})
			if len(recs) != wantRecs || (wantRecs == 1 && (recs[0].RequestID != done.RequestID || recs[0].Cost != cost)) {
				t.Errorf("usage records %+v, want %d of request %s", recs, wantRecs, done.RequestID)
			}
			if !charged {
				return
			}
			entries, err := s.ListLedger(ctx(t), a.ID)
			if err != nil || len(entries) != 2 {
				t.Fatalf("ListLedger: %d entries, %v; want the top-up and one charge", len(entries), err)
			}
			if e := entries[1]; e.Kind != store.KindCharge || e.Amount != -cost || e.Ref != done.RequestID {
				t.Errorf("charge entry %+v", e)
			}
			want := normTask(done)
			want.State, want.FinishedAt, want.Progress, want.Cost = fin.State, fin.FinishedAt, 100, cost
			want.ContentKey, want.ContentType, want.ContentSize, want.UpdatedAt = fin.ContentKey, fin.ContentType, fin.ContentSize, fin.UpdatedAt
			assertEqual(t, "finished task", mustTask(t, s, done.ID), want)
		})
	}

	t.Run("anyone cancels a leased task", func(t *testing.T) {
		c := cancelled
		c.State, c.FinishedAt, c.Error = store.TaskFailed, at(2*time.Minute), "cancelled by the client"
		if err := s.FinishTask(ctx(t), "", c, nil); err != nil {
			t.Fatalf("FinishTask: %v", err)
		}
		got := mustTask(t, s, c.ID)
		if got.State != store.TaskFailed || got.Error != c.Error || got.LeaseOwner != "" || !got.LeaseUntil.IsZero() ||
			!got.FinishedAt.Equal(c.FinishedAt) {
			t.Errorf("cancelled task %+v", got)
		}
		checkHeld(t, s, a, k, stolen.Held, stolen.Held)
		checkBalance(t, s, a.ID, 10*money.Unit-cost, cost)
	})
}
