package usage

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/store/sqlstore"
)

// TestRecorderWithSQLite runs the Recorder against the real SQLite store.
func TestRecorderWithSQLite(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "modelgate.db"))
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	defer st.Close()

	log, _ := newLogger()
	r := New(st, Options{BatchSize: 64, FlushInterval: 10 * time.Millisecond, Logger: log})
	runErr := startRun(ctx, r)

	ids := recordConcurrently(r, 20, 50)
	full := store.UsageRecord{
		RequestID: "req-full", Time: time.Date(2025, 2, 3, 4, 5, 6, 789000, time.UTC),
		AccountID: "acct_2", KeyID: "key_2", Endpoint: "chat.completions", Model: "m",
		Provider: "p", UpstreamModel: "um", Stream: true, PromptTokens: 11, CompletionTokens: 22,
		Latency: 3 * time.Second, TTFT: 40 * time.Millisecond, Status: 499, ErrorCode: "client_closed",
		Attempts: []store.Attempt{
			{Provider: "q", Status: 0, Error: "dial tcp: connection refused", Duration: 2 * time.Millisecond},
			{Provider: "p", Status: 200, Duration: 3 * time.Second},
		},
	}
	r.Record(full)

	if err := r.Close(closeCtx(t, hangGuard)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := waitRun(t, runErr); err != nil {
		t.Fatalf("Run: %v", err)
	}

	// The recorder appended every batch. A journal replaying all of them
	// (a crash before their tickets were counted) stores nothing twice.
	var again []store.UsageRecord
	for _, id := range ids {
		again = append(again, rec(id))
	}
	if err := st.InsertUsage(ctx, append(again, full)); err != nil {
		t.Fatalf("InsertUsage of stored records: %v", err)
	}

	got, err := st.ListUsage(ctx, store.UsageFilter{AccountID: "acct_1"})
	if err != nil {
		t.Fatalf("ListUsage: %v", err)
	}
	if len(got) != len(ids) {
		t.Fatalf("%d records stored, want %d", len(got), len(ids))
	}
	stored := map[string]bool{}
	for _, u := range got {
		stored[u.RequestID] = true
	}
	for _, id := range ids {
		if !stored[id] {
			t.Errorf("record %s not stored", id)
		}
	}
	gotFull, err := st.ListUsage(ctx, store.UsageFilter{AccountID: "acct_2"})
	if err != nil {
		t.Fatalf("ListUsage: %v", err)
	}
	if len(gotFull) != 1 || !reflect.DeepEqual(gotFull[0], full) {
		t.Fatalf("stored %+v, want [%+v]", gotFull, full)
	}
}

// TestPurgerPurgesRefusalsWithSQLite: refusal counts get the records'
// retention, through the real store.
func TestPurgerPurgesRefusalsWithSQLite(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "modelgate.db"))
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	defer st.Close()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	r := NewRefusals(st, time.Hour, nil)
	for _, age := range []time.Duration{401 * 24 * time.Hour, 400*24*time.Hour + time.Minute, 399 * 24 * time.Hour, 0} {
		r.Count(store.RefusalCount{AccountID: "acct", KeyID: "k", Reason: "insufficient_quota", Status: 429, Minute: now.Add(-age)})
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	p := &Purger{Store: st, Retention: 400 * 24 * time.Hour, Now: func() time.Time { return now }, Batch: 1}
	if _, err := p.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	left, err := st.ListRefusals(ctx, store.RefusalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 2 || !left[0].Minute.Equal(now) || !left[1].Minute.Equal(now.Add(-399*24*time.Hour)) {
		t.Errorf("left %+v; want the rows of now and 399 days ago", left)
	}
}
