// Package storetest is the conformance suite every store.Store backend must
// pass, so SQLite today and PostgreSQL later behave identically for callers.
//
// Backends run it from their own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openFresh(t) })
//	}
//
// newStore must return an empty, migrated store and arrange (t.Cleanup) for
// it to be closed. The suite only uses the store.Store interface. Times and
// durations are compared at microsecond precision, the finest both SQLite
// (Unix microseconds) and PostgreSQL (timestamptz) keep; fixtures use values
// that are already whole microseconds.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// Run runs the whole suite; each subtest gets its own store from newStore.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	t.Run("Accounts", func(t *testing.T) { testAccounts(t, newStore) })
	t.Run("Keys", func(t *testing.T) { testKeys(t, newStore) })
	t.Run("RevokeKey", func(t *testing.T) { testRevokeKey(t, newStore) })
	t.Run("KeyLimits", func(t *testing.T) { testKeyLimits(t, newStore) })
	t.Run("KeysVersion", func(t *testing.T) { testKeysVersion(t, newStore) })
	t.Run("Usage", func(t *testing.T) { testUsage(t, newStore) })
	t.Run("PurgeUsage", func(t *testing.T) { testPurgeUsage(t, newStore) })
	t.Run("Bootstrap", func(t *testing.T) { testBootstrap(t, newStore) })
	t.Run("Ledger", func(t *testing.T) { testLedger(t, newStore) })
	t.Run("LedgerPage", func(t *testing.T) { testLedgerPage(t, newStore) })
	t.Run("UpdateKey", func(t *testing.T) { testUpdateKey(t, newStore) })
	t.Run("SearchAccounts", func(t *testing.T) { testSearchAccounts(t, newStore) })
	t.Run("OperatorErrors", func(t *testing.T) { testOperatorErrors(t, newStore) })
	t.Run("Holds", func(t *testing.T) { testHolds(t, newStore) })
	t.Run("LeaseHold", func(t *testing.T) { testLeaseHold(t, newStore) })
	t.Run("Responses", func(t *testing.T) { testResponses(t, newStore) })
	t.Run("ResponseSizes", func(t *testing.T) { testResponseSizes(t, newStore) })
	t.Run("Tasks", func(t *testing.T) { testTasks(t, newStore) })
	t.Run("ResponseTasks", func(t *testing.T) { testResponseTasks(t, newStore) })
	t.Run("Console", func(t *testing.T) { testConsole(t, newStore) })
	t.Run("AccountState", func(t *testing.T) { testAccountState(t, newStore) })
	t.Run("KeyLastUsed", func(t *testing.T) { testKeyLastUsed(t, newStore) })
	t.Run("UsageFilters", func(t *testing.T) { testUsageFilters(t, newStore) })
	t.Run("UsageAttempts", func(t *testing.T) { testUsageAttempts(t, newStore) })
	t.Run("UsageStats", func(t *testing.T) { testUsageStats(t, newStore) })
	t.Run("UsageRollups", func(t *testing.T) { testUsageRollups(t, newStore) })
	t.Run("LoginLinks", func(t *testing.T) { testLoginLinks(t, newStore) })
	t.Run("Reveals", func(t *testing.T) { testReveals(t, newStore) })
	t.Run("Refusals", func(t *testing.T) { testRefusals(t, newStore) })
	t.Run("Ping", func(t *testing.T) { testPing(t, newStore) })
}

// at returns the fixtures' reference time (UTC, whole microseconds) shifted by d.
func at(d time.Duration) time.Time {
	return time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC).Add(d)
}

// ctx returns a context that ends with the test, with a generous deadline
// that only guards against hangs.
func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// randHex returns n random bytes as hex.
func randHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("random: %v", err)
	}
	return hex.EncodeToString(b)
}

// newAccount returns an account that is not stored yet.
func newAccount(t *testing.T, name string, created time.Time) store.Account {
	t.Helper()
	return store.Account{ID: "acct_" + randHex(t, 8), Name: name, CreatedAt: created}
}

// newKey returns a key of a with the given prefix and a random secret hash.
func newKey(t *testing.T, a store.Account, prefix string, created time.Time) store.Key {
	t.Helper()
	sum := sha256.Sum256([]byte(prefix + randHex(t, 16)))
	return store.Key{
		ID:          "key_" + randHex(t, 8),
		AccountID:   a.ID,
		AccountName: a.Name,
		Group:       "default",
		Name:        "label " + prefix,
		Prefix:      prefix,
		Hash:        sum[:],
		CreatedAt:   created,
	}
}

// mustCreateAccount stores a or fails the test.
func mustCreateAccount(t *testing.T, s store.Store, a store.Account) {
	t.Helper()
	if err := s.CreateAccount(ctx(t), a); err != nil {
		t.Fatalf("CreateAccount(%q): %v", a.Name, err)
	}
}

// mustCreateKey stores k or fails the test.
func mustCreateKey(t *testing.T, s store.Store, k store.Key) {
	t.Helper()
	if err := s.CreateKey(ctx(t), k); err != nil {
		t.Fatalf("CreateKey(%q): %v", k.Prefix, err)
	}
}

// utc normalises a time so equal instants compare equal with reflect.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// normAccount, normKey and normUsage normalise times for comparison.
func normAccount(a store.Account) store.Account {
	a.CreatedAt = utc(a.CreatedAt)
	a.DisabledAt = utc(a.DisabledAt)
	return a
}

func normKey(k store.Key) store.Key {
	k.CreatedAt = utc(k.CreatedAt)
	k.RevokedAt = utc(k.RevokedAt)
	k.DisabledAt = utc(k.DisabledAt)
	k.ExpiresAt = utc(k.ExpiresAt)
	k.LastUsedAt = utc(k.LastUsedAt)
	if len(k.Hash) == 0 {
		k.Hash = nil
	}
	return k
}

func normUsage(u store.UsageRecord) store.UsageRecord {
	u.Time = utc(u.Time)
	return u
}

// assertEqual fails the test unless got equals want after normalisation.
func assertEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %+v\n want %+v", what, got, want)
	}
}

// assertKey compares keys field by field after normalisation.
func assertKey(t *testing.T, what string, got, want store.Key) {
	t.Helper()
	assertEqual(t, what, normKey(got), normKey(want))
}
