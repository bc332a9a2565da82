package billing

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// fakeLeases is one account's balance and the replicas' holds on it,
// granting leases as store.Holds.LeaseHold does.
type fakeLeases struct {
	mu      sync.Mutex
	balance money.Micros
	holds   map[string]money.Micros
	raises  atomic.Int64
}

func (f *fakeLeases) LeaseHold(_ context.Context, inst, acct string, least, want money.Micros, _, _ time.Time) (money.Micros, error) {
	f.raises.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if acct != "acct" {
		return 0, store.ErrNotFound
	}
	free := f.balance
	for i, h := range f.holds {
		if i != inst {
			free -= h
		}
	}
	var g money.Micros
	switch {
	case free >= want:
		g = want
	case free >= least:
		g = least
	default:
		return 0, nil
	}
	f.holds[inst] = g
	return g, nil
}

func (f *fakeLeases) PutHolds(_ context.Context, inst string, amounts map[string]money.Micros, _ time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holds[inst] = amounts["acct"]
	return nil
}

// commit charges the balance, as the usage flush does, then tells r.
func (f *fakeLeases) commit(r *Reserver, cost money.Micros) {
	f.mu.Lock()
	f.balance -= cost
	f.mu.Unlock()
	r.Committed("acct", "", cost)
}

func newLeased(f *fakeLeases, inst string) *Reserver {
	return NewReserver(&fakeSource{}, Options{Lease: &Lease{Store: f, Instance: inst, Stale: 5 * time.Second}})
}

// TestLeasesNeverOverspend: three replicas reserving and settling one
// account's balance at once never charge more than it holds, and every
// request that fit was admitted up to the last cent.
func TestLeasesNeverOverspend(t *testing.T) {
	f := &fakeLeases{balance: 1000, holds: map[string]money.Micros{}}
	rs := []*Reserver{newLeased(f, "a"), newLeased(f, "b"), newLeased(f, "c")}
	var charged atomic.Int64
	var wg sync.WaitGroup
	for i := range 300 {
		r := rs[i%len(rs)]
		wg.Go(func() {
			h, err := r.Reserve(context.Background(), Payer{AccountID: "acct"}, 7)
			if errors.Is(err, ErrInsufficient) {
				return
			}
			if err != nil {
				t.Error(err)
				return
			}
			c := h.Settle(5)
			charged.Add(int64(c))
			f.commit(r, c)
			if i%10 == 0 {
				_ = r.PublishLeases(context.Background())
			}
		})
	}
	wg.Wait()
	if c := charged.Load(); c > 1000 {
		t.Fatalf("charged %d of a balance of 1000", c)
	}
	f.mu.Lock()
	bal := f.balance
	f.mu.Unlock()
	if bal < 0 {
		t.Errorf("balance %d after the run", bal)
	}
	// Once every lease is published back, what is left is usable whole:
	// a replica can reserve all of it but one cent less than need.
	for _, r := range rs {
		if err := r.PublishLeases(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if bal >= 7 {
		h, err := rs[0].Reserve(context.Background(), Payer{AccountID: "acct"}, bal)
		if err != nil {
			t.Fatalf("reserving the %d left after publishing: %v", bal, err)
		}
		h.Release()
	}
}

// TestLeaseHeadroomGoesBack: a replica's headroom keeps the next requests
// off the store, and PublishLeases gives it back so another replica can
// use the whole balance.
func TestLeaseHeadroomGoesBack(t *testing.T) {
	f := &fakeLeases{balance: 100, holds: map[string]money.Micros{}}
	a, b := newLeased(f, "a"), newLeased(f, "b")
	ctx := context.Background()
	h1, err := a.Reserve(ctx, Payer{AccountID: "acct"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := a.Reserve(ctx, Payer{AccountID: "acct"}, 10) // inside the headroom
	if err != nil {
		t.Fatal(err)
	}
	if n := f.raises.Load(); n != 1 {
		t.Errorf("%d raises for two requests, want 1 (headroom)", n)
	}
	if _, err := b.Reserve(ctx, Payer{AccountID: "acct"}, 81); !errors.Is(err, ErrInsufficient) {
		t.Fatalf("b reserved 81 while a holds 20 of 100: %v", err)
	}
	h1.Release()
	h2.Release()
	if err := a.PublishLeases(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := b.Reserve(ctx, Payer{AccountID: "acct"}, 100)
	if err != nil {
		t.Fatalf("b could not reserve the whole balance once a published: %v", err)
	}
	if _, err := a.Reserve(ctx, Payer{AccountID: "acct"}, 1); !errors.Is(err, ErrInsufficient) {
		t.Errorf("a reserved a cent while b holds all 100: %v", err)
	}
	h.Release()
	// A credit is usable at once: the raise reads the balance.
	f.mu.Lock()
	f.balance += 50
	f.mu.Unlock()
	if _, err := a.Reserve(ctx, Payer{AccountID: "acct"}, 50); err != nil {
		t.Errorf("a credit of 50 was not usable: %v", err)
	}
	if _, err := a.Reserve(ctx, Payer{AccountID: "missing"}, 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown account: %v", err)
	}
}
