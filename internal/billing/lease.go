package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// Leaser is the store's side of balances shared by replicas (store.Store
// has it): each replica's hold on an account, raised only as far as the
// balance covers it less every other replica's (LeaseHold), and rewritten
// as a whole every second (PutHolds), which keeps it fresh.
type Leaser interface {
	LeaseHold(ctx context.Context, instance, accountID string, least, want money.Micros, at, fresh time.Time) (money.Micros, error)
	PutHolds(ctx context.Context, instance string, amounts map[string]money.Micros, at time.Time) error
}

// Lease shares account balances between replicas of one database. A
// replica reserves only within its lease, its hold in the store, which it
// raises when a request does not fit (one write transaction that checks
// the balance less every other replica's fresh hold) and lowers back to
// what it has in use every second (PublishLeases). So two replicas never
// spend the same cent: every reservation is inside a hold the store
// granted against the others'.
//
// A raise asks for headroom beyond the request (what is in use, doubling
// while raises keep coming), granted only when the balance covers it all;
// otherwise the lease grows by the request alone. Headroom left unused goes
// back within a second, so while an account is nearly spent a replica holds
// no more than its requests in flight; with plenty left, what another
// replica cannot use for up to a second is at most that headroom.
type Lease struct {
	Store    Leaser
	Instance string        // this replica's name in the holds table
	Stale    time.Duration // others' holds not rewritten for this long are ignored (their replica stopped)
}

// raise makes sure the account's lease has room for need beyond what is in
// use, taking more from the store when it has not; ErrInsufficient when
// the balance, less the other replicas' leases, cannot cover it.
func (r *Reserver) raise(ctx context.Context, accountID string, need money.Micros) error {
	r.leaseMu.Lock()
	defer r.leaseMu.Unlock()
	r.mu.Lock()
	a := r.leased(accountID)
	if a.available() >= need { // raised meanwhile
		r.mu.Unlock()
		return nil
	}
	inUse := a.pending + a.reserved
	least := inUse + need
	extra := max(need, inUse, 2*a.extra)
	gone := a.gone
	r.mu.Unlock()

	now := r.now()
	got, err := r.lease.Store.LeaseHold(ctx, r.lease.Instance, accountID, least, least+extra, now, now.Add(-r.lease.Stale))
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("billing: read balance: %w", err)
	}
	if err != nil {
		return fmt.Errorf("billing: lease balance: %w", err)
	}
	if got == 0 {
		return ErrInsufficient
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// What was committed or persisted since is in the hold but gone from
	// the balance the store checked it against.
	a.stored = got - (a.gone - gone)
	a.extra = 0
	if got > least {
		a.extra = extra
	}
	a.gen++
	return nil
}

// leased returns the account's meter, made anew (an empty lease) when
// PublishLeases dropped it; r.mu held.
func (r *Reserver) leased(accountID string) *meter {
	a := r.accts[accountID]
	if a == nil {
		a = &meter{}
		r.accts[accountID] = a
	}
	return a
}

// PublishLeases lowers every lease to what is in use (the headroom goes
// back to the other replicas), forgets idle accounts, and writes the
// leases to the store stamped now, so the others keep counting them. Call
// it every second or so, well within Lease.Stale. When the write fails the
// store keeps the previous, larger, holds: the local leases are already
// lowered, so this replica takes nothing it has not been granted.
func (r *Reserver) PublishLeases(ctx context.Context) error {
	r.leaseMu.Lock()
	defer r.leaseMu.Unlock()
	r.mu.Lock()
	amounts := make(map[string]money.Micros)
	for id, m := range r.accts {
		inUse := m.pending + m.reserved
		if m.stored > inUse {
			m.stored = inUse
			m.gen++
		}
		if inUse == 0 {
			m.extra = 0
			if m.stored <= 0 {
				delete(r.accts, id) // nothing held, nothing pending: no Hold refers to it
				continue
			}
		}
		amounts[id] = max(m.stored, inUse)
	}
	r.mu.Unlock()
	if err := r.lease.Store.PutHolds(ctx, r.lease.Instance, amounts, r.now()); err != nil {
		return fmt.Errorf("billing: publish leases: %w", err)
	}
	return nil
}

// Leased reports whether balances are shared through leases.
func (r *Reserver) Leased() bool { return r.lease != nil }
