package sqlstore

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"

	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/store/pgtest"
	"github.com/modelgate/modelgate/internal/store/storetest"
)

// openPG opens a store on a fresh PostgreSQL schema, closed when t ends.
func openPG(t *testing.T) *Store {
	t.Helper()
	s, err := OpenPostgres(testCtx(t), pgtest.DSN(t))
	if err != nil {
		t.Fatalf("OpenPostgres: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformancePostgres(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openPG(t) })
}

// TestPostgresReplicas opens three stores on one empty database at once,
// as replicas starting together do (each migration must run once), then
// charges one account and credits it through all three concurrently: the
// write lock keeps the ledger's ids in order and each balance_after the
// running sum, whichever replica wrote the entry.
func TestPostgresReplicas(t *testing.T) {
	dsn := pgtest.DSN(t)
	stores := make([]*Store, 3)
	var wg sync.WaitGroup
	errs := make([]error, len(stores))
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = OpenPostgres(testCtx(t), dsn) })
	}
	wg.Wait()
	for i, s := range stores {
		if errs[i] != nil {
			t.Fatalf("replica %d: OpenPostgres: %v", i, errs[i])
		}
		t.Cleanup(func() { _ = s.Close() })
	}
	if v, err := stores[0].SchemaVersion(testCtx(t)); err != nil || v < pgFirstMigration {
		t.Fatalf("SchemaVersion = %d, %v", v, err)
	}
	a := store.Account{ID: "acct_1", Name: "acme", CreatedAt: time.Unix(0, 0).UTC()}
	if err := stores[0].CreateAccount(testCtx(t), a); err != nil {
		t.Fatal(err)
	}
	const n = 60
	for i := range n {
		s := stores[i%len(stores)]
		wg.Go(func() {
			if i%3 == 0 {
				if _, err := s.Post(testCtx(t), store.LedgerEntry{AccountID: a.ID, Kind: store.KindTopUp, Amount: 5, Time: time.Now()}); err != nil {
					t.Error(err)
				}
				return
			}
			r := store.UsageRecord{RequestID: fmt.Sprintf("req_%d", i), Time: time.Now(), AccountID: a.ID, Cost: 1, Status: 200}
			if err := s.InsertUsage(testCtx(t), []store.UsageRecord{r}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	entries, err := stores[1].ListLedger(testCtx(t), a.ID)
	if err != nil || len(entries) != n {
		t.Fatalf("ListLedger: %d entries, %v; want %d", len(entries), err, n)
	}
	running := storetest.CheckRunningSum(t, entries)
	got, err := stores[2].AccountByID(testCtx(t), a.ID)
	if want := money.Micros(n/3*5 - (n - n/3)); err != nil || got.Balance != want || running != want {
		t.Errorf("balance %v (ledger %v), %v; want %v", got.Balance, running, err, want)
	}
}
