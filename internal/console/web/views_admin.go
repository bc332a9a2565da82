package web

import (
	"time"

	"github.com/modelgate/modelgate/internal/money"
)

// AdminError is a failed request in the admin errors section.
type AdminError struct {
	CreatedAt time.Time
	Account   string // the account's name; links to its page
	KeyName   string
	Model     string
	Provider  string // "" when no upstream was chosen
	Status    int
	Code      string
	Message   string // the last upstream try's error, or what the code means
	RequestID string
}

// AdminAccountPage is /console/admin/accounts/{name}: one customer whole.
// Its forms post to /console/admin/accounts/{Account.ID}/… (adjust,
// disable, enable, grant-admin, revoke-admin, keys/{id}/disable|enable|
// revoke) and answer 303 back here.
type AdminAccountPage struct {
	Layout
	Target     AdminAccount // the account shown
	Held       money.Micros
	Self       bool // the operator's own account: no removal of its role, no disabling
	Identities []Identity
	Keys       []AdminKey
	TopUps     []TopUp     // the newest, as the overview shows them
	Ledger     []LedgerRow // the newest entries, as the balance history shows them
	Usage      []UsageRow  // the newest requests
	Totals     Day         // the last 30 days (Date "")
	// UsageURL and LedgerURL are the account's full listings in the API.
	UsageURL, LedgerURL string
}

// AdminKey is a key of the account page.
type AdminKey struct {
	ID         string
	Name       string
	Prefix     string
	Group      string
	Status     string // "active", "disabled", "revoked", "expired"
	CreatedAt  time.Time
	LastUsedAt time.Time
	SpendCap   money.Micros
	Spent      money.Micros
}
