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

// fakeSource is a store that applies commits the way InsertUsage does.
type fakeSource struct {
	mu      sync.Mutex
	balance map[string]money.Micros
	spent   map[string]money.Micros
	reads   atomic.Int64
}

func (f *fakeSource) AccountByID(_ context.Context, id string) (store.Account, error) {
	f.reads.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.balance[id]
	if !ok {
		return store.Account{}, store.ErrNotFound
	}
	return store.Account{ID: id, Balance: b}, nil
}

func (f *fakeSource) KeyByID(_ context.Context, id string) (store.Key, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return store.Key{ID: id, Spent: f.spent[id]}, nil
}

func (f *fakeSource) commit(acct, key string, cost money.Micros) {
	f.mu.Lock()
	f.balance[acct] -= cost
	f.spent[key] += cost
	f.mu.Unlock()
}

func newFake(balance money.Micros) *fakeSource {
	return &fakeSource{balance: map[string]money.Micros{"a": balance}, spent: map[string]money.Micros{}}
}

func TestReserveSettleRelease(t *testing.T) {
	src := newFake(100)
	r := NewReserver(src, Options{Refresh: time.Hour})
	ctx := context.Background()
	p := Payer{AccountID: "a", KeyID: "k"}
	h1, err := r.Reserve(ctx, p, 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reserve(ctx, p, 41); !errors.Is(err, ErrInsufficient) {
		t.Fatalf("over-reservation: %v", err)
	}
	h2, err := r.Reserve(ctx, p, 40)
	if err != nil {
		t.Fatal(err)
	}
	h1.Settle(25)
	h1.Settle(25) // idempotent
	h1.Release()  // too late: already settled
	h2.Release()
	h2.Release()
	if _, err := r.Reserve(ctx, p, 76); !errors.Is(err, ErrInsufficient) {
		t.Fatalf("settled charge not counted: %v", err)
	}
	src.commit("a", "k", 25)
	r.Committed("a", "k", 25)
	h3, err := r.Reserve(ctx, p, 75)
	if err != nil {
		t.Fatalf("after commit: %v", err)
	}
	h3.Release()
	if got := r.Reserved(); len(got) != 0 {
		t.Errorf("reserved left: %v", got)
	}
	if _, err := r.Reserve(ctx, Payer{AccountID: "nobody"}, 1); err == nil {
		t.Error("unknown account admitted")
	}
}

// Whatever a request's estimated cost, even zero, an account at or below
// zero and a key whose cap is used up are refused.
func TestReserveNeedsSomethingLeft(t *testing.T) {
	tests := []struct {
		name    string
		balance money.Micros
		spent   money.Micros // of a key capped at 100
		amount  money.Micros
		want    error
	}{
		{"zero cost, positive balance", 1, 0, 0, nil},
		{"zero cost, zero balance", 0, 0, 0, ErrInsufficient},
		{"zero cost, negative balance", -245_805, 0, 0, ErrInsufficient},
		{"zero cost, cap used up", 1000, 100, 0, ErrKeyCap},
		{"zero cost, cap overspent", 1000, 150, 0, ErrKeyCap},
		{"one micro left", 1000, 99, 1, nil},
	}
	for _, tt := range tests {
		src := newFake(tt.balance)
		src.spent["k"] = tt.spent
		r := NewReserver(src, Options{Refresh: time.Hour})
		_, err := r.Reserve(context.Background(), Payer{AccountID: "a", KeyID: "k", SpendCap: 100}, tt.amount)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
	}
}

// A charge is never more than the payer can pay, so neither the balance
// nor a key's spend goes below zero; the difference is written off. What
// the payer can pay is charged in full, even beyond the reservation.
func TestSettleCappedAtWhatIsLeft(t *testing.T) {
	src := newFake(500)
	r := NewReserver(src, Options{Refresh: time.Hour})
	p := Payer{AccountID: "a", KeyID: "k"}
	h, err := r.Reserve(context.Background(), p, 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Settle(300); got != 300 {
		t.Errorf("charged %d, want 300: the balance covers it", got)
	}
	h, _ = r.Reserve(context.Background(), p, 100)
	if got := h.Settle(245_805); got != 200 {
		t.Errorf("charged %d, want the 200 left", got)
	}
	if got := h.Settle(1); got != 0 {
		t.Errorf("second settle charged %d", got)
	}
	if _, err := r.Reserve(context.Background(), p, 0); !errors.Is(err, ErrInsufficient) {
		t.Errorf("admitted after the balance was used up: %v", err)
	}
	// A capped key: the cap limits the charge the same way.
	src = newFake(10_000)
	src.spent["k"] = 400
	r = NewReserver(src, Options{Refresh: time.Hour})
	h, err = r.Reserve(context.Background(), Payer{AccountID: "a", KeyID: "k", SpendCap: 500}, 50)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Settle(1000); got != 100 {
		t.Errorf("capped key charged %d, want the 100 left under its cap", got)
	}
}

func TestKeySpendCap(t *testing.T) {
	src := newFake(1000)
	src.spent["k"] = 90
	r := NewReserver(src, Options{Refresh: time.Hour})
	p := Payer{AccountID: "a", KeyID: "k", SpendCap: 100}
	if _, err := r.Reserve(context.Background(), p, 11); !errors.Is(err, ErrKeyCap) {
		t.Fatalf("over the cap: %v", err)
	}
	h, err := r.Reserve(context.Background(), p, 10)
	if err != nil {
		t.Fatal(err)
	}
	h.Settle(10)
	if _, err := r.Reserve(context.Background(), p, 1); !errors.Is(err, ErrKeyCap) {
		t.Fatalf("cap reached: %v", err)
	}
	// Another key of the same account is not capped by this one.
	if _, err := r.Reserve(context.Background(), Payer{AccountID: "a", KeyID: "k2"}, 500); err != nil {
		t.Fatal(err)
	}
}

// A key whose cap is not spent but has less left than a reservation is
// refused with what is left (a *CapShortError, which is an ErrKeyCap and
// worth sizing closer); a spent cap is plain ErrKeyCap.
func TestKeyCapShort(t *testing.T) {
	tests := []struct {
		name   string
		spent  money.Micros // of a key capped at 100
		amount money.Micros
		left   money.Micros // 0: a plain ErrKeyCap
	}{
		{"first call larger than the cap", 0, 150, 100},
		{"part of the cap left", 70, 31, 30},
		{"one micro left", 99, 2, 1},
		{"cap spent", 100, 1, 0},
		{"cap overspent", 120, 1, 0},
	}
	for _, tt := range tests {
		src := newFake(10_000)
		src.spent["k"] = tt.spent
		r := NewReserver(src, Options{Refresh: time.Hour})
		_, err := r.Reserve(context.Background(), Payer{AccountID: "a", KeyID: "k", SpendCap: 100}, tt.amount)
		if !errors.Is(err, ErrKeyCap) {
			t.Errorf("%s: got %v, want ErrKeyCap", tt.name, err)
			continue
		}
		var short *CapShortError
		switch {
		case tt.left == 0 && errors.As(err, &short):
			t.Errorf("%s: a spent cap told %v", tt.name, err)
		case tt.left > 0 && (!errors.As(err, &short) || short.Left != tt.left):
			t.Errorf("%s: got %v, want %v left", tt.name, err, tt.left)
		}
		if got := Tighter(err); got != (tt.left > 0) {
			t.Errorf("%s: Tighter = %v", tt.name, got)
		}
	}
}

// A credit posted by another process shows up after Refresh.
func TestRefreshSeesCredits(t *testing.T) {
	src := newFake(0)
	now := time.Unix(0, 0)
	r := NewReserver(src, Options{Refresh: time.Second, Now: func() time.Time { return now }})
	p := Payer{AccountID: "a"}
	if _, err := r.Reserve(context.Background(), p, 1); !errors.Is(err, ErrInsufficient) {
		t.Fatal(err)
	}
	src.mu.Lock()
	src.balance["a"] = 10
	src.mu.Unlock()
	if _, err := r.Reserve(context.Background(), p, 1); !errors.Is(err, ErrInsufficient) {
		t.Fatal("read again before Refresh")
	}
	now = now.Add(time.Second)
	if _, err := r.Reserve(context.Background(), p, 10); err != nil {
		t.Fatal(err)
	}
	if n := src.reads.Load(); n != 2 {
		t.Errorf("%d reads", n)
	}
}

// Stale makes a credit spendable before Refresh has passed, and only for
// the account named.
func TestStaleSeesCreditsAtOnce(t *testing.T) {
	src := newFake(0)
	src.balance["b"] = 0
	now := time.Unix(0, 0)
	r := NewReserver(src, Options{Refresh: time.Hour, Now: func() time.Time { return now }})
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if _, err := r.Reserve(ctx, Payer{AccountID: id}, 1); !errors.Is(err, ErrInsufficient) {
			t.Fatal(err)
		}
	}
	src.mu.Lock()
	src.balance["a"], src.balance["b"] = 10, 10
	src.mu.Unlock()
	r.Stale("a")
	r.Stale("nobody") // an account never read: nothing to do
	if _, err := r.Reserve(ctx, Payer{AccountID: "a"}, 10); err != nil {
		t.Fatalf("a after Stale: %v", err)
	}
	if _, err := r.Reserve(ctx, Payer{AccountID: "b"}, 1); !errors.Is(err, ErrInsufficient) {
		t.Fatalf("b without Stale: %v, want the cached zero", err)
	}
	if n := src.reads.Load(); n != 3 {
		t.Errorf("%d reads, want 3", n)
	}
}

// 200 concurrent requests on a balance that covers 20 reservations: exactly
// 20 are admitted and settled, the balance never goes below zero.
func TestConcurrentReservations(t *testing.T) {
	const (
		requests = 200
		reserve  = 1000
		actual   = 1000
	)
	src := newFake(20 * reserve)
	r := NewReserver(src, Options{Refresh: time.Millisecond})
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range requests {
		wg.Go(func() {
			h, err := r.Reserve(context.Background(), Payer{AccountID: "a"}, reserve)
			if errors.Is(err, ErrInsufficient) {
				return
			}
			if err != nil {
				t.Error(err)
				return
			}
			ok.Add(1)
			h.Settle(actual)
			src.commit("a", "", actual)
			r.Committed("a", "", actual)
		})
	}
	wg.Wait()
	if ok.Load() != 20 || src.balance["a"] != 0 {
		t.Errorf("%d admitted, balance %v", ok.Load(), src.balance["a"])
	}
}
