package storetest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// sortUsage sorts recs in the listing's order: Time descending, then
// RequestID descending.
func sortUsage(recs []store.UsageRecord) {
	slices.SortFunc(recs, func(a, b store.UsageRecord) int {
		return cmp.Or(b.Time.Compare(a.Time), strings.Compare(b.RequestID, a.RequestID))
	})
}

// afterCursor reports whether r comes strictly after c in the listing.
func afterCursor(r store.UsageRecord, c store.UsageCursor) bool {
	return r.Time.Before(c.Time) || (r.Time.Equal(c.Time) && r.RequestID < c.RequestID)
}

// cursorOf is the position of r.
func cursorOf(r store.UsageRecord) store.UsageCursor {
	return store.UsageCursor{Time: r.Time, RequestID: r.RequestID}
}

// testUsageFilters covers ListUsage's Model, KeyID, Status and After.
func testUsageFilters(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Filters", func(t *testing.T) {
		s := newStore(t)
		models := []string{"gpt-a", "gpt-b", "gpt-c"}
		keys := []string{"key_1", "key_2"}
		statuses := []int{200, 0, 400, 429, 499, 500, 399}
		var all []store.UsageRecord
		for i := range 42 {
			account := "acct_a"
			if i%4 == 3 {
				account = "acct_b"
			}
			// Seven distinct times for 42 records: many ties, with ids
			// whose order differs from insertion order.
			r := usageRecord(fmt.Sprintf("req-%02d", i*17%42), account, at(time.Duration(i%7)*time.Minute))
			r.Model, r.KeyID, r.Status = models[i%3], keys[i%2], statuses[i%7]
			all = append(all, r)
		}
		insertUsage(t, s, all)
		for i := range all {
			all[i] = normUsage(all[i])
		}
		sortUsage(all)
		mid := all[17] // a record inside a run of equal times
		cases := []struct {
			name string
			f    store.UsageFilter
			keep func(store.UsageRecord) bool
		}{
			{"none", store.UsageFilter{}, func(store.UsageRecord) bool { return true }},
			{"model", store.UsageFilter{Model: "gpt-b"}, func(r store.UsageRecord) bool { return r.Model == "gpt-b" }},
			{"unknown model", store.UsageFilter{Model: "gpt"}, func(store.UsageRecord) bool { return false }},
			{"key", store.UsageFilter{KeyID: "key_2"}, func(r store.UsageRecord) bool { return r.KeyID == "key_2" }},
			{"ok", store.UsageFilter{Status: store.UsageOK}, func(r store.UsageRecord) bool { return r.Status < 400 }},
			{"error", store.UsageFilter{Status: store.UsageError}, func(r store.UsageRecord) bool { return r.Status >= 400 }},
			{"any", store.UsageFilter{Status: store.UsageAny}, func(store.UsageRecord) bool { return true }},
			{"all together", store.UsageFilter{AccountID: "acct_a", Model: "gpt-a", KeyID: "key_1", Status: store.UsageError},
				func(r store.UsageRecord) bool {
					return r.AccountID == "acct_a" && r.Model == "gpt-a" && r.KeyID == "key_1" && r.Status >= 400
				}},
			{"range and model", store.UsageFilter{Since: at(2 * time.Minute), Until: at(5 * time.Minute), Model: "gpt-c"},
				func(r store.UsageRecord) bool {
					return !r.Time.Before(at(2*time.Minute)) && r.Time.Before(at(5*time.Minute)) && r.Model == "gpt-c"
				}},
			{"after a record", store.UsageFilter{After: cursorOf(mid)},
				func(r store.UsageRecord) bool { return afterCursor(r, cursorOf(mid)) }},
			{"after a missing id", store.UsageFilter{After: store.UsageCursor{Time: mid.Time, RequestID: mid.RequestID + "5"}},
				func(r store.UsageRecord) bool {
					return afterCursor(r, store.UsageCursor{Time: mid.Time, RequestID: mid.RequestID + "5"})
				}},
			{"after the first time's end", store.UsageFilter{After: store.UsageCursor{Time: at(6 * time.Minute)}},
				func(r store.UsageRecord) bool { return r.Time.Before(at(6 * time.Minute)) }},
			{"after, filtered", store.UsageFilter{After: cursorOf(mid), Status: store.UsageOK, AccountID: "acct_a"},
				func(r store.UsageRecord) bool {
					return afterCursor(r, cursorOf(mid)) && r.Status < 400 && r.AccountID == "acct_a"
				}},
			{"after the last", store.UsageFilter{After: cursorOf(all[len(all)-1])}, func(store.UsageRecord) bool { return false }},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var want []string
				for _, r := range all {
					if tc.keep(r) {
						want = append(want, r.RequestID)
					}
				}
				got := requestIDs(listUsage(t, s, tc.f))
				if len(got) == 0 && len(want) == 0 {
					return
				}
				assertEqual(t, "request ids", got, want)
				if len(want) > 3 {
					f := tc.f
					f.Limit = 3
					assertEqual(t, "first 3", requestIDs(listUsage(t, s, f)), want[:3])
				}
			})
		}
	})

	t.Run("CursorWalk", func(t *testing.T) {
		s := newStore(t)
		var recs []store.UsageRecord
		add := func(n int, prefix string, when time.Time, account string) {
			for i := range n {
				r := usageRecord(fmt.Sprintf("%s-%03d", prefix, i*7%n), account, when)
				r.Status = []int{200, 500}[i%2]
				recs = append(recs, r)
			}
		}
		add(31, "req-tie", at(0), "acct_a") // 31 records with one timestamp
		add(4, "req-new", at(time.Hour), "acct_a")
		add(5, "req-old", at(-time.Hour), "acct_a")
		add(6, "req-bob", at(0), "acct_b") // another account at the same time
		for i := 0; i < len(recs); i += 9 {
			insertUsage(t, s, recs[i:min(i+9, len(recs))])
		}
		for _, tc := range []struct {
			name string
			f    store.UsageFilter
		}{
			{"account", store.UsageFilter{AccountID: "acct_a"}},
			{"account errors", store.UsageFilter{AccountID: "acct_a", Status: store.UsageError}},
			{"everything", store.UsageFilter{}},
		} {
			f := tc.f
			t.Run(tc.name, func(t *testing.T) {
				want := requestIDs(listUsage(t, s, f))
				if len(want) <= 10 { // a walk needs more than one page
					t.Fatalf("only %d records to walk", len(want))
				}
				var (
					got   []store.UsageRecord
					pages int
				)
				f.Limit = 10
				for {
					page := listUsage(t, s, f)
					got = append(got, page...)
					if pages++; len(page) < f.Limit || pages > 100 {
						break
					}
					f.After = cursorOf(page[len(page)-1])
				}
				ids := requestIDs(got)
				seen := map[string]bool{}
				for _, r := range got {
					k := r.AccountID + "/" + r.RequestID
					if seen[k] {
						t.Errorf("%s returned twice", k)
					}
					seen[k] = true
				}
				assertEqual(t, "walked ids", ids, want)
			})
		}
	})
}

