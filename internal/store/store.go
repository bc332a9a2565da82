// Package store defines the persistence interfaces of modelgate and the
// records they hold. Backends (store/sqlite today, store/postgres later) each
// implement Store, and store/storetest holds the one conformance suite every
// backend must pass.
package store

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors every backend returns (wrapped) so callers can branch with
// errors.Is without knowing the backend.
var (
	// ErrNotFound means no row matched.
	ErrNotFound = errors.New("not found")
	// ErrConflict means a unique constraint (account name, key hash, ...) was violated.
	ErrConflict = errors.New("already exists")
	// ErrAmbiguous means an ID-or-prefix lookup matched more than one row.
	ErrAmbiguous = errors.New("ambiguous: matches more than one")
)

// Account owns keys and (in a later issue) a balance.
type Account struct {
	ID        string // "acct_" + random hex; stable across backends and replicas
	Name      string // unique, chosen by the operator
	CreatedAt time.Time
}

// Key is an API key as stored: only the SHA-256 of the secret is kept.
type Key struct {
	ID          string // "key_" + random hex
	AccountID   string
	AccountName string // filled on reads (join), ignored on create
	Group       string // the model group the key is bound to
	Name        string // operator's label, may be empty
	Prefix      string // first characters of the secret, for display and revoke
	Hash        []byte // SHA-256 of the whole secret, 32 bytes
	CreatedAt   time.Time
	RevokedAt   time.Time // zero while the key is active
}

// Revoked reports whether the key has been revoked.
func (k Key) Revoked() bool { return !k.RevokedAt.IsZero() }

// UsageRecord is what one request leaves behind, success or failure.
type UsageRecord struct {
	RequestID        string // unique; inserting the same ID twice is a no-op
	Time             time.Time
	AccountID        string
	KeyID            string
	Endpoint         string // e.g. "chat.completions"
	Model            string // public model id the client asked for
	Provider         string // provider name from the config, empty if none was chosen
	UpstreamModel    string
	Stream           bool
	PromptTokens     int64
	CompletionTokens int64
	Latency          time.Duration // request start to last byte
	TTFT             time.Duration // request start to first streamed event; 0 when not streamed
	Status           int           // HTTP status the client got (499 when the client went away)
	ErrorCode        string        // OpenAI-style error code, empty on success
}

// UsageFilter selects usage records; zero fields do not filter.
type UsageFilter struct {
	AccountID string
	Since     time.Time // inclusive
	Until     time.Time // exclusive
	Limit     int       // 0 means no limit; newest records first
}

// Accounts stores accounts.
type Accounts interface {
	// CreateAccount inserts a; ErrConflict when the name is taken.
	CreateAccount(ctx context.Context, a Account) error
	AccountByName(ctx context.Context, name string) (Account, error)
	AccountByID(ctx context.Context, id string) (Account, error)
	ListAccounts(ctx context.Context) ([]Account, error)
}

// Keys stores API keys.
type Keys interface {
	// CreateKey inserts k; ErrConflict on a duplicate ID or hash.
	CreateKey(ctx context.Context, k Key) error
	// KeyByHash finds a key, revoked or not, by the SHA-256 of its secret.
	KeyByHash(ctx context.Context, hash []byte) (Key, error)
	// ListKeys lists all keys, oldest first.
	ListKeys(ctx context.Context) ([]Key, error)
	// RevokeKey revokes the key whose ID equals ref or whose Prefix starts
	// with ref; ErrNotFound or ErrAmbiguous otherwise. Revoking twice keeps
	// the first time.
	RevokeKey(ctx context.Context, ref string, at time.Time) (Key, error)
}

// Usage stores usage records.
type Usage interface {
	// InsertUsage writes a batch in one transaction; records whose RequestID
	// already exists are skipped, so a retried batch is never counted twice.
	InsertUsage(ctx context.Context, recs []UsageRecord) error
	ListUsage(ctx context.Context, f UsageFilter) ([]UsageRecord, error)
}

// Bootstrapper creates the first account and key exactly once per database.
type Bootstrapper interface {
	// Bootstrap inserts a and k in one transaction unless the database was
	// bootstrapped before; it reports whether it did.
	Bootstrap(ctx context.Context, a Account, k Key) (bool, error)
}

// Store is everything a backend provides.
type Store interface {
	Accounts
	Keys
	Usage
	Bootstrapper
	Close() error
}
