package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/store"
)

// Errors Reserve returns; the API maps both to 429 insufficient_quota.
var (
	ErrInsufficient = errors.New("billing: balance too low for this request")
	ErrKeyCap       = errors.New("billing: the key's spend cap is reached")
)

// CapShortError is Reserve's refusal of a capped key whose cap is not
// reached but has less left than the request's reservation: the client
// can still fit with a smaller request. It matches ErrKeyCap (errors.Is).
type CapShortError struct {
	Left money.Micros // what is left of the cap, above zero
}

func (e *CapShortError) Error() string {
	return fmt.Sprintf("billing: the key's spend cap has %v left, less than this request's reservation", e.Left)
}

// Is makes a CapShortError an ErrKeyCap.
func (e *CapShortError) Is(target error) bool { return target == ErrKeyCap }

// Tighter reports whether a refused reservation may fit when sized more
// closely (the prompt counted instead of bounded by its bytes): the balance
// or the key's cap is short of it but not spent, or its amount overflowed.
func Tighter(err error) bool {
	var short *CapShortError
	return errors.Is(err, ErrInsufficient) || errors.Is(err, ErrOverflow) || errors.As(err, &short)
}

// Source reads stored balances (store.Store has it).
type Source interface {
	AccountByID(ctx context.Context, id string) (store.Account, error)
	KeyByID(ctx context.Context, id string) (store.Key, error)
}

// Payer is who a request is charged to.
type Payer struct {
	AccountID string
	KeyID     string
	SpendCap  money.Micros // the key's cap; 0 means none
}

// Options tunes a Reserver; zero fields take the defaults shown.
type Options struct {
	// Refresh is how old a stored balance may get before Reserve reads it
	// again, so credits posted by another process (the CLI, the console)
	// show up (default 1s).
	Refresh time.Duration
	Now     func() time.Time
	// Log receives a WARN line for every charge capped at its reservation
	// (see Hold.Settle); nil discards them.
	Log *slog.Logger
	// Lease, when set, shares account balances with other replicas through
	// the store's holds (see lease.go); nil keeps them in this process,
	// which suits one gateway per database.
	Lease *Lease
}

// Reserver keeps, per account and per capped key, the stored balance last
// read, the charges settled since that have not reached the store yet, and
// the outstanding reservations. It is the only in-memory money state, and
// losing it (a crash) loses no money: reservations are released by
// definition and unwritten charges are in the usage journal.
type Reserver struct {
	src     Source
	refresh time.Duration
	now     func() time.Time
	log     *slog.Logger

	mu    sync.Mutex
	accts map[string]*meter
	keys  map[string]*meter

	lease   *Lease     // nil: balances are this process's alone
	leaseMu sync.Mutex // one lease write at a time (raise or publish)
}

// meter is the state of one account or one capped key. For an account,
// stored is the balance less what open tasks (videos, background
// responses) hold; for a key, it is cap − spent − held. Both count down.
// With leases, an account's stored is instead what this replica's hold in
// the store leaves it (lease.go), counting down the same way.
type meter struct {
	stored   money.Micros // as last read from the store
	readAt   time.Time
	gen      uint64       // bumped by every commit, so a read that raced one is discarded
	pending  money.Micros // settled charges not yet committed to the store
	reserved money.Micros // outstanding reservations
	gone     money.Micros // all ever committed or persisted (leases: what a hold no longer covers)
	extra    money.Micros // leases: the headroom asked for at the last raise
}

func (m *meter) available() money.Micros { return m.stored - m.pending - m.reserved }