// groupUsage is the reference for UsageStats: recs grouped by key, sorted
// by Key ascending.
func groupUsage(recs []store.UsageRecord, key func(store.UsageRecord) string) []store.UsageGroup {
	m := map[string]*store.UsageGroup{}
	var out []store.UsageGroup
	for _, r := range recs {
		k := key(r)
		g := m[k]
		if g == nil {
			g = &store.UsageGroup{Key: k}
			m[k] = g
		}
		g.Requests++
		g.PromptTokens += r.PromptTokens
		g.CompletionTokens += r.CompletionTokens
		g.Cost += r.Cost
	}
	for _, g := range m {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b store.UsageGroup) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// byCostDesc sorts groups by Cost descending, then Key ascending.
func byCostDesc(gs []store.UsageGroup) []store.UsageGroup {
	slices.SortStableFunc(gs, func(a, b store.UsageGroup) int {
		return cmp.Or(cmp.Compare(b.Cost, a.Cost), strings.Compare(a.Key, b.Key))
	})
	return gs
}

// sumGroups totals gs.
func sumGroups(gs []store.UsageGroup) store.UsageTotals {
	var t store.UsageTotals
	for _, g := range gs {
		t.Requests += g.Requests
		t.PromptTokens += g.PromptTokens
		t.CompletionTokens += g.CompletionTokens
		t.Cost += g.Cost
	}
	return t
}

// assertGroups compares groupings; nil and empty are alike.
func assertGroups(t *testing.T, what string, got, want []store.UsageGroup) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	assertEqual(t, what, got, want)
}

// groupKeys returns the keys of gs in order.
func groupKeys(gs []store.UsageGroup) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.Key
	}
	return out
}

