package storetest

import (
	"testing"

	"github.com/modelgate/modelgate/internal/store"
)

// testPing: an open store answers; a closed one says it cannot (readiness
// depends on it).
func testPing(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStore(t)
	if err := s.Ping(ctx(t)); err != nil {
		t.Fatalf("Ping on an open store: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Ping(ctx(t)); err == nil {
		t.Fatal("Ping on a closed store answered nil")
	}
}
