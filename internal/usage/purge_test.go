package usage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/store/sqlstore"
)

const day = 24 * time.Hour

// TestPurgeRetention runs the purger against real SQLite with an injected
// clock: records older than the retention go, in batches, the rest stay,
// and the ledger and balance do not move.
func TestPurgeRetention(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "modelgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	acct := store.Account{ID: "acct_1", Name: "acme", CreatedAt: now.Add(-200 * day)}
	if err := st.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Post(ctx, store.LedgerEntry{AccountID: acct.ID, Kind: store.KindTopUp, Amount: money.Unit, Time: acct.CreatedAt}); err != nil {
		t.Fatal(err)
	}
	ages := map[string]time.Duration{
		"100d": 100 * day, "91d": 91 * day, "90d+1s": 90*day + time.Second,
		"90d": 90 * day, "89d": 89 * day, "1h": time.Hour,
	}
	var recs []store.UsageRecord
	for id, age := range ages {
		recs = append(recs, store.UsageRecord{RequestID: id, Time: now.Add(-age), AccountID: acct.ID, Cost: 100, Status: 200})
	}
	// Enough old records to take several batches.
	for i := range 25 {
		recs = append(recs, store.UsageRecord{RequestID: fmt.Sprintf("old-%02d", i), Time: now.Add(-120*day - time.Duration(i)*time.Minute), Status: 401})
	}
	if err := st.InsertUsage(ctx, recs); err != nil {
		t.Fatal(err)
	}
	before, err := st.ListLedger(ctx, acct.ID)
	if err != nil {
		t.Fatal(err)
	}

	clock := now
	counting := &countingStore{Purgeable: st}
	p := &Purger{Store: counting, Retention: 90 * day, Batch: 4, Pause: time.Millisecond, Now: func() time.Time { return clock }}
	n, err := p.Purge(ctx)
	if err != nil || n != 28 {
		t.Fatalf("Purge = %d, %v; want 28", n, err)
	}
	if counting.calls != 8 { // 7 full batches of 4, then one that finds nothing
		t.Errorf("%d statements, want 8", counting.calls)
	}
	left := ids(t, st)
	if fmt.Sprint(left) != "[1h 89d 90d]" {
		t.Errorf("left %v, want [1h 89d 90d] (the cut-off itself stays)", left)
	}

	// Two days later the next two have aged out.
	clock = now.Add(2 * day)
	if n, err := p.Purge(ctx); err != nil || n != 2 {
		t.Fatalf("second Purge = %d, %v; want 2", n, err)
	}
	if left := ids(t, st); fmt.Sprint(left) != "[1h]" {
		t.Errorf("left %v, want [1h]", left)
	}

	// Money is where it was: every charge stays in the ledger and the balance.
	after, err := st.ListLedger(ctx, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after) != fmt.Sprint(before) || len(after) != 7 {
		t.Errorf("ledger changed by the purge:\n%v\n%v", before, after)
	}
	a, err := st.AccountByID(ctx, acct.ID)
	if err != nil || a.Balance != money.Unit-600 || a.Spent != 600 {
		t.Errorf("account %+v, %v", a, err)
	}

	// No retention: nothing is purged, ever.
	clock = now.Add(10000 * day)
	keep := &Purger{Store: st, Now: func() time.Time { return clock }}
	if n, err := keep.Purge(ctx); n != 0 || err != nil {
		t.Errorf("Purge without retention = %d, %v", n, err)
	}
	if len(ids(t, st)) != 1 {
		t.Error("a purger without retention deleted records")
	}
}

func ids(t *testing.T, st store.Store) []string {
	t.Helper()
	recs, err := st.ListUsage(context.Background(), store.UsageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.RequestID
	}
	return out
}

// countingStore counts PurgeUsage calls.
type countingStore struct {
	Purgeable
	calls int
}

func (c *countingStore) PurgeUsage(ctx context.Context, before time.Time, limit int) (int, error) {
	c.calls++
	return c.Purgeable.PurgeUsage(ctx, before, limit)
}

// fakePurge holds old records by count and can fail.
type fakePurge struct {
	mu      sync.Mutex
	old     int
	calls   int
	befores []time.Time
	fail    error
}

func (f *fakePurge) PurgeUsage(_ context.Context, before time.Time, limit int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.befores = append(f.befores, before)
	if f.fail != nil {
		return 0, f.fail
	}
	n := min(f.old, limit)
	f.old -= n
	return n, nil
}

func (f *fakePurge) state() (old, calls int, fail error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.old, f.calls, f.fail
}

// Run passes at once and then every Every, survives a failing store (it
// logs and tries at the next pass), and stops with ctx.
func TestPurgerRun(t *testing.T) {
	f := &fakePurge{old: 2500, fail: errors.New("disk on fire")}
	log, logs := newLogger()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	p := &Purger{Store: f, Retention: 7 * day, Every: 5 * time.Millisecond, Pause: time.Millisecond,
		Now: func() time.Time { return now }, Log: log}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	deadline := time.Now().Add(hangGuard)
	for {
		if _, calls, _ := f.state(); calls >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Run made no second pass")
		}
		time.Sleep(time.Millisecond)
	}
	f.mu.Lock()
	f.fail = nil
	f.mu.Unlock()
	for {
		if old, _, _ := f.state(); old == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Run never purged once the store recovered")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	f.mu.Lock()
	for _, b := range f.befores {
		if !b.Equal(now.Add(-7 * day)) {
			t.Errorf("purged before %v, want %v", b, now.Add(-7*day))
		}
	}
	f.mu.Unlock()
	var warned, purged bool
	for _, e := range logs.entries(t) {
		warned = warned || (e.Level == "WARN" && e.Msg == "usage: purging old records failed; trying again at the next pass")
		purged = purged || (e.Level == "INFO" && e.Msg == "usage: purged records older than the retention")
	}
	if !warned || !purged {
		t.Errorf("logged a failure %v, a purge %v; want both", warned, purged)
	}

	// Without retention Run only waits.
	f = &fakePurge{old: 10}
	ctx, cancel = context.WithCancel(t.Context())
	go func() { done <- (&Purger{Store: f, Every: time.Millisecond}).Run(ctx) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	<-done
	if _, calls, _ := f.state(); calls != 0 {
		t.Errorf("a purger without retention called the store %d times", calls)
	}
}
