package storetest

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

// testReveals: a reveal is taken once, never after it expired, and an
// expired one is gone after the next put.
func testReveals(t *testing.T, newStore func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := newStore(t)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	exp := now.Add(2 * time.Minute)
	payload := bytes.Repeat([]byte{0xAB, 0x01}, 20_000) // larger than a cookie

	if err := s.PutReveal(ctx, "rv_1", payload, now, exp); err != nil {
		t.Fatal(err)
	}
	if err := s.PutReveal(ctx, "rv_1", []byte("x"), now, exp); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a taken id: %v, want ErrConflict", err)
	}
	if _, err := s.TakeReveal(ctx, "rv_unknown", now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}

	// Two racing takes: one gets the payload, the other ErrNotFound.
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		got   int
		other []error
	)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := s.TakeReveal(ctx, "rv_1", now.Add(time.Minute))
			mu.Lock()
			defer mu.Unlock()
			if err == nil && bytes.Equal(b, payload) {
				got++
			} else {
				other = append(other, err)
			}
		}()
	}
	wg.Wait()
	if got != 1 || len(other) != 1 || !errors.Is(other[0], store.ErrNotFound) {
		t.Errorf("racing takes: %d got the payload, others %v", got, other)
	}

	// Expired: not returned (and deleted).
	if err := s.PutReveal(ctx, "rv_2", []byte("late"), now, exp); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TakeReveal(ctx, "rv_2", exp); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("taken at its expiry: %v, want ErrNotFound", err)
	}
	if _, err := s.TakeReveal(ctx, "rv_2", now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an expired reveal came back: %v", err)
	}

	// A put deletes what expired before it.
	if err := s.PutReveal(ctx, "rv_3", []byte("old"), now, exp); err != nil {
		t.Fatal(err)
	}
	if err := s.PutReveal(ctx, "rv_4", []byte("new"), exp.Add(time.Second), exp.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TakeReveal(ctx, "rv_3", now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a reveal expired before a later put survived it: %v", err)
	}
	if b, err := s.TakeReveal(ctx, "rv_4", exp.Add(2*time.Second)); err != nil || string(b) != "new" {
		t.Errorf("rv_4: %q, %v", b, err)
	}
}
