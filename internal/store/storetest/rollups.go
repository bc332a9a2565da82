package storetest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// statsRange is a UsageStats range; zero ends are open. The suite's ranges
// fall on whole UTC hours, the granularity a backend may keep statistics at.
type statsRange struct{ since, until time.Time }

func (r statsRange) String() string {
	f := func(t time.Time) string {
		if t.IsZero() {
			return "open"
		}
		return t.UTC().Format("2006-01-02T15")
	}
	return f(r.since) + ".." + f(r.until)
}

// wantStats is the reference for UsageStats: recs grouped by UTC day
// (oldest first), by model and by key (Cost descending, then Key).
func wantStats(recs []store.UsageRecord) store.UsageStats {
	return store.UsageStats{
		Daily:   groupUsage(recs, func(r store.UsageRecord) string { return r.Time.UTC().Format(time.DateOnly) }),
		ByModel: byCostDesc(groupUsage(recs, func(r store.UsageRecord) string { return r.Model })),
		ByKey:   byCostDesc(groupUsage(recs, func(r store.UsageRecord) string { return r.KeyID })),
	}
}

// usageStats calls UsageStats or fails the test.
func usageStats(t *testing.T, s store.Store, account string, r statsRange) store.UsageStats {
	t.Helper()
	st, err := s.UsageStats(ctx(t), account, r.since, r.until)
	if err != nil {
		t.Fatalf("UsageStats(%s, %s): %v", account, r, err)
	}
	return st
}

// assertStats compares statistics; nil and empty groupings are alike.
func assertStats(t *testing.T, what string, got, want store.UsageStats) {
	t.Helper()
	assertGroups(t, what+" Daily", got.Daily, want.Daily)
	assertGroups(t, what+" ByModel", got.ByModel, want.ByModel)
	assertGroups(t, what+" ByKey", got.ByKey, want.ByKey)
}

// testUsageRollups covers UsageStats as statistics kept with the records:
// equal to grouping the stored records after batches with duplicates,
// unchanged by PurgeUsage, and fed by FinishTask's charge.
func testUsageRollups(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RandomBatches", func(t *testing.T) { testRollupBatches(t, newStore) })
	t.Run("VideoCharge", func(t *testing.T) { testRollupVideo(t, newStore) })
}

