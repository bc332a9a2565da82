package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// taskFixture stores an account with a balance of 10 units and one key.
func taskFixture(t *testing.T, s store.Store, name string) (store.Account, store.Key) {
	t.Helper()
	a := newAccount(t, name, at(0))
	mustCreateAccount(t, s, a)
	k := newKey(t, a, "mg-"+name, at(0))
	mustCreateKey(t, s, k)
	if _, err := s.Post(ctx(t), store.LedgerEntry{AccountID: a.ID, Kind: store.KindTopUp,
		Amount: 10 * money.Unit, Time: at(0)}); err != nil {
		t.Fatalf("Post top-up: %v", err)
	}
	return a, k
}

// newTask returns a pending task of a through key keyID, due at created,
// that is not stored yet.
func newTask(t *testing.T, a store.Account, keyID string, created time.Time) store.VideoTask {
	t.Helper()
	return store.VideoTask{
		ID: "video_" + randHex(t, 16), AccountID: a.ID, KeyID: keyID, RequestID: "req_" + randHex(t, 8),
		Model: "sora-2", Provider: "openai-us", UpstreamModel: "sora-2-2025-10-06",
		UpstreamID: "video_up_" + randHex(t, 8), Prompt: "a cat on a skateboard", Size: "1280x720",
		Seconds: 5, UpstreamSeconds: 8, State: store.TaskPending,
		Price: 100_000, RatioPPM: 1_250_000, Held: 1_000_000,
		CreatedAt: created, ExpiresAt: created.Add(24 * time.Hour), Deadline: created.Add(time.Hour),
		NextPollAt: created, UpdatedAt: created,
	}
}

// normTask normalises a task's times for comparison.
func normTask(v store.VideoTask) store.VideoTask {
	for _, p := range []*time.Time{&v.CreatedAt, &v.StartedAt, &v.FinishedAt, &v.ExpiresAt,
		&v.Deadline, &v.NextPollAt, &v.LeaseUntil, &v.UpdatedAt} {
		*p = utc(*p)
	}
	return v
}

func mustCreateTask(t *testing.T, s store.Store, v store.VideoTask) {
	t.Helper()
	if err := s.CreateTask(ctx(t), v); err != nil {
		t.Fatalf("CreateTask(%s): %v", v.ID, err)
	}
}

func mustTask(t *testing.T, s store.Store, id string) store.VideoTask {
	t.Helper()
	v, err := s.TaskByID(ctx(t), id)
	if err != nil {
		t.Fatalf("TaskByID(%s): %v", id, err)
	}
	return normTask(v)
}

func mustClaim(t *testing.T, s store.Store, owner string, now time.Time, lease time.Duration, limit int) []store.VideoTask {
	t.Helper()
	got, err := s.ClaimTasks(ctx(t), owner, now, lease, limit)
	if err != nil {
		t.Fatalf("ClaimTasks(%s, limit %d): %v", owner, limit, err)
	}
	return got
}

// finish makes a task final with no usage record, whoever leases it.
func finish(t *testing.T, s store.Store, v store.VideoTask, state store.TaskState) {
	t.Helper()
	v.State, v.FinishedAt = state, v.CreatedAt.Add(time.Minute)
	if err := s.FinishTask(ctx(t), "", v, nil); err != nil {
		t.Fatalf("FinishTask(%s, %s): %v", v.ID, state, err)
	}
}

func taskIDs(ts []store.VideoTask) []string {
	ids := make([]string, len(ts))
	for i, v := range ts {
		ids[i] = v.ID
	}
	return ids
}

// checkHeld fails unless the account's and the key's Held are as given.
func checkHeld(t *testing.T, s store.Store, a store.Account, k store.Key, acct, key money.Micros) {
	t.Helper()
	ga, err := s.AccountByID(ctx(t), a.ID)
	if err != nil {
		t.Fatalf("AccountByID: %v", err)
	}
	gk, err := s.KeyByID(ctx(t), k.ID)
	if err != nil {
		t.Fatalf("KeyByID: %v", err)
	}
	if ga.Held != acct || gk.Held != key {
		t.Errorf("Held: account %v key %v, want account %v key %v", ga.Held, gk.Held, acct, key)
	}
}

