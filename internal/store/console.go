package store

import (
	"context"
	"time"

	"github.com/modelgate/modelgate/internal/money"
)

// The web console's records: who signs in (identities and sessions) and
// how money comes in (top-ups and redemption codes). They hang off the
// same accounts, keys and ledger as the API; nothing is copied.

// Identity links an external sign-in to an account. One account may have
// several; one identity belongs to one account.
type Identity struct {
	Provider   string // the console.oauth item's name ("github", "google", "sso")
	Subject    string // the provider's stable user id (GitHub's numeric id, OIDC's sub)
	AccountID  string
	Login      string // shown: GitHub login or OIDC preferred_username; may be empty
	Email      string // may be empty
	CreatedAt  time.Time
	LastSeenAt time.Time
}

// Roles of a console session.
const (
	RoleUser  = "user"
	RoleAdmin = "admin"
)

// Session is a signed-in console browser. The cookie holds a random
// secret; only its SHA-256 is stored.
type Session struct {
	ID        string // "sess_" + hex; a handle for logs and sign-out
	Hash      []byte // SHA-256 of the cookie secret, 32 bytes, unique
	AccountID string
	Role      string // RoleUser or RoleAdmin
	CSRF      string // the session's anti-CSRF token (random, shown to the page)
	CreatedAt time.Time
	ExpiresAt time.Time
}

// TopUpStatus is where a top-up is: pending until the payment provider
// says paid, failed or expired; the three are final.
type TopUpStatus string

// The states of a top-up.
const (
	TopUpPending TopUpStatus = "pending"
	TopUpPaid    TopUpStatus = "paid"
	TopUpFailed  TopUpStatus = "failed"
	TopUpExpired TopUpStatus = "expired"
)

// TopUp is money an account pays in through a payment provider.
type TopUp struct {
	ID        string // "top_" + hex
	AccountID string
	Amount    money.Micros // asked for when it was created
	Credited  money.Micros // what the provider says was paid (its amount_total), once paid
	Bonus     money.Micros // the first-top-up bonus credited with it, once paid
	Method    string       // "card" or "alipay"
	Status    TopUpStatus
	Provider  string // "stripe"
	// ExternalID is the provider's id (the Checkout Session id), unique per
	// provider: events are matched by it, never by metadata.
	ExternalID string
	CreatedAt  time.Time
	PaidAt     time.Time // zero unless paid
	EndedAt    time.Time // when it became final
}

// BonusRule is the first-top-up bonus: min(amount × PercentPPM / 10^6,
// Max), once per account, on its first paid top-up. Zero PercentPPM: none.
type BonusRule struct {
	PercentPPM int64
	Max        money.Micros // 0: no cap
}

// RedeemCode is a single-use code that credits an account. Only the
// SHA-256 of the code is stored.
type RedeemCode struct {
	ID         string // "code_" + hex
	Hash       []byte // SHA-256 of the code, unique
	Batch      string // the operator's batch label
	Amount     money.Micros
	CreatedAt  time.Time
	ExpiresAt  time.Time // zero: never
	RedeemedBy string    // account id; "" while unused
	RedeemedAt time.Time
}

// LoginLink is a one-time console sign-in link an operator makes with
// `modelgate admin login-link`. Only the SHA-256 of its secret is stored.
type LoginLink struct {
	ID        string // "link_" + hex
	Hash      []byte // SHA-256 of the secret in the URL, unique
	Account   string // the account name it signs in as (created on use if missing)
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time // zero while unused
}

