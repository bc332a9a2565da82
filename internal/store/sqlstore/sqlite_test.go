package sqlstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/store/storetest"
)

// testCtx bounds a test with a generous deadline that only guards hangs.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// openAt opens the database at path and closes it when the test ends.
func openAt(t *testing.T, path string) *Store {
	t.Helper()
	s, err := OpenSQLite(testCtx(t), path)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openAt(t, filepath.Join(t.TempDir(), "modelgate.db"))
	})
}

func TestOpenCreatesPrivateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	openAt(t, filepath.Join(dir, "modelgate.db"))
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("directory mode %v, want no group/other access", perm)
	}
}

func TestOpenRejectsBadPaths(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "x?mode=ro")} {
		if s, err := OpenSQLite(testCtx(t), path); err == nil {
			_ = s.Close()
			t.Errorf("Open(%q) succeeded, want an error", path)
		}
	}
}

// TestPragmasOnEveryConnection checks that each pooled connection, not just
// the first, runs with the configured pragmas.
func TestPragmasOnEveryConnection(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "modelgate.db"))
	ctx := testCtx(t)
	want := map[string]string{
		"journal_mode": "wal",
		"busy_timeout": fmt.Sprint(busyTimeout.Milliseconds()),
		"synchronous":  "1", // NORMAL
		"foreign_keys": "1",
	}
	// Hold every connection of the pool at once so each is a distinct one.
	for i := range maxOpenConns {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatalf("conn %d: %v", i, err)
		}
		defer conn.Close()
		for pragma, v := range want {
			var got string
			if err := conn.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
				t.Fatalf("conn %d: PRAGMA %s: %v", i, pragma, err)
			}
			if got != v {
				t.Errorf("conn %d: PRAGMA %s = %q, want %q", i, pragma, got, v)
			}
		}
	}
}