// testTasks covers the store.Tasks methods and Account.Held / Key.Held.
func testTasks(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) { testTaskRoundTrip(t, newStore) })
	t.Run("List", func(t *testing.T) { testListTasks(t, newStore) })
	t.Run("Claim", func(t *testing.T) { testClaimTasks(t, newStore) })
	t.Run("ConcurrentClaims", func(t *testing.T) { testConcurrentClaims(t, newStore) })
	t.Run("StateMoves", func(t *testing.T) { testTaskStateMoves(t, newStore) })
	t.Run("Update", func(t *testing.T) { testUpdateTask(t, newStore) })
	t.Run("Finish", func(t *testing.T) { testFinishTask(t, newStore) })
	t.Run("Held", func(t *testing.T) { testTaskHeld(t, newStore) })
	t.Run("Expired", func(t *testing.T) { testExpiredTasks(t, newStore) })
	t.Run("Delete", func(t *testing.T) { testDeleteTask(t, newStore) })
}

func testTaskRoundTrip(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	us := func(n int) time.Time { return at(time.Duration(n) * time.Microsecond) }
	full := store.VideoTask{
		ID: "video_" + randHex(t, 16), AccountID: a.ID, KeyID: k.ID, RequestID: "req_full",
		Model: "veo-3", Provider: "gemini", UpstreamModel: "veo-3.0-generate-001",
		UpstreamID: "models/veo-3/operations/abc", UpstreamRef: "files/xyz",
		Prompt: "a lighthouse in a storm, ünïcödé", Size: "1920x1080", Seconds: 5, UpstreamSeconds: 8,
		State: store.TaskPending, Progress: 7, Error: "not yet", Price: 400_000, RatioPPM: 900_000,
		Held: 2_880_000, Cost: 1, ContentKey: "videos/full.mp4", ContentType: "video/mp4", ContentSize: 1 << 33,
		CreatedAt: us(1), StartedAt: us(1_000_003), FinishedAt: us(2_000_005), ExpiresAt: us(86_400_000_007),
		Deadline: us(3_600_000_009), NextPollAt: us(5_000_011), Polls: 3, LeaseOwner: "poller-1",
		LeaseUntil: us(35_000_013), UpdatedAt: us(4_000_017),
	}
	minimal := newTask(t, a, "", at(time.Second)) // zero optional times and strings
	minimal.State = ""                            // taken as pending
	tests := []struct {
		name string
		task store.VideoTask
		want store.TaskState
	}{
		{"every field", full, store.TaskPending},
		{"zero optional fields", minimal, store.TaskPending},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mustCreateTask(t, s, tc.task)
			want := normTask(tc.task)
			want.State = tc.want
			assertEqual(t, "TaskByID", mustTask(t, s, tc.task.ID), want)
		})
	}

	errTests := []struct {
		name string
		err  func() error
		want error // nil: any error
	}{
		{"duplicate id", func() error {
			dup := newTask(t, a, k.ID, at(time.Hour))
			dup.ID = full.ID
			return s.CreateTask(ctx(t), dup)
		}, store.ErrConflict},
		{"unknown id", func() error { _, err := s.TaskByID(ctx(t), "video_missing"); return err }, store.ErrNotFound},
		{"not pending", func() error {
			v := newTask(t, a, k.ID, at(0))
			v.State = store.TaskProcessing
			return s.CreateTask(ctx(t), v)
		}, nil},
		{"unknown account", func() error {
			return s.CreateTask(ctx(t), newTask(t, store.Account{ID: "acct_missing"}, "", at(0)))
		}, nil},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	// The duplicate left the first task as it was.
	assertEqual(t, "after duplicate", mustTask(t, s, full.ID), normTask(full))
}

