package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// usageRecord returns a record with every field but Cost set to a non-zero
// value (a cost needs a stored account; ledger.go tests charges).
func usageRecord(id, account string, when time.Time) store.UsageRecord {
	return store.UsageRecord{
		RequestID:        id,
		Time:             when,
		AccountID:        account,
		KeyID:            "key_" + account,
		Endpoint:         "chat.completions",
		Model:            "gpt-4o-mini",
		Provider:         "openai-eu",
		UpstreamModel:    "gpt-4o-mini-2024-07-18",
		Stream:           true,
		PromptTokens:     1234,
		CompletionTokens: 5678,
		CachedTokens:     1024,
		ReasoningTokens:  64,
		Estimated:        true,
		Latency:          1500*time.Millisecond + 7*time.Microsecond,
		TTFT:             250*time.Millisecond + 3*time.Microsecond,
		Status:           200,
		ErrorCode:        "",
	}
}

// listUsage lists with f or fails the test, normalising times.
func listUsage(t *testing.T, s store.Store, f store.UsageFilter) []store.UsageRecord {
	t.Helper()
	got, err := s.ListUsage(ctx(t), f)
	if err != nil {
		t.Fatalf("ListUsage(%+v): %v", f, err)
	}
	for i := range got {
		got[i] = normUsage(got[i])
	}
	return got
}

// insertUsage inserts recs or fails the test.
func insertUsage(t *testing.T, s store.Store, recs []store.UsageRecord) {
	t.Helper()
	if err := s.InsertUsage(ctx(t), recs); err != nil {
		t.Fatalf("InsertUsage(%d records): %v", len(recs), err)
	}
}

// requestIDs returns the request IDs of recs in order.
func requestIDs(recs []store.UsageRecord) []string {
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.RequestID
	}
	return ids
}