// testUsageStats covers UsageStats against ListUsage over the same range.
func testUsageStats(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a, b := newAccount(t, "alice", at(0)), newAccount(t, "bob", at(0))
	mustCreateAccount(t, s, a)
	mustCreateAccount(t, s, b)
	k1, k2 := newKey(t, a, "mg-key1", at(0)), newKey(t, a, "mg-key2", at(0))
	mustCreateKey(t, s, k1)
	mustCreateKey(t, s, k2)

	utcDay := func(d, h, m, sec, us int) time.Time { return time.Date(2025, 3, d, h, m, sec, us*1000, time.UTC) }
	east, west := time.FixedZone("UTC+9", 9*3600), time.FixedZone("UTC-5", -5*3600)
	since, until := utcDay(14, 0, 0, 0, 0), utcDay(17, 0, 0, 0, 0)
	n := 0
	rec := func(acct store.Account, when time.Time, model string, k store.Key, status int, cost money.Micros) store.UsageRecord {
		n++
		r := usageRecord(fmt.Sprintf("req-%03d", n), acct.ID, when)
		r.Model, r.KeyID, r.Status, r.Cost = model, k.ID, status, cost
		r.PromptTokens, r.CompletionTokens = int64(n*101), int64(n*7)
		if status >= 400 {
			r.ErrorCode, r.CompletionTokens = "server_error", 0
		}
		return r
	}
	none := store.Key{}
	recs := []store.UsageRecord{
		rec(a, since, "gpt-a", k1, 200, 1_000_001),                             // first instant of the range
		rec(a, utcDay(14, 23, 59, 59, 999_999), "gpt-b", k2, 200, 333_333),     // last instant of a UTC day
		rec(a, utcDay(15, 0, 0, 0, 0), "gpt-b", none, 200, 666_668),            // gpt-b ties gpt-a on cost
		rec(a, time.Date(2025, 3, 16, 8, 0, 0, 0, east), "gpt-c", k1, 200, 7),  // 15th in UTC, 16th in its zone
		rec(a, time.Date(2025, 3, 15, 21, 0, 0, 0, west), "gpt-c", k2, 500, 0), // 16th in UTC, 15th in its zone
		rec(a, utcDay(16, 12, 0, 0, 0), "gpt-a", k2, 499, 0),
		rec(a, utcDay(16, 23, 59, 59, 999_999), "gpt-c", k1, 200, 2_500_000),
		rec(a, since.Add(-time.Microsecond), "gpt-a", k1, 200, 5), // before the range
		rec(a, until, "gpt-a", k1, 200, 5),                        // at its exclusive end
		rec(b, utcDay(15, 10, 0, 0, 0), "gpt-a", none, 200, 9),    // another account
	}
	insertUsage(t, s, recs)

	cases := []struct {
		name         string
		account      string
		since, until time.Time
		days         []string // the Daily keys, when the case pins them
		models       []string // the ByModel keys, likewise
		keys         []string // the ByKey keys, likewise
	}{
		{name: "three UTC days", account: a.ID, since: since, until: until,
			days:   []string{"2025-03-14", "2025-03-15", "2025-03-16"},
			models: []string{"gpt-c", "gpt-a", "gpt-b"}, // 2_500_007, then the tie by name
			keys:   []string{k1.ID, "", k2.ID}},
		{name: "one day", account: a.ID, since: utcDay(15, 0, 0, 0, 0), until: utcDay(16, 0, 0, 0, 0),
			days: []string{"2025-03-15"}, models: []string{"gpt-b", "gpt-c"}, keys: []string{"", k1.ID}},
		{name: "wide", account: a.ID, since: since.Add(-24 * time.Hour), until: until.Add(24 * time.Hour),
			days: []string{"2025-03-13", "2025-03-14", "2025-03-15", "2025-03-16", "2025-03-17"}},
		{name: "errors only", account: a.ID, since: utcDay(16, 0, 0, 0, 0), until: utcDay(16, 13, 0, 0, 0),
			days: []string{"2025-03-16"}, models: []string{"gpt-a", "gpt-c"}, keys: []string{k2.ID}},
		{name: "empty", account: a.ID, since: until.Add(time.Hour), until: until.Add(2 * time.Hour)},
		{name: "other account", account: b.ID, since: since, until: until,
			days: []string{"2025-03-15"}, models: []string{"gpt-a"}, keys: []string{""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.UsageStats(ctx(t), tc.account, tc.since, tc.until)
			if err != nil {
				t.Fatalf("UsageStats: %v", err)
			}
			list := listUsage(t, s, store.UsageFilter{AccountID: tc.account, Since: tc.since, Until: tc.until})
			var total store.UsageTotals
			for _, r := range list {
				total.Requests++
				total.PromptTokens += r.PromptTokens
				total.CompletionTokens += r.CompletionTokens
				total.Cost += r.Cost
			}
			for name, gs := range map[string][]store.UsageGroup{"Daily": got.Daily, "ByModel": got.ByModel, "ByKey": got.ByKey} {
				assertEqual(t, name+" totals", sumGroups(gs), total)
			}
			daily := groupUsage(list, func(r store.UsageRecord) string { return r.Time.UTC().Format(time.DateOnly) })
			assertGroups(t, "Daily", got.Daily, daily)
			assertGroups(t, "ByModel", got.ByModel, byCostDesc(groupUsage(list, func(r store.UsageRecord) string { return r.Model })))
			assertGroups(t, "ByKey", got.ByKey, byCostDesc(groupUsage(list, func(r store.UsageRecord) string { return r.KeyID })))
			if len(tc.days) > 0 {
				assertEqual(t, "Daily keys", groupKeys(got.Daily), tc.days)
			}
			if len(tc.models) > 0 {
				assertEqual(t, "ByModel keys", groupKeys(got.ByModel), tc.models)
			}
			if len(tc.keys) > 0 {
				assertEqual(t, "ByKey keys", groupKeys(got.ByKey), tc.keys)
			}
			if len(list) == 0 && (len(got.Daily) != 0 || len(got.ByModel) != 0 || len(got.ByKey) != 0) {
				t.Errorf("no records but groups %+v", got)
			}
		})
	}
}
