package store

import (
	"time"

	"github.com/modelgate/modelgate/internal/money"
)

// The queries of the console's pages: a page of the ledger, a change to a
// key, the operator's list of accounts.

// LedgerQuery selects a page of one account's ledger, newest first.
type LedgerQuery struct {
	AccountID    string
	Before       int64        // only entries with ID < Before; 0: from the newest
	Since, Until time.Time    // Time in [Since, Until); zero: unbounded
	Kinds        []LedgerKind // empty: every kind
	Limit        int          // 1..1000 (callers clamp)
	// GroupCharges merges each run of charge entries of one UTC day that no
	// other entry of the account interrupts into one entry: ID and Time and
	// BalanceAfter of the run's newest, Amount the run's sum, Count its length,
	// Ref "" and Note "". The run is never split across pages: Before of the
	// next page is the ID of the run's OLDEST entry (return it: see NextBefore).
	//
	// Precisely: the entries with ID < Before and Time in [Since, Until),
	// of every kind, are taken in ID order; a run is a maximal sequence of
	// consecutive charges among them whose Times fall on one UTC day (an
	// entry of another kind, even one Kinds leaves out, ends a run). Kinds
	// then selects among the merged entries. A grouped entry of one
	// charge is that charge as is (its Ref kept, Count 1).
	GroupCharges bool
}

// KeyUpdate is a change to a key; nil fields are left as they are.
type KeyUpdate struct {
	Name      *string
	SpendCap  *money.Micros // 0 clears the cap
	ExpiresAt *time.Time    // zero time clears the expiry
	Disabled  *bool         // true disables at `at` (keeping an earlier DisabledAt), false enables
}

// AccountQuery selects accounts for the operator's list.
type AccountQuery struct {
	Q     string // case-insensitive substring of the name, an identity's login, subject or e-mail; "" = all
	After string // account name cursor: only names > After
	Limit int    // 1..500
}

// AccountRow is an account with its sign-in identities.
type AccountRow struct {
	Account
	Identities []Identity // oldest first
}
