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
	// PaymentRef is the provider's id of the payment itself (Stripe's
	// PaymentIntent), stored when the top-up is paid and unique per
	// provider: refunds and disputes name the payment, not the session.
	PaymentRef string
	// Reversed is the part of Credited taken back from the account because
	// the payer got it back (refunds, disputes); BonusReversed the same
	// share of Bonus, taken back with it.
	Reversed      money.Micros
	BonusReversed money.Micros
	CreatedAt     time.Time
	PaidAt        time.Time // zero unless paid
	EndedAt       time.Time // when it became final
}

// TopUpLimits bound the top-ups one account may start. They are counted
// in the store, so replicas sharing it share them.
type TopUpLimits struct {
	// MaxOpen bounds the pending top-ups created at or after OpenSince
	// (older ones are past their checkout's expiry); 0: no bound.
	MaxOpen   int
	OpenSince time.Time
	// MaxRecent bounds the top-ups created at or after RecentSince,
	// whatever became of them; 0: no bound.
	MaxRecent   int
	RecentSince time.Time
}

// ReversalKind says why a payment provider took money back from a paid
// top-up.
type ReversalKind string

// The kinds of reversals.
const (
	ReversalRefund  ReversalKind = "refund"  // the operator refunded (part of) the payment
	ReversalDispute ReversalKind = "dispute" // the payer disputed it with their bank (a chargeback)
)

// TopUpReversal is money a payment provider reports taken back from a
// payment: Total is its running total of Kind for the payment (a charge's
// amount_refunded, which grows with each partial refund; a dispute's
// amount), in the account's currency.
type TopUpReversal struct {
	Provider   string
	PaymentRef string
	Kind       ReversalKind
	Total      money.Micros
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

	// TopUpByExternalID finds a top-up by its provider's id; ErrNotFound.
	TopUpByExternalID(ctx context.Context, provider, externalID string) (TopUp, error)
	// ListTopUps lists an account's top-ups, newest first.
	ListTopUps(ctx context.Context, accountID string) ([]TopUp, error)
	// CreateTopUp stores a pending top-up unless the account is at one of
	// the limits (counted in the same transaction, so racing calls cannot
	// pass them together): then ErrLimit, and nothing is stored.
	// ErrConflict on a taken ID or (Provider, ExternalID).
	CreateTopUp(ctx context.Context, t TopUp, lim TopUpLimits) error
	// CheckTopUpLimits reports ErrLimit when the account could not start a
	// top-up now (CreateTopUp would refuse it), so a caller can refuse
	// before asking the provider for a checkout.
	CheckTopUpLimits(ctx context.Context, accountID string, lim TopUpLimits) error
	// PayTopUp marks the top-up (provider, externalID) paid with credited
	// (the provider's amount) and paymentRef (the provider's payment id,
	// "" when unknown) and, in the same transaction, posts a topup
	// ledger entry (Ref "topup:"+ID) and, when it is the account's first
	// paid top-up, the bonus by rule (kind bonus, Ref
	// "first-topup-bonus:"+accountID, so two racing webhooks cannot both
	// get it), then applies the reversals already recorded for the payment
	// (see ReverseTopUp). credited is false when the top-up was paid before
	// (a repeated event); then only a payment ref it lacked is filled in.
	// ErrNotFound for an unknown externalID; ErrConflict when it ended as
	// failed or expired.
	PayTopUp(ctx context.Context, provider, externalID, paymentRef string, amount money.Micros, rule BonusRule, at time.Time) (t TopUp, credited bool, err error)
	// ReverseTopUp records r and takes back from the paid top-up of
	// r.PaymentRef what it newly covers, in one transaction: of the sum of
	// the payment's reversal totals (each kind's highest reported, so
	// repeated and out-of-order events change nothing) at most Credited,
	// less what was taken before, as a topup ledger entry with a negative
	// amount, and the same share of the bonus as a bonus entry (Refs
	// "topup-reversal:"+ID+":"+total and "topup-reversal-bonus:"+ID+":"+
	// total, total being the new Reversed in micro-units). A balance may go
	// below zero this way. It returns the top-up after and what was taken
	// from the balance now (0: nothing new). ErrNotFound when no paid
	// top-up has the payment yet: the reversal is kept, and PayTopUp
	// applies it when the payment's top-up is paid.
	ReverseTopUp(ctx context.Context, r TopUpReversal, at time.Time) (t TopUp, debited money.Micros, err error)
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
	// accountID (a ledger entry of kind code with Ref "code:"+ID) and marks it
	// used, atomically: of two racing calls one wins. ErrNotFound for an
	// unknown or expired code, ErrConflict for a used one.
	RedeemCode(ctx context.Context, hash []byte, accountID string, at time.Time) (RedeemCode, error)
	// ListCodes lists a batch's codes ("" every code), oldest first.
	ListCodes(ctx context.Context, batch string) ([]RedeemCode, error)

	// PutReveal keeps sealed (a secret encrypted by the console, shown once
	// on the page a form redirects to) under id until expires, so whichever
	// replica serves that page can show it; reveals expired at at are
	// deleted. ErrConflict on a taken id.
	PutReveal(ctx context.Context, id string, sealed []byte, at, expires time.Time) error
	// TakeReveal deletes the reveal id and returns it, once: of two racing
	// calls one gets it. ErrNotFound when there is none or it expired at at.
	TakeReveal(ctx context.Context, id string, at time.Time) ([]byte, error)

	// CreateLoginLink stores l; ErrConflict on a taken ID or hash.
	CreateLoginLink(ctx context.Context, l LoginLink) error
	// UseLoginLink marks the link whose hash is given used at at and
	// returns it, atomically: of two racing calls one wins. ErrNotFound
	// for an unknown or expired link, ErrConflict for a used one.
	UseLoginLink(ctx context.Context, hash []byte, at time.Time) (LoginLink, error)
}
