package sqlstore

import (
	"bytes"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// TestUpgradeMovesRecordsToBlocks opens a database written by the schema
// before 0009 (a row per record) with more rows than one move takes, and
// checks that every record, its charge and its id come through: listed the
// same, usage_records empty, the ledger sum unchanged, and a stored id not
// stored again. The move is logged, since a large database takes a while.
func TestUpgradeMovesRecordsToBlocks(t *testing.T) {
	ctx := testCtx(t)
	path, db := oldSchema(t, 8)
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	const n = legacyChunk + 900
	if _, err := db.ExecContext(ctx, `INSERT INTO accounts (id, name, created_at, balance, spent) VALUES ('acct_1', 'acme', ?, ?, ?)`,
		toMicros(t0), -n/2*3, n/2*3); err != nil {
		t.Fatal(err)
	}
	want := make([]store.UsageRecord, n)
	for i := range want {
		r := store.UsageRecord{RequestID: fmt.Sprintf("req_%06d", i), Time: t0.Add(time.Duration(i) * time.Second),
			AccountID: "acct_1", KeyID: "key_1", Endpoint: "chat.completions", Model: fmt.Sprintf("m%d", i%3),
			Provider: "openai", UpstreamModel: "u", Stream: i%2 == 0, PromptTokens: int64(i), CompletionTokens: 2,
			CachedTokens: 1, ReasoningTokens: 1, Estimated: i%5 == 0, Latency: time.Duration(i) * time.Millisecond,
			TTFT: time.Millisecond, Status: 200}
		var chargeID any // every other record charged 3
		if i%2 == 1 {
			r.Cost, chargeID = 3, i
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO usage_records (request_id, time, account_id, key_id, endpoint,
			model, provider, upstream_model, stream, prompt_tokens, completion_tokens, latency_us, ttft_us, status,
			error_code, cost, cached_tokens, reasoning_tokens, estimated, charge_id, balance_after)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.RequestID, toMicros(r.Time), r.AccountID, r.KeyID, r.Endpoint, r.Model, r.Provider, r.UpstreamModel,
			r.Stream, r.PromptTokens, r.CompletionTokens, r.Latency.Microseconds(), r.TTFT.Microseconds(), r.Status,
			r.ErrorCode, r.Cost, r.CachedTokens, r.ReasoningTokens, r.Estimated, chargeID, -3*(i+1)/2); err != nil {
			t.Fatal(err)
		}
		want[n-1-i] = r
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	var log bytes.Buffer
	s, err := OpenSQLite(ctx, path, WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if done := fmt.Sprintf("usage records moved into blocks\" records=%d", n); !strings.Contains(log.String(), done) {
		t.Errorf("log does not say %q:\n%s", done, log.String())
	}
	got, err := s.ListUsage(ctx, store.UsageFilter{})
	if err != nil || len(got) != n {
		t.Fatalf("ListUsage: %d records, %v; want %d", len(got), err, n)
	}
	for i := range want {
		if !sameRecord(got[i], want[i]) {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	var left int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM usage_records`).Scan(&left); err != nil || left != 0 {
		t.Errorf("usage_records holds %d rows after the move (%v)", left, err)
	}
	sum, err := s.LedgerSum(ctx, "acct_1")
	if want := money.Micros(-n / 2 * 3); err != nil || sum != want {
		t.Errorf("ledger sum %v (%v), want %v", sum, err, want)
	}
	ledger, err := s.ListLedger(ctx, "acct_1")
	if err != nil || len(ledger) != n/2 || ledger[0].ID != 1 || ledger[0].Ref != "req_000001" || ledger[0].BalanceAfter != -3 {
		t.Fatalf("ledger: %d entries, first %+v, %v", len(ledger), ledger[0], err)
	}
	again := want[0] // replayed by a crash journal, with other values
	again.PromptTokens++
	if err := s.InsertUsage(ctx, []store.UsageRecord{again}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ListUsage(ctx, store.UsageFilter{Limit: 1}); len(got) != 1 || !sameRecord(got[0], want[0]) {
		t.Errorf("a moved record's id was stored again: newest is %+v", got)
	}
}

// sameRecord reports whether a and b are equal, their times as instants.
func sameRecord(a, b store.UsageRecord) bool {
	if !a.Time.Equal(b.Time) {
		return false
	}
	a.Time, b.Time = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

// oldSchema creates a database at the schema of the first upTo migrations,
// as an older release left it, and returns its path and a connection the
// caller fills and closes.
func oldSchema(t *testing.T, upTo int) (string, *sql.DB) {
	t.Helper()
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := loadMigrations(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:upTo] {
		if err := applyMigration(ctx, db, m); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
	}
	return path, db
}