// NewReserver returns a Reserver reading balances from src.
func NewReserver(src Source, o Options) *Reserver {
	if o.Refresh <= 0 {
		o.Refresh = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Reserver{src: src, refresh: o.Refresh, now: o.Now, log: o.Log,
		accts: make(map[string]*meter), keys: make(map[string]*meter), lease: o.Lease}
}

// Hold is an admitted request's reservation. Settle or Release it exactly
// once; later calls do nothing.
type Hold struct {
	r      *Reserver
	p      Payer
	amount money.Micros
	ref    string // the request's id, for the log
	done   bool   // guarded by r.mu
}

// Amount is what the hold reserved.
func (h *Hold) Amount() money.Micros { return h.amount }

// Reserve admits a request that can cost up to amount, or refuses it with
// ErrInsufficient, ErrKeyCap when the key's cap is spent, or a
// *CapShortError when what is left of it is less than amount. Whatever the amount, even zero, the
// account must have something available and a capped key something left:
// an account at or below zero is served nothing billable. (Free models do
// not reserve at all.)
func (r *Reserver) Reserve(ctx context.Context, p Payer, amount money.Micros) (*Hold, error) {
	if amount < 0 {
		return nil, fmt.Errorf("billing: negative reservation %v", amount)
	}
	h := &Hold{r: r, p: p, amount: amount, ref: reqinfo.From(ctx).ID}
	if err := r.fresh(ctx, p); err != nil {
		return nil, err
	}
	need := max(amount, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.accts[p.AccountID]
	for try := 0; r.lease != nil && a.available() < need && try < 3; try++ {
		// Take more of the balance (others may use what one raise adds
		// before this request does: try again).
		r.mu.Unlock()
		err := r.raise(ctx, p.AccountID, need)
		r.mu.Lock()
		if err != nil {
			return nil, err
		}
		a = r.leased(p.AccountID) // PublishLeases may have dropped it, idle
	}
	if a.available() < need {
		return nil, ErrInsufficient
	}
	var k *meter
	if p.SpendCap > 0 {
		if k = r.keys[p.KeyID]; k.available() < need {
			if left := k.available(); left > 0 {
				return nil, &CapShortError{Left: left}
			}
			return nil, ErrKeyCap
		}
		k.reserved += amount
	}
	a.reserved += amount
	return h, nil
}

// fresh makes sure the payer's meters exist and were read recently. The
// read happens outside the lock; a read that raced a commit is dropped and
// retried on the next request (the old value errs on the safe side).
func (r *Reserver) fresh(ctx context.Context, p Payer) error {
	now := r.now()
	r.mu.Lock()
	a, k := r.accts[p.AccountID], r.keys[p.KeyID]
	needA := a == nil || now.Sub(a.readAt) >= r.refresh
	needK := p.SpendCap > 0 && (k == nil || now.Sub(k.readAt) >= r.refresh)
	var genA, genK uint64
	if a != nil {
		genA = a.gen
	}
	if k != nil {
		genK = k.gen
	}
	r.mu.Unlock()
	if needA && r.lease != nil { // the lease is the balance (lease.go)
		r.store(r.accts, p.AccountID, genA, 0, time.Time{})
		needA = false
	}
	if needA {
		acct, err := r.src.AccountByID(ctx, p.AccountID)
		if err != nil {
			return fmt.Errorf("billing: read balance: %w", err)
		}
		r.store(r.accts, p.AccountID, genA, acct.Balance-acct.Held, now)
	}
	if needK {
		key, err := r.src.KeyByID(ctx, p.KeyID)
		if err != nil {
			return fmt.Errorf("billing: read key spend: %w", err)
		}
		r.store(r.keys, p.KeyID, genK, p.SpendCap-key.Spent-key.Held, now)
	}
	return nil
}

// Stale makes the next reservation for the account read its balance from
// the store instead of the copy of up to a second ago: call it after
// crediting the account (a top-up, a code), so money paid in is spendable
// at once on this process. Other processes see it within their refresh.
func (r *Reserver) Stale(accountID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.accts[accountID]; a != nil {
		a.readAt = time.Time{}
	}
}

// store installs a value read from the store unless a commit happened
// since the read started (then the meter's old value stays, and a meter
// that did not exist yet is created from the read: it had no commits).
func (r *Reserver) store(ms map[string]*meter, id string, gen uint64, v money.Micros, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := ms[id]
	if m == nil {
		ms[id] = &meter{stored: v, readAt: at}
		return
	}
	if r.lease != nil && at.IsZero() {
		return // a leased account's meter is set by its raises
	}
	if m.gen == gen {
		m.stored, m.readAt = v, at
	}
}

// Settle turns the hold into a charge of cost and returns what was charged:
// the cost in full when the account (and the key's cap) can pay it, which
// the reservation guarantees up to its amount; past what they can pay, no
// more, so no answer takes a balance or a key's spend below zero. The
// reservation covers the largest answer the upstream request allows, so
// only a vendor that counts more prompt tokens than the gateway's bound,
// for an account with nothing left beyond the hold, has a difference
// written off, with a WARN line naming the request. Call Committed when the
// charge reaches the store. A second Settle or Release charges nothing.
func (h *Hold) Settle(cost money.Micros) money.Micros {
	charged, ok := h.finish(cost)
	if ok && charged < cost {
		h.r.log.Warn("charge capped at what the account can pay; the rest is written off",
			"request_id", h.ref, "account", h.p.AccountID, "key", h.p.KeyID,
			"cost", cost.String(), "charged", charged.String(), "written_off", (cost - charged).String())
	}
	return charged
}

// Release gives the whole reservation back (upstream failure, nothing used).
func (h *Hold) Release() { h.finish(0) }

// finish ends the hold with a charge of at most cost, capped at what the
// payer can still pay; false when it had ended.
func (h *Hold) finish(cost money.Micros) (money.Micros, bool) {
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if h.done {
		return 0, false
	}
	h.done = true
	a := r.accts[h.p.AccountID]
	var k *meter
	if h.p.SpendCap > 0 {
		k = r.keys[h.p.KeyID]
	}
	for _, m := range []*meter{a, k} {
		if m != nil {
			cost = min(cost, h.amount+max(m.available(), 0)) // the hold is in m.reserved
		}
	}
	for _, m := range []*meter{a, k} {
		if m != nil {
			m.reserved -= h.amount
			m.pending += cost
		}
	}
	return cost, true
}

// Persisted ends the hold without a charge because the store now holds the
// same amount (an open video task's Held, which balance reads subtract):
// the meters count it as stored, as a fresh read would. The task settles
// or releases it in the store later. After Settle or Release it does
// nothing.
func (h *Hold) Persisted() {
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if h.done {
		return
	}
	h.done = true
	for _, m := range []*meter{r.accts[h.p.AccountID], h.keyMeter()} {
		if m != nil {
			m.reserved -= h.amount
			m.stored -= h.amount
			m.gone += h.amount
			m.gen++
		}
	}
}

// keyMeter is the meter of the hold's key when it is capped; r.mu held.
func (h *Hold) keyMeter() *meter {
	if h.p.SpendCap > 0 {
		return h.r.keys[h.p.KeyID]
	}
	return nil
}

// Committed tells the Reserver that a settled charge is now in the store
// (the stored balance it reads next includes it).
func (r *Reserver) Committed(accountID, keyID string, cost money.Micros) {
	if cost == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range []*meter{r.accts[accountID], r.keys[keyID]} {
		if m == nil {
			continue
		}
		m.pending -= cost
		m.stored -= cost // what a fresh read would now return
		m.gone += cost
		m.gen++
	}
}

// Reserved returns the outstanding reservations per account, for the
// holds table that shows them to other processes.
func (r *Reserver) Reserved() map[string]money.Micros {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]money.Micros, len(r.accts))
	for id, m := range r.accts {
		if m.reserved != 0 {
			out[id] = m.reserved
		}
	}
	return out
}