func testRollupBatches(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, b := newAccount(t, "alice", at(0)), newAccount(t, "bob", at(0))
	mustCreateAccount(t, s, a)
	mustCreateAccount(t, s, b)
	ka1, ka2, kb := newKey(t, a, "mg-a1", at(0)), newKey(t, a, "mg-a2", at(0)), newKey(t, b, "mg-b", at(0))
	for _, k := range []store.Key{ka1, ka2, kb} {
		mustCreateKey(t, s, k)
	}
	keys := map[string][]string{a.ID: {ka1.ID, ka2.ID, ""}, b.ID: {kb.ID, ""}, "": {""}}
	accounts := []string{a.ID, a.ID, a.ID, b.ID, ""}
	models := []string{"gpt-a", "gpt-b", "gpt-c", "claude-d"}
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	const days = 12

	rng := rand.New(rand.NewPCG(14, 2025))
	var sent []store.UsageRecord // every record sent so far, stored or not
	n := 0
	record := func() store.UsageRecord {
		n++
		acct := accounts[rng.IntN(len(accounts))]
		var when time.Time
		switch rng.IntN(6) {
		case 0: // the first instant of an hour
			when = base.Add(time.Duration(rng.IntN(days*24)) * time.Hour)
		case 1: // the last instant of an hour
			when = base.Add(time.Duration(1+rng.IntN(days*24))*time.Hour - time.Microsecond)
		default:
			when = base.Add(time.Duration(rng.Int64N(int64(days*24*time.Hour/time.Microsecond))) * time.Microsecond)
		}
		r := usageRecord(fmt.Sprintf("rr-%05d", n), acct, when)
		r.KeyID = keys[acct][rng.IntN(len(keys[acct]))]
		r.Model = models[rng.IntN(len(models))]
		r.PromptTokens, r.CompletionTokens = rng.Int64N(100_000), rng.Int64N(10_000)
		r.Status = 200
		if rng.IntN(8) == 0 {
			r.Status, r.ErrorCode, r.CompletionTokens = 502, "upstream_error", 0
		}
		if acct != "" && rng.IntN(4) > 0 {
			r.Cost = money.Micros(1 + rng.Int64N(3_000_000))
		}
		return r
	}
	for batch := range 25 {
		var recs []store.UsageRecord
		for range 1 + rng.IntN(80) {
			r := record()
			// Some records repeat a record sent before, in this batch or
			// an earlier one (its id, account and time), with other
			// values: only the stored one counts.
			if len(sent) > 0 && rng.IntN(6) == 0 {
				was := sent[rng.IntN(len(sent))]
				r.RequestID, r.AccountID, r.Time = was.RequestID, was.AccountID, was.Time
				r.KeyID = keys[r.AccountID][rng.IntN(len(keys[r.AccountID]))]
				if r.AccountID == "" {
					r.Cost = 0
				}
			}
			sent = append(sent, r)
			recs = append(recs, r)
		}
		if batch%5 == 4 { // a retried batch
			recs = append(recs, recs...)
		}
		insertUsage(t, s, recs)
	}

	hour := func(h int) time.Time { return base.Add(time.Duration(h) * time.Hour) }
	ranges := []statsRange{
		{},
		{since: hour(0), until: hour(days * 24)},
		{since: hour(-24), until: hour(days*24 + 24)},
		{since: hour(3 * 24), until: hour(4 * 24)},
		{since: hour(5), until: hour(6)},
		{since: hour(7 * 24)},
		{until: hour(2*24 + 13)},
		{since: hour(days * 24), until: hour(days*24 + 5)},
	}
	for range 12 {
		h := rng.IntN(days * 24)
		ranges = append(ranges, statsRange{since: hour(h), until: hour(h + 1 + rng.IntN(days*24-h))})
	}
	before := map[string]store.UsageStats{}
	for _, acct := range []string{a.ID, b.ID} {
		for _, r := range ranges {
			what := fmt.Sprintf("%s %s", acct, r)
			list := listUsage(t, s, store.UsageFilter{AccountID: acct, Since: r.since, Until: r.until})
			got := usageStats(t, s, acct, r)
			assertStats(t, what, got, wantStats(list))
			before[what] = got
		}
	}

	// Purging the records leaves the statistics as they were, in two
	// passes: half the days, then everything.
	for _, cut := range []time.Time{hour(days * 12), hour(days*24 + 1)} {
		for purge(t, s, cut, 97) == 97 {
		}
		for _, acct := range []string{a.ID, b.ID} {
			for _, r := range ranges {
				what := fmt.Sprintf("%s %s", acct, r)
				assertStats(t, what+" after purge to "+cut.Format(time.DateTime), usageStats(t, s, acct, r), before[what])
			}
		}
	}
	if left := listUsage(t, s, store.UsageFilter{}); len(left) != 0 {
		t.Errorf("%d records left after purging everything", len(left))
	}
}

func testRollupVideo(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, k := taskFixture(t, s, "alice")
	v := newTask(t, a, k.ID, at(0))
	mustCreateTask(t, s, v)
	if got := mustClaim(t, s, "p1", at(0), time.Minute, 10); len(got) != 1 {
		t.Fatalf("claimed %d tasks, want 1", len(got))
	}
	// A chat record in the same hour, so the video adds to a rollup that
	// exists.
	chat := usageRecord("req_chat", a.ID, at(0))
	chat.KeyID, chat.Cost = k.ID, 700
	insertUsage(t, s, []store.UsageRecord{chat})

	const cost = 2500
	rec := &store.UsageRecord{RequestID: v.RequestID, Time: at(time.Minute), AccountID: a.ID, KeyID: k.ID,
		Endpoint: "videos", Model: v.Model, Provider: v.Provider, UpstreamModel: v.UpstreamModel,
		Cost: cost, Status: 200}
	fin := v
	fin.State, fin.FinishedAt, fin.Progress, fin.Cost, fin.UpdatedAt = store.TaskCompleted, at(time.Minute), 100, cost, at(time.Minute)
	// Another owner's attempt fails and must leave no trace in the stats.
	other := *rec
	other.RequestID = "req_other"
	if err := s.FinishTask(ctx(t), "p2", fin, &other); err == nil {
		t.Fatalf("FinishTask by another owner succeeded")
	}
	if err := s.FinishTask(ctx(t), "p1", fin, rec); err != nil {
		t.Fatalf("FinishTask: %v", err)
	}
	day := at(0).Truncate(24 * time.Hour)
	r := statsRange{since: day, until: day.Add(24 * time.Hour)}
	got := usageStats(t, s, a.ID, r)
	want := wantStats([]store.UsageRecord{chat, *rec})
	assertStats(t, "with the video", got, want)
	if g := sumGroups(got.ByModel); g.Requests != 2 || g.Cost != 700+cost {
		t.Errorf("totals %+v, want 2 requests costing %d", g, 700+cost)
	}
	assertEqual(t, "models", groupKeys(got.ByModel), []string{v.Model, chat.Model})
}