func TestMigrationsAreContiguous(t *testing.T) {
	ms, err := loadMigrations(false)
	if err != nil {
		t.Fatalf("loadMigrations: %v", err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, m := range ms {
		if m.version != i+1 {
			t.Errorf("migration %s has version %d, want %d", m.name, m.version, i+1)
		}
	}
}

// TestReopenKeepsData checks that data survives a close and that running the
// migrations again is a no-op.
func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "modelgate.db")
	ctx := testCtx(t)
	a := store.Account{ID: "acct_1", Name: "alice", CreatedAt: time.UnixMicro(1_700_000_000_123_456)}

	s, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := s.CreateAccount(ctx, a); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	for i := range 2 {
		s := openAt(t, path)
		got, err := s.AccountByName(ctx, "alice")
		if err != nil {
			t.Fatalf("reopen %d: AccountByName: %v", i, err)
		}
		if got.ID != a.ID || !got.CreatedAt.Equal(a.CreatedAt) {
			t.Fatalf("reopen %d: got %+v, want %+v", i, got, a)
		}
		if got.CreatedAt.Location() != time.UTC {
			t.Errorf("reopen %d: CreatedAt in %v, want UTC", i, got.CreatedAt.Location())
		}
		ms, err := loadMigrations(false)
		if err != nil {
			t.Fatalf("loadMigrations: %v", err)
		}
		var rows, maxVersion int
		if err := s.db.QueryRowContext(ctx,
			`SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&rows, &maxVersion); err != nil {
			t.Fatalf("reopen %d: read schema_migrations: %v", i, err)
		}
		if rows != len(ms) || maxVersion != len(ms) {
			t.Errorf("reopen %d: schema_migrations has %d rows up to %d, want %d", i, rows, maxVersion, len(ms))
		}
	}
}

// TestTwoHandlesSameFile stands in for two processes (server and CLI) using
// the same file: each sees the other's writes, and concurrent writers wait
// for each other instead of failing.
func TestTwoHandlesSameFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "modelgate.db")
	s1, s2 := openAt(t, path), openAt(t, path)
	ctx := testCtx(t)

	a := store.Account{ID: "acct_1", Name: "alice", CreatedAt: time.Now()}
	if err := s1.CreateAccount(ctx, a); err != nil {
		t.Fatalf("s1 CreateAccount: %v", err)
	}
	if _, err := s2.AccountByName(ctx, "alice"); err != nil {
		t.Fatalf("s2 does not see s1's account: %v", err)
	}
	hash := sha256.Sum256([]byte("secret"))
	k := store.Key{ID: "key_1", AccountID: a.ID, Group: "default", Prefix: "mg-secr", Hash: hash[:], CreatedAt: time.Now()}
	if err := s2.CreateKey(ctx, k); err != nil {
		t.Fatalf("s2 CreateKey: %v", err)
	}
	got, err := s1.KeyByHash(ctx, hash[:])
	if err != nil {
		t.Fatalf("s1 does not see s2's key: %v", err)
	}
	if got.AccountName != "alice" {
		t.Errorf("s1 KeyByHash AccountName = %q, want alice", got.AccountName)
	}
	if _, err := s2.RevokeKey(ctx, "mg-secr", time.Now()); err != nil {
		t.Fatalf("s2 RevokeKey: %v", err)
	}
	if got, err := s1.KeyByHash(ctx, hash[:]); err != nil || !got.Revoked() {
		t.Fatalf("s1 does not see s2's revocation: %+v, %v", got, err)
	}

	// Concurrent batches from both handles all land.
	const writers, batches, batchSize = 3, 5, 50
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers*batches)
	for h, s := range []*Store{s1, s2} {
		for w := range writers {
			wg.Go(func() {
				for b := range batches {
					recs := make([]store.UsageRecord, batchSize)
					for i := range recs {
						recs[i] = store.UsageRecord{
							RequestID: fmt.Sprintf("req-%d-%d-%d-%d", h, w, b, i),
							Time:      time.Now(),
							AccountID: a.ID,
						}
					}
					if err := s.InsertUsage(ctx, recs); err != nil {
						errs <- fmt.Errorf("handle %d writer %d batch %d: %w", h, w, b, err)
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for h, s := range []*Store{s1, s2} {
		recs, err := s.ListUsage(ctx, store.UsageFilter{AccountID: a.ID})
		if err != nil {
			t.Fatalf("handle %d ListUsage: %v", h, err)
		}
		if want := 2 * writers * batches * batchSize; len(recs) != want {
			t.Errorf("handle %d sees %d records, want %d", h, len(recs), want)
		}
	}
}

// TestBootstrapAcrossHandles races Bootstrap through several handles on one
// file, as several processes starting at once would: exactly one wins.
func TestBootstrapAcrossHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "modelgate.db")
	const handles, perHandle = 3, 4
	stores := make([]*Store, handles)
	for i := range stores {
		stores[i] = openAt(t, path)
	}
	ctx := testCtx(t)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	start := make(chan struct{})
	for h, s := range stores {
		for g := range perHandle {
			wg.Go(func() {
				name := fmt.Sprintf("admin-%d-%d", h, g)
				hash := sha256.Sum256([]byte(name))
				a := store.Account{ID: "acct_" + name, Name: name, CreatedAt: time.Now()}
				k := store.Key{ID: "key_" + name, AccountID: a.ID, Group: "default",
					Prefix: "mg-" + name, Hash: hash[:], CreatedAt: time.Now()}
				<-start
				did, err := s.Bootstrap(ctx, a, k, 0)
				if err != nil {
					t.Errorf("Bootstrap %s: %v", name, err)
				}
				if did {
					mu.Lock()
					wins++
					mu.Unlock()
				}
			})
		}
	}
	close(start)
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d Bootstrap calls returned true, want exactly 1", wins)
	}
	accounts, err := stores[0].ListAccounts(ctx)
	if err != nil {
		t.Fatalf("ListAccounts: %v", err)
	}
	if len(accounts) != 1 {
		t.Fatalf("%d accounts after concurrent Bootstrap, want 1", len(accounts))
	}
}

func TestClosedStoreReturnsErrors(t *testing.T) {
	s, err := OpenSQLite(testCtx(t), filepath.Join(t.TempDir(), "modelgate.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_, err = s.AccountByName(testCtx(t), "alice")
	if err == nil || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("AccountByName on closed store: %v, want a non-sentinel error", err)
	}
}

func BenchmarkInsertUsage(b *testing.B) {
	s, err := OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "modelgate.db"))
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	defer s.Close()
	const batch = 256
	recs := make([]store.UsageRecord, batch)
	n := 0
	for b.Loop() {
		for i := range recs {
			n++
			recs[i] = store.UsageRecord{
				RequestID: benchID(n), Time: time.Now(), AccountID: "acct_1",
				Model: "gpt-4o-mini", PromptTokens: 100, CompletionTokens: 200, Status: 200,
			}
		}
		if err := s.InsertUsage(context.Background(), recs); err != nil {
			b.Fatalf("InsertUsage: %v", err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/record")
}

// benchID makes time-ordered request ids like the server's (a counter
// followed by random bits); BENCH_RANDOM=1 makes fully random ones, which
// cost about 2.5× more to insert.
func benchID(n int) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	if os.Getenv("BENCH_RANDOM") != "" {
		return fmt.Sprintf("req_%012x%x", n*7919%1000003, b)
	}
	return fmt.Sprintf("req_%012x%x", n, b)
}
