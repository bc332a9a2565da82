package storetest

import (
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// testUsageAttempts covers UsageRecord.Attempts: stored exactly as given
// (nil stays nil), through AppendUsage and InsertUsage, a retried batch,
// every way of listing, and a purge that rewrites what holds the records
// it keeps. Durations are whole microseconds, as Latency's are.
func testUsageAttempts(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	a := fundedAccount(t, s, "tries")
	k := newKey(t, a, "mg-tries", at(0))
	if err := s.CreateKey(ctx(t), k); err != nil {
		t.Fatal(err)
	}
	rec := func(id string, d time.Duration) store.UsageRecord {
		r := usageRecord(id, a.ID, at(d))
		r.KeyID = k.ID
		return r
	}
	oldest := rec("req-oldest", time.Second) // purged below
	oldest.Attempts = []store.Attempt{
		{Provider: "openai-eu", Status: 500, Error: "upstream 500", Duration: time.Millisecond},
		{Provider: "openai-eu", Status: 200, Duration: time.Second},
	}
	plain := rec("req-plain", 2*time.Second) // one try that answered: nothing stored
	retried := rec("req-retried", 3*time.Second)
	retried.Cost = 1500 // charged and tried: both in one record
	retried.Attempts = []store.Attempt{
		{Provider: "openai-us", Status: 0, Error: "dial tcp 10.0.0.1:443: connect: connection refused", Duration: 3*time.Millisecond + 7*time.Microsecond},
		{Provider: "openai-eu", Status: 429, Error: "rate limited: retry in 1s", Duration: 120 * time.Millisecond},
		{Provider: "openai-eu", Status: 200, Duration: 1500*time.Millisecond + 7*time.Microsecond},
	}
	failed := rec("req-failed", 4*time.Second)
	failed.Status, failed.ErrorCode = 502, "upstream_error"
	failed.Attempts = []store.Attempt{{Provider: "openai-eu", Status: 502, Error: "upstream 502: bad gateway", Duration: 2 * time.Second}}
	refused := rec("req-refused", 5*time.Second) // no upstream tried
	refused.Provider, refused.UpstreamModel, refused.Status, refused.ErrorCode = "", "", 400, "invalid_request_error"
	blank := rec("req-blank", 6*time.Second) // an attempt with every field zero
	blank.Status, blank.Attempts = 499, []store.Attempt{{}}
	appended := rec("req-appended", 7*time.Second)
	appended.Attempts = []store.Attempt{{Provider: "b", Status: 503, Error: "overloaded"}, {Provider: "a", Status: 201, Duration: time.Microsecond}}

	if err := s.AppendUsage(ctx(t), []store.UsageRecord{appended, oldest}); err != nil {
		t.Fatalf("AppendUsage: %v", err)
	}
	batch := []store.UsageRecord{plain, retried, failed, refused, blank}
	insertUsage(t, s, batch)
	again := append([]store.UsageRecord(nil), batch...) // a retried batch, other attempts
	again[1].Attempts = again[1].Attempts[:1]
	again[0].Attempts = []store.Attempt{{Provider: "x", Status: 200}}
	insertUsage(t, s, again)

	want := []store.UsageRecord{appended, blank, refused, failed, retried, plain, oldest} // newest first
	assertEqual(t, "ListUsage", listUsage(t, s, store.UsageFilter{}), want)
	for _, r := range listUsage(t, s, store.UsageFilter{AccountID: a.ID}) {
		if r.Attempts != nil && len(r.Attempts) == 0 {
			t.Errorf("%s: empty, non-nil Attempts", r.RequestID)
		}
	}

	// Page by page, one record each.
	var paged []store.UsageRecord
	f := store.UsageFilter{AccountID: a.ID, Limit: 1}
	for range len(want) + 1 {
		page := listUsage(t, s, f)
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		f.After = cursorOf(page[len(page)-1])
	}
	assertEqual(t, "paged", paged, want)
	assertEqual(t, "errors only", listUsage(t, s, store.UsageFilter{Status: store.UsageError}),
		[]store.UsageRecord{blank, refused, failed})
	assertEqual(t, "window", listUsage(t, s, store.UsageFilter{Since: at(3 * time.Second), Until: at(5 * time.Second)}),
		[]store.UsageRecord{failed, retried})

	// Purging the oldest rewrites what held it with the others; theirs stay.
	if n := purge(t, s, at(2*time.Second), 10); n != 1 {
		t.Fatalf("purged %d, want 1", n)
	}
	assertEqual(t, "after purge", listUsage(t, s, store.UsageFilter{}), want[:len(want)-1])
	checkBalance(t, s, a.ID, money.Unit-1500, 1500)
}