func testListTasks(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	b, kb := taskFixture(t, s, "bob")
	// a0..a5 by creation time; a1 and a2 were created at the same instant
	// and are ordered by ID.
	created := []time.Duration{0, time.Second, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}
	ids := make([]string, len(created))
	for i, d := range created {
		v := newTask(t, a, k.ID, at(d))
		v.ID = fmt.Sprintf("video_%032x", i+1)
		ids[i] = v.ID
		mustCreateTask(t, s, v)
	}
	other := newTask(t, b, kb.ID, at(time.Second))
	mustCreateTask(t, s, other)
	rev := slices.Clone(ids)
	slices.Reverse(rev)

	tests := []struct {
		name string
		page store.TaskPage
		want []string
		err  error // nil and wantErr: any error
		bad  bool
	}{
		{name: "newest first", page: store.TaskPage{Limit: 100}, want: rev},
		{name: "oldest first", page: store.TaskPage{Limit: 100, Asc: true}, want: ids},
		{name: "limit", page: store.TaskPage{Limit: 2}, want: rev[:2]},
		{name: "after", page: store.TaskPage{After: ids[3], Limit: 100}, want: []string{ids[2], ids[1], ids[0]}},
		{name: "after a tie", page: store.TaskPage{After: ids[2], Limit: 100}, want: []string{ids[1], ids[0]}},
		{name: "after ascending", page: store.TaskPage{After: ids[1], Limit: 100, Asc: true}, want: ids[2:]},
		{name: "after with limit", page: store.TaskPage{After: ids[4], Limit: 2}, want: []string{ids[3], ids[2]}},
		{name: "after the last", page: store.TaskPage{After: ids[0], Limit: 100}, want: []string{}},
		{name: "since", page: store.TaskPage{Since: at(time.Second), Limit: 100}, want: rev[:5]},
		{name: "since ascending after", page: store.TaskPage{Since: at(time.Second), After: ids[2], Asc: true, Limit: 100}, want: ids[3:]},
		{name: "since after all", page: store.TaskPage{Since: at(time.Hour), Limit: 100}, want: []string{}},
		{name: "after another account's task", page: store.TaskPage{After: other.ID, Limit: 100}, err: store.ErrNotFound, bad: true},
		{name: "after an unknown task", page: store.TaskPage{After: "video_missing", Limit: 100}, err: store.ErrNotFound, bad: true},
		{name: "limit 0", page: store.TaskPage{Limit: 0}, bad: true},
		{name: "limit -1", page: store.TaskPage{Limit: -1}, bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.page.AccountID = a.ID
			got, err := s.ListTasks(ctx(t), tc.page)
			if tc.bad {
				if err == nil || (tc.err != nil && !errors.Is(err, tc.err)) {
					t.Fatalf("ListTasks(%+v): %v, want %v", tc.page, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ListTasks(%+v): %v", tc.page, err)
			}
			assertEqual(t, "ids", taskIDs(got), tc.want)
		})
	}

	t.Run("pages cover every task once", func(t *testing.T) {
		for _, asc := range []bool{false, true} {
			var seen []string
			p := store.TaskPage{AccountID: a.ID, Limit: 2, Asc: asc}
			for range len(ids) {
				got, err := s.ListTasks(ctx(t), p)
				if err != nil {
					t.Fatalf("ListTasks(%+v): %v", p, err)
				}
				if len(got) == 0 {
					break
				}
				seen = append(seen, taskIDs(got)...)
				p.After = got[len(got)-1].ID
			}
			want := rev
			if asc {
				want = ids
			}
			assertEqual(t, fmt.Sprintf("pages (asc %v)", asc), seen, want)
		}
	})

	t.Run("full rows of the account only", func(t *testing.T) {
		got, err := s.ListTasks(ctx(t), store.TaskPage{AccountID: b.ID, Limit: 100})
		if err != nil || len(got) != 1 {
			t.Fatalf("ListTasks(bob): %d tasks, %v", len(got), err)
		}
		assertEqual(t, "bob's task", normTask(got[0]), normTask(other))
	})
}

func testTaskHeld(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k1 := taskFixture(t, s, "alice")
	k2 := newKey(t, a, "mg-alice2", at(0))
	mustCreateKey(t, s, k2)
	b, kb := taskFixture(t, s, "bob")
	k3 := newKey(t, a, "mg-alice3", at(0)) // no tasks
	mustCreateKey(t, s, k3)
	tasks := []struct {
		acct  store.Account
		key   store.Key
		held  money.Micros
		state store.TaskState
	}{
		{a, k1, 100, store.TaskPending},
		{a, k1, 200, store.TaskProcessing},
		{a, k2, 400, store.TaskPending},
		{a, k1, 800, store.TaskCompleted},
		{a, k2, 1600, store.TaskFailed},
		{b, kb, 3200, store.TaskProcessing},
	}
	for _, tc := range tasks {
		// Only the task being moved to processing is ever due, so the
		// setup claim takes it and nothing else.
		v := newTask(t, tc.acct, tc.key.ID, at(0))
		v.Held, v.NextPollAt = tc.held, at(time.Hour)
		if tc.state == store.TaskProcessing {
			v.NextPollAt = at(0)
		}
		mustCreateTask(t, s, v)
		switch {
		case tc.state == store.TaskProcessing:
			if got := mustClaim(t, s, "setup", at(0), time.Minute, 10); len(got) != 1 || got[0].ID != v.ID {
				t.Fatalf("setup claimed %v, want %s", taskIDs(got), v.ID)
			}
			v.State, v.NextPollAt = store.TaskProcessing, at(time.Hour)
			if err := s.UpdateTask(ctx(t), "setup", v); err != nil {
				t.Fatalf("UpdateTask: %v", err)
			}
		case tc.state.Final():
			finish(t, s, v, tc.state)
		}
	}
	wantAcct := map[string]money.Micros{a.ID: 700, b.ID: 3200}
	wantKey := map[string]money.Micros{k1.ID: 300, k2.ID: 400, k3.ID: 0, kb.ID: 3200}

	accts, err := s.ListAccounts(ctx(t))
	if err != nil || len(accts) != 2 {
		t.Fatalf("ListAccounts: %d, %v", len(accts), err)
	}
	for _, ga := range accts {
		byName, err := s.AccountByName(ctx(t), ga.Name)
		if err != nil {
			t.Fatalf("AccountByName: %v", err)
		}
		byID, err := s.AccountByID(ctx(t), ga.ID)
		if err != nil {
			t.Fatalf("AccountByID: %v", err)
		}
		if want := wantAcct[ga.ID]; ga.Held != want || byName.Held != want || byID.Held != want {
			t.Errorf("account %s Held: list %v, by name %v, by id %v; want %v", ga.Name, ga.Held, byName.Held, byID.Held, want)
		}
	}
	keys, err := s.ListKeys(ctx(t))
	if err != nil || len(keys) != 4 {
		t.Fatalf("ListKeys: %d, %v", len(keys), err)
	}
	for _, gk := range keys {
		byHash, err := s.KeyByHash(ctx(t), gk.Hash)
		if err != nil {
			t.Fatalf("KeyByHash: %v", err)
		}
		byID, err := s.KeyByID(ctx(t), gk.ID)
		if err != nil {
			t.Fatalf("KeyByID: %v", err)
		}
		if want := wantKey[gk.ID]; gk.Held != want || byHash.Held != want || byID.Held != want {
			t.Errorf("key %s Held: list %v, by hash %v, by id %v; want %v", gk.Prefix, gk.Held, byHash.Held, byID.Held, want)
		}
	}
}

func testExpiredTasks(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	b, kb := taskFixture(t, s, "bob")
	mk := func(acct store.Account, key store.Key, created time.Duration, final store.TaskState) string {
		v := newTask(t, acct, key.ID, at(created))
		mustCreateTask(t, s, v)
		if final != "" {
			finish(t, s, v, final)
		}
		return v.ID
	}
	e5 := mk(a, k, -time.Hour, store.TaskCompleted) // created last, finished first
	e1 := mk(a, k, -5*time.Hour, store.TaskCompleted)
	mk(a, k, -4*time.Hour, "") // open
	e3 := mk(b, kb, -3*time.Hour, store.TaskFailed)
	e4 := mk(a, k, -2*time.Hour, store.TaskFailed)
	tests := []struct {
		name   string
		before time.Time
		limit  int
		want   []string
	}{
		{"all", at(0), 10, []string{e1, e3, e4, e5}},
		{"strictly before", at(-2 * time.Hour), 10, []string{e1, e3}},
		{"limit", at(0), 2, []string{e1, e3}},
		{"none", at(-5 * time.Hour), 10, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ExpiredTasks(ctx(t), tc.before, tc.limit)
			if err != nil {
				t.Fatalf("ExpiredTasks: %v", err)
			}
			assertEqual(t, "ids", taskIDs(got), tc.want)
		})
	}
}

func testDeleteTask(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	open, final := newTask(t, a, k.ID, at(0)), newTask(t, a, k.ID, at(0))
	mustCreateTask(t, s, open)
	mustCreateTask(t, s, final)
	finish(t, s, final, store.TaskCompleted)
	tests := []struct {
		name   string
		id     string
		want   error
		exists bool // afterwards
	}{
		{"open", open.ID, store.ErrConflict, true},
		{"final", final.ID, nil, false},
		{"final again", final.ID, store.ErrNotFound, false},
		{"unknown", "video_missing", store.ErrNotFound, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.DeleteTask(ctx(t), tc.id)
			if (tc.want == nil) != (err == nil) || !errors.Is(err, tc.want) {
				t.Fatalf("DeleteTask: %v, want %v", err, tc.want)
			}
			_, err = s.TaskByID(ctx(t), tc.id)
			if tc.exists && err != nil || !tc.exists && !errors.Is(err, store.ErrNotFound) {
				t.Errorf("TaskByID after DeleteTask: %v, want exists=%v", err, tc.exists)
			}
		})
	}
}