// Console stores what the web console needs besides accounts, keys, the
// ledger and usage.
type Console interface {
	// IdentityByKey returns the identity of provider and subject;
	// ErrNotFound when nobody signed in with it yet.
	IdentityByKey(ctx context.Context, provider, subject string) (Identity, error)
	// SignUp creates a and the identity id (id.AccountID = a.ID) in one
	// transaction; ErrConflict when the identity or the account name exists.
	SignUp(ctx context.Context, a Account, id Identity) error
	// LinkIdentity adds id to its existing account; ErrConflict when the
	// identity belongs to an account already, ErrNotFound when the account
	// does not exist.
	LinkIdentity(ctx context.Context, id Identity) error
	// TouchIdentity records a sign-in: LastSeenAt, Login and Email.
	TouchIdentity(ctx context.Context, id Identity) error
	// ListIdentities lists an account's identities, oldest first.
	ListIdentities(ctx context.Context, accountID string) ([]Identity, error)

	// CreateSession stores s; ErrConflict on a taken ID or hash.
	CreateSession(ctx context.Context, s Session) error
	// SessionByHash finds a session by the hash of its secret, expired or
	// not (the caller checks ExpiresAt); ErrNotFound otherwise.
	SessionByHash(ctx context.Context, hash []byte) (Session, error)
	// DeleteSession signs a session out; deleting a missing one is no error.
	DeleteSession(ctx context.Context, id string) error
	// PurgeSessions deletes sessions that expired before before and
	// returns how many.
	PurgeSessions(ctx context.Context, before time.Time) (int, error)

	// CreateTopUp stores a pending top-up; ErrConflict on a taken ID or
	// (Provider, ExternalID).
	CreateTopUp(ctx context.Context, t TopUp) error
	// TopUpByExternalID finds a top-up by its provider's id; ErrNotFound.
	TopUpByExternalID(ctx context.Context, provider, externalID string) (TopUp, error)
	// ListTopUps lists an account's top-ups, newest first.
	ListTopUps(ctx context.Context, accountID string) ([]TopUp, error)
	// PayTopUp marks the top-up (provider, externalID) paid with credited
	// (the provider's amount) and, in the same transaction, posts a topup
	// ledger entry (Ref "topup:"+ID) and, when it is the account's first
	// paid top-up, the bonus by rule (kind bonus, Ref
	// "first-topup-bonus:"+accountID, so two racing webhooks cannot both
	// get it). credited is false, and nothing changes, when the top-up was
	// paid before (a repeated event). ErrNotFound for an unknown
	// externalID; ErrConflict when it ended as failed or expired.
	PayTopUp(ctx context.Context, provider, externalID string, amount money.Micros, rule BonusRule, at time.Time) (t TopUp, credited bool, err error)
	// EndTopUp marks a pending top-up failed or expired; a final one is
	// left as it is. ErrNotFound for an unknown externalID.
	EndTopUp(ctx context.Context, provider, externalID string, status TopUpStatus, at time.Time) error
	// RecordEvent remembers a webhook event id and reports whether it is
	// new (false: it was handled before).
	RecordEvent(ctx context.Context, provider, eventID string, at time.Time) (bool, error)

	// CreateCodes stores a batch of codes in one transaction; ErrConflict
	// when a hash or ID is taken (nothing is stored then).
	CreateCodes(ctx context.Context, codes []RedeemCode) error
	// RedeemCode credits the unused, unexpired code whose hash is given to
	// accountID (a ledger topup entry with Ref "code:"+ID) and marks it
	// used, atomically: of two racing calls one wins. ErrNotFound for an
	// unknown or expired code, ErrConflict for a used one.
	RedeemCode(ctx context.Context, hash []byte, accountID string, at time.Time) (RedeemCode, error)
	// ListCodes lists a batch's codes ("" every code), oldest first.
	ListCodes(ctx context.Context, batch string) ([]RedeemCode, error)

	// CreateLoginLink stores l; ErrConflict on a taken ID or hash.
	CreateLoginLink(ctx context.Context, l LoginLink) error
	// UseLoginLink marks the link whose hash is given used at at and
	// returns it, atomically: of two racing calls one wins. ErrNotFound
	// for an unknown or expired link, ErrConflict for a used one.
	UseLoginLink(ctx context.Context, hash []byte, at time.Time) (LoginLink, error)
}
