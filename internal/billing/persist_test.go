package billing

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// heldSource reports what open tasks hold with the balance, as the store
// does once a task is stored.
type heldSource struct {
	balance, held, spent, keyHeld money.Micros
}

func (s *heldSource) AccountByID(context.Context, string) (store.Account, error) {
	return store.Account{Balance: s.balance, Held: s.held}, nil
}

func (s *heldSource) KeyByID(context.Context, string) (store.Key, error) {
	return store.Key{Spent: s.spent, Held: s.keyHeld}, nil
}

// TestPersistedHoldCountsOnce shows a reservation handed to the store
// (an open video task) is counted exactly once: before the next read from
// the meters, after it from the store's Held; never twice, never zero.
func TestPersistedHoldCountsOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(0, 0)
	src := &heldSource{balance: 100}
	r := NewReserver(src, Options{Refresh: time.Second, Now: func() time.Time { return now }})
	p := Payer{AccountID: "a", KeyID: "k", SpendCap: 100}
	h, err := r.Reserve(ctx, p, 70)
	if err != nil {
		t.Fatal(err)
	}
	h.Persisted()
	src.held, src.keyHeld = 70, 70 // the task row is stored with the same amount
	h.Release()                    // ended: must not give the amount back
	h.Persisted()                  // twice: nothing more
	for _, step := range []struct {
		name    string
		advance time.Duration
	}{{"from the meters", 0}, {"after a fresh read", 2 * time.Second}} {
		now = now.Add(step.advance)
		if _, err := r.Reserve(ctx, p, 31); !errors.Is(err, ErrInsufficient) {
			t.Errorf("%s: reserving 31 of the 30 left: err %v, want ErrInsufficient", step.name, err)
		}
		h2, err := r.Reserve(ctx, p, 30)
		if err != nil {
			t.Fatalf("%s: reserving the 30 left: %v", step.name, err)
		}
		h2.Release()
	}
	// The task settles in the store: 50 charged, the hold gone.
	src.balance, src.held, src.spent, src.keyHeld = 50, 0, 50, 0
	now = now.Add(2 * time.Second)
	h3, err := r.Reserve(ctx, p, 50)
	if err != nil {
		t.Fatalf("after settlement 50 is left: %v", err)
	}
	h3.Release()
	if _, err := r.Reserve(ctx, p, 51); err == nil {
		t.Error("reserved 51 with 50 left")
	}
}
