package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// newResponseTask returns a queued background response of a through key
// keyID, due at created, that is not stored yet.
func newResponseTask(t *testing.T, a store.Account, keyID string, created time.Time) store.ResponseTask {
	t.Helper()
	return store.ResponseTask{
		ID: "resp_" + randHex(t, 24), AccountID: a.ID, KeyID: keyID, RequestID: "req_" + randHex(t, 8),
		Model: "o3", Provider: "openai-us", UpstreamModel: "o3-2025-04-16", Status: store.ResponseQueued,
		InputPrice: 2_000_000, CachedInputPrice: 500_000, OutputPrice: 8_000_000, RatioPPM: 1_250_000,
		Held: 1_000_000, PromptEstimate: 1234,
		CreatedAt: created, Deadline: created.Add(time.Hour), NextPollAt: created, UpdatedAt: created,
	}
}

// normResponseTask normalises a task's times for comparison.
func normResponseTask(v store.ResponseTask) store.ResponseTask {
	for _, p := range []*time.Time{&v.CreatedAt, &v.FinishedAt, &v.Deadline, &v.NextPollAt, &v.LeaseUntil, &v.UpdatedAt} {
		*p = utc(*p)
	}
	return v
}

func mustCreateResponseTask(t *testing.T, s store.Store, v store.ResponseTask) {
	t.Helper()
	if err := s.CreateResponseTask(ctx(t), v); err != nil {
		t.Fatalf("CreateResponseTask(%s): %v", v.ID, err)
	}
}

func mustResponseTask(t *testing.T, s store.Store, id string) store.ResponseTask {
	t.Helper()
	v, err := s.ResponseTaskByID(ctx(t), id)
	if err != nil {
		t.Fatalf("ResponseTaskByID(%s): %v", id, err)
	}
	return normResponseTask(v)
}

func mustClaimResponses(t *testing.T, s store.Store, owner string, now time.Time, lease time.Duration, limit int) []string {
	t.Helper()
	got, err := s.ClaimResponseTasks(ctx(t), owner, now, lease, limit)
	if err != nil {
		t.Fatalf("ClaimResponseTasks(%s, limit %d): %v", owner, limit, err)
	}
	ids := make([]string, len(got))
	for i, v := range got {
		if v.LeaseOwner != owner || !v.LeaseUntil.Equal(now.Add(lease)) {
			t.Errorf("claimed %s leased by %q until %v, want %q until %v", v.ID, v.LeaseOwner, v.LeaseUntil, owner, now.Add(lease))
		}
		ids[i] = v.ID
	}
	return ids
}

// testResponseTasks covers the store.ResponseTasks methods and their part
// of Account.Held / Key.Held.
func testResponseTasks(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) { testResponseTaskRoundTrip(t, newStore) })
	t.Run("Claim", func(t *testing.T) { testClaimResponseTasks(t, newStore) })
	t.Run("ConcurrentClaims", func(t *testing.T) { testConcurrentResponseClaims(t, newStore) })
	t.Run("Update", func(t *testing.T) { testUpdateResponseTask(t, newStore) })
	t.Run("FinishOnce", func(t *testing.T) { testFinishResponseTaskOnce(t, newStore) })
	t.Run("FinishLease", func(t *testing.T) { testFinishResponseTaskLease(t, newStore) })
	t.Run("Held", func(t *testing.T) { testResponseTaskHeld(t, newStore) })
	t.Run("Purge", func(t *testing.T) { testPurgeResponseTasks(t, newStore) })
}