// testUsage covers InsertUsage, AppendUsage and ListUsage.
func testUsage(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		full := usageRecord("req-full", "acct_a", at(time.Hour))
		failed := usageRecord("req-failed", "acct_a", at(time.Minute))
		failed.Stream = false
		failed.Status = 429
		failed.ErrorCode = "rate_limit_exceeded"
		failed.CompletionTokens = 0
		failed.TTFT = 0
		zero := store.UsageRecord{RequestID: "req-zero"} // zero time, durations, strings
		insertUsage(t, s, []store.UsageRecord{zero, failed, full})

		got := listUsage(t, s, store.UsageFilter{})
		want := []store.UsageRecord{full, failed, zero} // newest first; zero time is oldest
		assertEqual(t, "ListUsage", got, want)
		if len(got) == 3 && !got[2].Time.IsZero() {
			t.Errorf("zero Time read back as %v", got[2].Time)
		}
	})

	t.Run("EmptyBatch", func(t *testing.T) {
		s := newStore(t)
		insertUsage(t, s, nil)
		insertUsage(t, s, []store.UsageRecord{})
		if got := listUsage(t, s, store.UsageFilter{}); len(got) != 0 {
			t.Fatalf("ListUsage after empty inserts: %d records, want 0", len(got))
		}
	})

	t.Run("Batch", func(t *testing.T) {
		s := newStore(t)
		const n = 500
		recs := make([]store.UsageRecord, n)
		for i := range recs {
			recs[i] = usageRecord(fmt.Sprintf("req-%04d", i), "acct_a", at(time.Duration(i)*time.Second))
		}
		insertUsage(t, s, recs)
		got := listUsage(t, s, store.UsageFilter{})
		if len(got) != n {
			t.Fatalf("ListUsage: %d records, want %d", len(got), n)
		}
		for i, r := range got {
			assertEqual(t, "record "+r.RequestID, r, normUsage(recs[n-1-i]))
		}
	})

	t.Run("Idempotent", func(t *testing.T) {
		s := newStore(t)
		first := []store.UsageRecord{
			usageRecord("req-1", "acct_a", at(1*time.Second)),
			usageRecord("req-2", "acct_a", at(2*time.Second)),
		}
		insertUsage(t, s, first)

		// The same batch again (a retry) changes nothing, even with other data.
		retry := []store.UsageRecord{first[0], first[1]}
		retry[0].PromptTokens = 999999
		insertUsage(t, s, retry)
		assertEqual(t, "after retry", listUsage(t, s, store.UsageFilter{}),
			[]store.UsageRecord{first[1], first[0]})

		// A batch mixing old and new IDs, with a duplicate inside it, adds the
		// new ones once.
		third := usageRecord("req-3", "acct_a", at(3*time.Second))
		insertUsage(t, s, []store.UsageRecord{first[0], third, third, first[1]})
		assertEqual(t, "after mixed batch", listUsage(t, s, store.UsageFilter{}),
			[]store.UsageRecord{third, first[1], first[0]})
	})

	t.Run("AppendThenReplay", func(t *testing.T) {
		// AppendUsage stores new records as InsertUsage does. A replay
		// of them through InsertUsage (a crash journal, a retried batch)
		// stores only the ones it has not got, whichever block or account
		// holds the others, and keeps the first version of each.
		s := newStore(t)
		a1 := usageRecord("req-a1", "acct_a", at(1*time.Second))
		a9 := usageRecord("req-a9", "acct_a", at(9*time.Second))
		b5 := usageRecord("req-b5", "acct_b", at(5*time.Second))
		none := usageRecord("req-none", "", at(3*time.Second))
		if err := s.AppendUsage(ctx(t), []store.UsageRecord{a9, b5, a1, none}); err != nil {
			t.Fatalf("AppendUsage: %v", err)
		}
		if err := s.AppendUsage(ctx(t), nil); err != nil {
			t.Fatalf("AppendUsage(nil): %v", err)
		}
		assertEqual(t, "after append", listUsage(t, s, store.UsageFilter{}), []store.UsageRecord{a9, b5, none, a1})

		// a5 falls inside acct_a's stored block (1 s..9 s) but is new; b5
		// again is acct_b's; the others are stored in other blocks.
		a5 := usageRecord("req-a5", "acct_a", at(5*time.Second))
		changed := a9
		changed.PromptTokens = 1
		later := usageRecord("req-a20", "acct_a", at(20*time.Second))
		insertUsage(t, s, []store.UsageRecord{none, b5, a5, changed, a1, later})
		assertEqual(t, "after replay", listUsage(t, s, store.UsageFilter{}),
			[]store.UsageRecord{later, a9, b5, a5, none, a1})
	})

	t.Run("Filter", func(t *testing.T) {
		s := newStore(t)
		// a0..a4 for acct_a and b0..b2 for acct_b, one minute apart,
		// interleaved in time: a0 b0 a1 b1 a2 b2 a3 a4.
		var recs []store.UsageRecord
		minute := func(i int) time.Time { return at(time.Duration(i) * time.Minute) }
		for i, id := range []string{"a0", "b0", "a1", "b1", "a2", "b2", "a3", "a4"} {
			acct := "acct_a"
			if id[0] == 'b' {
				acct = "acct_b"
			}
			recs = append(recs, usageRecord(id, acct, minute(i)))
		}
		insertUsage(t, s, recs)

		tests := []struct {
			name string
			f    store.UsageFilter
			want []string
		}{
			{"all newest first", store.UsageFilter{}, []string{"a4", "a3", "b2", "a2", "b1", "a1", "b0", "a0"}},
			{"account", store.UsageFilter{AccountID: "acct_b"}, []string{"b2", "b1", "b0"}},
			{"unknown account", store.UsageFilter{AccountID: "acct_c"}, nil},
			{"since is inclusive", store.UsageFilter{Since: minute(5)}, []string{"a4", "a3", "b2"}},
			{"until is exclusive", store.UsageFilter{Until: minute(2)}, []string{"b0", "a0"}},
			{"since and until", store.UsageFilter{Since: minute(2), Until: minute(5)}, []string{"a2", "b1", "a1"}},
			{"empty window", store.UsageFilter{Since: minute(3), Until: minute(3)}, nil},
			{"limit", store.UsageFilter{Limit: 3}, []string{"a4", "a3", "b2"}},
			{"limit above count", store.UsageFilter{Limit: 100}, []string{"a4", "a3", "b2", "a2", "b1", "a1", "b0", "a0"}},
			{"account and limit", store.UsageFilter{AccountID: "acct_a", Limit: 2}, []string{"a4", "a3"}},
			{"account and window", store.UsageFilter{AccountID: "acct_a", Since: minute(1), Until: minute(7)}, []string{"a3", "a2", "a1"}},
			{"everything", store.UsageFilter{AccountID: "acct_b", Since: minute(1), Until: minute(6), Limit: 1}, []string{"b2"}},
			{"since in other zone", store.UsageFilter{Since: minute(6).In(time.FixedZone("X", -7*3600))}, []string{"a4", "a3"}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got := listUsage(t, s, tc.f)
				if ids := requestIDs(got); fmt.Sprint(ids) != fmt.Sprint(tc.want) || len(ids) != len(tc.want) {
					t.Fatalf("ListUsage(%+v) = %v, want %v", tc.f, ids, tc.want)
				}
				for i := 1; i < len(got); i++ {
					if got[i].Time.After(got[i-1].Time) {
						t.Errorf("not newest first: %s after %s", got[i].RequestID, got[i-1].RequestID)
					}
				}
			})
		}
	})
}