func testResponseTaskRoundTrip(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	v := newResponseTask(t, a, k.ID, at(0))
	mustCreateResponseTask(t, s, v)
	assertEqual(t, "read back", mustResponseTask(t, s, v.ID), normResponseTask(v))
	in := newResponseTask(t, a, k.ID, at(0))
	in.Status = store.ResponseInProgress
	mustCreateResponseTask(t, s, in)

	ghost := store.Account{ID: "acct_ghost"}
	for _, tc := range []struct {
		name string
		task store.ResponseTask
		want error // nil: any error
	}{
		{"taken id", v, store.ErrConflict},
		{"unknown account", newResponseTask(t, ghost, "", at(0)), store.ErrNotFound},
		{"final status", func() store.ResponseTask {
			x := newResponseTask(t, a, k.ID, at(0))
			x.Status = store.ResponseCompleted
			return x
		}(), nil},
		{"no status", func() store.ResponseTask { x := newResponseTask(t, a, k.ID, at(0)); x.Status = ""; return x }(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.CreateResponseTask(ctx(t), tc.task)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Errorf("CreateResponseTask: %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := s.ResponseTaskByID(ctx(t), "resp_missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ResponseTaskByID(missing): %v, want ErrNotFound", err)
	}
}

func testClaimResponseTasks(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	mk := func(next time.Duration) store.ResponseTask {
		v := newResponseTask(t, a, k.ID, at(0))
		v.NextPollAt = at(next)
		mustCreateResponseTask(t, s, v)
		return v
	}
	d2, d1, later := mk(2*time.Second), mk(time.Second), mk(time.Hour)
	done := mk(0)
	done.Status, done.FinishedAt = store.ResponseCompleted, at(time.Second)
	if err := s.FinishResponseTask(ctx(t), "", done, nil); err != nil {
		t.Fatalf("FinishResponseTask: %v", err)
	}
	if _, err := s.ClaimResponseTasks(ctx(t), "", at(0), time.Minute, 1); err == nil {
		t.Error("a claim without an owner succeeded")
	}
	// Due ones only, earliest first, limit respected; final ones never.
	if got := mustClaimResponses(t, s, "p1", at(3*time.Second), time.Minute, 1); len(got) != 1 || got[0] != d1.ID {
		t.Fatalf("first claim %v, want [%s]", got, d1.ID)
	}
	if got := mustClaimResponses(t, s, "p2", at(3*time.Second), time.Minute, 10); len(got) != 1 || got[0] != d2.ID {
		t.Fatalf("second claim %v, want [%s] (d1 is leased, later not due)", got, d2.ID)
	}
	// A lease that ended is taken over; the old owner can no longer write.
	if got := mustClaimResponses(t, s, "p3", at(2*time.Minute), time.Minute, 10); len(got) != 2 {
		t.Fatalf("claim after the leases ended: %v, want d1 and d2", got)
	}
	u := d1
	u.Status, u.NextPollAt, u.Polls, u.UpdatedAt = store.ResponseInProgress, at(time.Hour), 1, at(2*time.Minute)
	if err := s.UpdateResponseTask(ctx(t), "p1", u); !errors.Is(err, store.ErrConflict) {
		t.Errorf("UpdateResponseTask by the ended lease's owner: %v, want ErrConflict", err)
	}
	if err := s.UpdateResponseTask(ctx(t), "p3", u); err != nil {
		t.Errorf("UpdateResponseTask by the new owner: %v", err)
	}
	// d2's lease ended without a write: it is due again; d1 and later are
	// not before an hour.
	if got := mustClaimResponses(t, s, "p4", at(30*time.Minute), 2*time.Hour, 10); len(got) != 1 || got[0] != d2.ID {
		t.Errorf("claimed %v, want [%s]", got, d2.ID)
	}
	if got := mustClaimResponses(t, s, "p5", at(time.Hour), time.Minute, 10); len(got) != 2 || got[0] != d1.ID && got[1] != d1.ID || got[0] != later.ID && got[1] != later.ID {
		t.Errorf("claimed %v at the hour, want d1 and later", got)
	}
}

func testConcurrentResponseClaims(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	const tasks, claimers, limit = 120, 6, 7
	for i := range tasks {
		mustCreateResponseTask(t, s, newResponseTask(t, a, k.ID, at(time.Duration(i)*time.Microsecond)))
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
				got, err := s.ClaimResponseTasks(ctx(t), fmt.Sprintf("p%d", c), at(time.Hour), time.Hour, limit)
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

func testUpdateResponseTask(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	v := newResponseTask(t, a, k.ID, at(0))
	mustCreateResponseTask(t, s, v)
	mustClaimResponses(t, s, "p1", at(0), time.Minute, 1)
	u := v
	u.Status, u.NextPollAt, u.Polls, u.UpdatedAt = store.ResponseInProgress, at(10*time.Second), 1, at(time.Second)
	u.Held, u.Model = 1, "not stored by UpdateResponseTask"
	steps := []struct {
		name  string
		owner string
		task  store.ResponseTask
		want  error // nil and bad: any error
		bad   bool
	}{
		{"not the holder", "p2", u, store.ErrConflict, true},
		{"a final status", "p1", func() store.ResponseTask { x := u; x.Status = store.ResponseCompleted; return x }(), nil, true},
		{"the holder", "p1", u, nil, false},
		{"the lease has ended", "p1", u, store.ErrConflict, true},
	}
	for _, st := range steps {
		err := s.UpdateResponseTask(ctx(t), st.owner, st.task)
		if st.bad != (err != nil) || (st.want != nil && !errors.Is(err, st.want)) {
			t.Errorf("%s: UpdateResponseTask: %v, want %v (bad %v)", st.name, err, st.want, st.bad)
		}
	}
	want := normResponseTask(v)
	want.Status, want.NextPollAt, want.Polls, want.UpdatedAt = u.Status, u.NextPollAt, 1, u.UpdatedAt
	assertEqual(t, "updated task", mustResponseTask(t, s, v.ID), want)
	// Never back: in_progress to queued is refused, whoever holds the lease.
	mustClaimResponses(t, s, "p1", at(10*time.Second), time.Minute, 1)
	back := u
	back.Status = store.ResponseQueued
	if err := s.UpdateResponseTask(ctx(t), "p1", back); !errors.Is(err, store.ErrConflict) {
		t.Errorf("backward move: %v, want ErrConflict", err)
	}
}

// testFinishResponseTaskOnce: many finishes at once, by the lease holder
// and by "anyone" (clients' GETs), settle the task exactly once: one
// succeeds, the charge and its usage record land once, the hold ends.
func testFinishResponseTaskOnce(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	v := newResponseTask(t, a, k.ID, at(0))
	v.Held = 3000
	mustCreateResponseTask(t, s, v)
	other := newResponseTask(t, a, k.ID, at(0))
	other.Held, other.NextPollAt = 500, at(time.Hour)
	mustCreateResponseTask(t, s, other)
	checkHeld(t, s, a, k, 3500, 3500)
	mustClaimResponses(t, s, "worker", at(0), time.Minute, 10)

	const cost, finishers = 2500, 12
	fin := v
	fin.Status, fin.FinishedAt, fin.UpdatedAt, fin.Cost = store.ResponseCompleted, at(time.Minute), at(time.Minute), cost
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	start := make(chan struct{})
	for i := range finishers {
		owner := ""
		if i%3 == 0 {
			owner = "worker"
		}
		wg.Go(func() {
			<-start
			rec := &store.UsageRecord{RequestID: v.ID, Time: at(time.Minute), AccountID: a.ID, KeyID: k.ID,
				Endpoint: "responses", Model: v.Model, PromptTokens: 1000, CompletionTokens: 200 + int64(i), Cost: cost, Status: 200}
			err := s.FinishResponseTask(ctx(t), owner, fin, rec)
			switch {
			case err == nil:
				mu.Lock()
				wins++
				mu.Unlock()
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("finisher %d: %v, want nil or ErrConflict", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d finishes succeeded, want exactly 1", wins)
	}
	checkBalance(t, s, a.ID, 10*money.Unit-cost, cost)
	checkHeld(t, s, a, k, 500, 500)
	if gk, err := s.KeyByID(ctx(t), k.ID); err != nil || gk.Spent != cost {
		t.Errorf("key spent %v (%v), want %v", gk.Spent, err, cost)
	}
	recs := listUsage(t, s, store.UsageFilter{AccountID: a.ID})
	if len(recs) != 1 || recs[0].RequestID != v.ID || recs[0].Cost != cost {
		t.Errorf("usage records %+v, want one of %s costing %d", recs, v.ID, cost)
	}
	got := mustResponseTask(t, s, v.ID)
	want := normResponseTask(v)
	want.Status, want.FinishedAt, want.UpdatedAt, want.Cost = store.ResponseCompleted, fin.FinishedAt, fin.UpdatedAt, cost
	assertEqual(t, "finished task", got, want)
	// Nothing moves a final task again, nor claims it.
	again := fin
	again.Status, again.Cost = store.ResponseCancelled, 1
	if err := s.FinishResponseTask(ctx(t), "", again, nil); !errors.Is(err, store.ErrConflict) {
		t.Errorf("finishing a final task: %v, want ErrConflict", err)
	}
	upd := v
	upd.Status = store.ResponseInProgress
	if err := s.UpdateResponseTask(ctx(t), "", upd); !errors.Is(err, store.ErrConflict) {
		t.Errorf("updating a final task: %v, want ErrConflict", err)
	}
	if ids := mustClaimResponses(t, s, "late", at(2*time.Hour), time.Minute, 10); len(ids) != 1 || ids[0] != other.ID {
		t.Errorf("claimed %v, want only the open %s", ids, other.ID)
	}
	if err := s.FinishResponseTask(ctx(t), "", func() store.ResponseTask { x := fin; x.ID = "resp_missing"; return x }(), nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("finishing a missing task: %v, want ErrNotFound", err)
	}
	if err := s.FinishResponseTask(ctx(t), "", upd, nil); err == nil {
		t.Error("finishing with an open status succeeded")
	}
}

// testFinishResponseTaskLease: a worker finishes only what it leases; a
// client's finish (owner "") takes a leased task from under it.
func testFinishResponseTaskLease(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	v := newResponseTask(t, a, k.ID, at(0))
	mustCreateResponseTask(t, s, v)
	mustClaimResponses(t, s, "p1", at(0), time.Minute, 1)
	fin := v
	fin.Status, fin.FinishedAt, fin.Error = store.ResponseCancelled, at(time.Minute), "timed out"
	if err := s.FinishResponseTask(ctx(t), "p2", fin, nil); !errors.Is(err, store.ErrConflict) {
		t.Errorf("finish by another worker: %v, want ErrConflict", err)
	}
	if err := s.FinishResponseTask(ctx(t), "", fin, nil); err != nil {
		t.Fatalf("finish by a client: %v", err)
	}
	got := mustResponseTask(t, s, v.ID)
	if got.Status != store.ResponseCancelled || got.Error != "timed out" || got.LeaseOwner != "" || !got.LeaseUntil.IsZero() {
		t.Errorf("finished task %+v", got)
	}
	if err := s.FinishResponseTask(ctx(t), "p1", fin, nil); !errors.Is(err, store.ErrConflict) {
		t.Errorf("the worker's late finish: %v, want ErrConflict", err)
	}
	checkHeld(t, s, a, k, 0, 0)
}

// testResponseTaskHeld: open background responses add to the Held of
// their account and key, with open video tasks; final ones do not.
func testResponseTaskHeld(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k1 := taskFixture(t, s, "alice")
	k2 := newKey(t, a, "mg-alice2", at(0))
	mustCreateKey(t, s, k2)
	b, kb := taskFixture(t, s, "bob")
	for _, tc := range []struct {
		acct   store.Account
		key    store.Key
		held   money.Micros
		status store.ResponseStatus
	}{
		{a, k1, 100, store.ResponseQueued},
		{a, k1, 200, store.ResponseInProgress},
		{a, k2, 400, store.ResponseQueued},
		{a, k1, 800, store.ResponseCompleted},
		{a, k2, 1600, store.ResponseFailed},
		{a, k2, 3200, store.ResponseIncomplete},
		{a, k1, 6400, store.ResponseCancelled},
		{b, kb, 12800, store.ResponseInProgress},
	} {
		v := newResponseTask(t, tc.acct, tc.key.ID, at(0))
		v.Held = tc.held
		if !tc.status.Final() {
			v.Status = tc.status
		}
		mustCreateResponseTask(t, s, v)
		if tc.status.Final() {
			v.Status, v.FinishedAt = tc.status, at(time.Minute)
			if err := s.FinishResponseTask(ctx(t), "", v, nil); err != nil {
				t.Fatalf("FinishResponseTask: %v", err)
			}
		}
	}
	// An open video task of the same key adds to it.
	vt := newTask(t, a, k1.ID, at(0))
	vt.Held = 25_600
	mustCreateTask(t, s, vt)
	checkHeld(t, s, a, k1, 700+25_600, 300+25_600)
	checkHeld(t, s, a, k2, 700+25_600, 400)
	checkHeld(t, s, b, kb, 12800, 12800)
	byName, err := s.AccountByName(ctx(t), a.Name)
	if err != nil || byName.Held != 700+25_600 {
		t.Errorf("AccountByName Held %v (%v)", byName.Held, err)
	}
	byHash, err := s.KeyByHash(ctx(t), k2.Hash)
	if err != nil || byHash.Held != 400 {
		t.Errorf("KeyByHash Held %v (%v)", byHash.Held, err)
	}
}

func testPurgeResponseTasks(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	var old []string
	for i := range 5 {
		v := newResponseTask(t, a, k.ID, at(time.Duration(i)*time.Second))
		mustCreateResponseTask(t, s, v)
		v.Status, v.FinishedAt = store.ResponseCompleted, at(time.Minute)
		if err := s.FinishResponseTask(ctx(t), "", v, nil); err != nil {
			t.Fatalf("FinishResponseTask: %v", err)
		}
		old = append(old, v.ID)
	}
	open := newResponseTask(t, a, k.ID, at(0))
	mustCreateResponseTask(t, s, open)
	recent := newResponseTask(t, a, k.ID, at(2*time.Hour))
	mustCreateResponseTask(t, s, recent)
	recent.Status, recent.FinishedAt = store.ResponseFailed, at(3*time.Hour)
	if err := s.FinishResponseTask(ctx(t), "", recent, nil); err != nil {
		t.Fatalf("FinishResponseTask: %v", err)
	}
	if _, err := s.PurgeResponseTasks(ctx(t), at(time.Hour), 0); err == nil {
		t.Error("a purge with limit 0 ran")
	}
	n, err := s.PurgeResponseTasks(ctx(t), at(time.Hour), 3)
	if err != nil || n != 3 {
		t.Fatalf("first purge: %d, %v; want 3", n, err)
	}
	if n, err = s.PurgeResponseTasks(ctx(t), at(time.Hour), 3); err != nil || n != 2 {
		t.Fatalf("second purge: %d, %v; want 2", n, err)
	}
	for _, id := range old {
		if _, err := s.ResponseTaskByID(ctx(t), id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s after the purge: %v", id, err)
		}
	}
	mustResponseTask(t, s, open.ID)   // open: never purged
	mustResponseTask(t, s, recent.ID) // created after the cut
}
