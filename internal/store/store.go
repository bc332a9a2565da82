// Package store defines the persistence interfaces of modelgate and the
// records they hold. The backend, store/sqlstore, implements Store on SQLite
// and on PostgreSQL, and store/storetest holds the one conformance suite
// both must pass.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/modelgate/modelgate/internal/money"
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
	// ErrLimit means a bound on how many of something may exist was
	// reached (top-ups an account may start); nothing was stored.
	ErrLimit = errors.New("limit reached")
)

// Account owns keys and a prepaid balance.
type Account struct {
	ID        string // "acct_" + random hex; stable across backends and replicas
	Name      string // unique, chosen by the operator
	CreatedAt time.Time
	Balance   money.Micros // filled on reads; always the sum of the account's ledger
	Spent     money.Micros // filled on reads; total of usage charges
	// Held is filled on reads: the reservations of the account's open video
	// tasks (pending or processing) and background responses (queued or
	// in progress), read in the same snapshot as Balance.
	// They are not in the ledger; what the account can spend is Balance −
	// Held − what running requests reserve.
	Held money.Micros
	// DisabledAt is when an operator disabled the account (zero: enabled).
	// A disabled account's keys stop working: KeyByHash reports it in
	// Key.AccountDisabled.
	DisabledAt time.Time
	// Admin marks an operator of the console (set by a used admin sign-in
	// link; console.admins in the config also grants the role).
	Admin bool
}

// Disabled reports whether an operator disabled the account.
func (a Account) Disabled() bool { return !a.DisabledAt.IsZero() }

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
	// DisabledAt is when the key was disabled (zero: enabled). A disabled
	// key is refused like a revoked one until it is enabled again
	// (UpdateKey); unlike revocation, disabling can be undone.
	DisabledAt time.Time
	ExpiresAt  time.Time    // zero: never expires
	SpendCap   money.Micros // 0: no cap; otherwise the most the key may ever spend
	Limits     KeyLimits    // the key's own rate limits (zero: its group's)
	Spent      money.Micros // filled on reads: usage charged through this key
	Held       money.Micros // filled on reads: reservations of the key's open tasks (videos, background responses)
	// LastUsedAt is filled on reads: the Time of the newest usage record
	// inserted for the key (zero: never used). InsertUsage keeps it.
	LastUsedAt time.Time
	// AccountDisabled is filled on reads: the key's account is disabled.
	AccountDisabled bool
}

// KeyLimits are a key's own rate limits; a zero field is no limit of the
// key's own (its group's applies). See internal/ratelimit.
type KeyLimits struct {
	RPM         int64 // requests per minute
	TPM         int64 // tokens per minute
	Concurrency int64 // requests running at once
}

// Expired reports whether the key has expired at now.
func (k Key) Expired(now time.Time) bool { return !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt) }

// Revoked reports whether the key has been revoked.
func (k Key) Revoked() bool { return !k.RevokedAt.IsZero() }

// Disabled reports whether the key is disabled (see Key.DisabledAt).
func (k Key) Disabled() bool { return !k.DisabledAt.IsZero() }

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
	CachedTokens     int64 // part of PromptTokens read from the vendor's cache
	ReasoningTokens  int64 // part of CompletionTokens spent on hidden reasoning
	Estimated        bool  // token counts were counted by the gateway, not reported by the vendor
	// Cost is what the request was charged. Inserting a record with a
	// non-zero Cost posts the charge to the account's ledger in the same
	// transaction, once: a record already stored is skipped with its charge.
	Cost      money.Micros
	Latency   time.Duration // request start to last byte
	TTFT      time.Duration // request start to first streamed event; 0 when not streamed
	Status    int           // HTTP status the client got (499 when the client went away)
	ErrorCode string        // OpenAI-style error code, empty on success
	// Attempts are the request's upstream tries in order, stored only when
	// there was more than one, or the one failed, or the client did not get
	// a 2xx: nil on a record with a Provider and a 2xx Status means one try
	// at Provider that answered (200, for about Latency). Readers use
	// AttemptsOf.
	Attempts []Attempt
}

// Attempt is one upstream try of a request.
type Attempt struct {
	Provider string        // provider name from the config
	Status   int           // the upstream's HTTP status; 0 when no answer came
	Error    string        // why it failed ("" when it answered 2xx)
	Duration time.Duration // from sending to the answer's end or failure
}

// AttemptsOf is r's tries: the stored ones, or the one implied by a record
// that has none stored (see UsageRecord.Attempts); nil when no upstream was
// tried.
func AttemptsOf(r *UsageRecord) []Attempt {
	if r.Attempts != nil || r.Provider == "" || r.Status < 200 || r.Status > 299 {
		return r.Attempts
	}
	return []Attempt{{Provider: r.Provider, Status: 200, Duration: r.Latency}}
}

// UsageFilter selects usage records; zero fields do not filter.
type UsageFilter struct {
	AccountID string
	Since     time.Time // inclusive
	Until     time.Time // exclusive
	Limit     int       // 0 means no limit; newest records first
	Model     string    // exact public model id
	KeyID     string
	Status    UsageStatus
	// After continues a listing: only records strictly after it in the
	// order (Time descending, then RequestID descending), that is older
	// ones. Zero: from the newest.
	After UsageCursor
}

// UsageStatus filters records by outcome.
type UsageStatus string

// The outcomes a UsageFilter may select.
const (
	UsageAny   UsageStatus = ""      // every record
	UsageOK    UsageStatus = "ok"    // Status < 400
	UsageError UsageStatus = "error" // Status >= 400 (499 included)
)

// UsageCursor is the position of a record in a listing: its Time and
// RequestID.
type UsageCursor struct {
	Time      time.Time
	RequestID string
}

// UsageTotals sums usage records.
type UsageTotals struct {
	Requests         int64
	PromptTokens     int64
	CompletionTokens int64
	Cost             money.Micros
}

// UsageGroup is the totals of one group of records: a day ("2026-11-24",
// UTC), a model id or a key id.
type UsageGroup struct {
	Key string
	UsageTotals
}

// UsageStats is an account's usage over a time range grouped three ways;
// each grouping's totals equal the records' sums exactly.
type UsageStats struct {
	Daily   []UsageGroup // days with records, oldest first
	ByModel []UsageGroup // by Cost descending, then Key
	ByKey   []UsageGroup // by Cost descending, then Key; "" for records without a key
}

// Accounts stores accounts.
type Accounts interface {
	// CreateAccount inserts a; ErrConflict when the name is taken.
	CreateAccount(ctx context.Context, a Account) error
	AccountByName(ctx context.Context, name string) (Account, error)
	AccountByID(ctx context.Context, id string) (Account, error)
	ListAccounts(ctx context.Context) ([]Account, error)
	// SetAccountDisabled disables the account at at, or enables it when at
	// is zero; ErrNotFound when it does not exist.
	SetAccountDisabled(ctx context.Context, id string, at time.Time) error
	// SetAccountAdmin grants or takes the console's admin role;
	// ErrNotFound when the account does not exist.
	SetAccountAdmin(ctx context.Context, id string, admin bool) error
	// SearchAccounts lists the accounts q selects by name ascending
	// (Balance, Spent, Held, Admin filled), each with its identities
	// oldest first, at most q.Limit of them. q.Q matches, ignoring case,
	// a substring of the account's name or of one of its identities'
	// Login, Subject or Email; its characters are literal (no wildcards).
	// A q.Limit outside 1..500 is an error.
	SearchAccounts(ctx context.Context, q AccountQuery) ([]AccountRow, error)
}

// Keys stores API keys.
type Keys interface {
	// CreateKey inserts k; ErrConflict on a duplicate ID or hash.
	CreateKey(ctx context.Context, k Key) error
	// KeyByHash finds a key, revoked or not, by the SHA-256 of its secret.
	KeyByHash(ctx context.Context, hash []byte) (Key, error)
	// KeysVersion is a number that changes with every change that can
	// make a key KeyByHash found stop authenticating (a key revoked or
	// changed, an account disabled), whoever makes it, and is otherwise
	// left alone: not by a key's spent or last use, a balance, or a new
	// key. A key read after the version was v is still as read while
	// the version is v, so a cache of verified keys revalidates them
	// all with this one read.
	KeysVersion(ctx context.Context) (int64, error)
	// KeyByID finds a key by ID (fresh Spent for spend caps).
	KeyByID(ctx context.Context, id string) (Key, error)
	// ListKeys lists all keys, oldest first.
	ListKeys(ctx context.Context) ([]Key, error)
	// KeysOf lists one account's keys, revoked ones included, oldest
	// first; none (and no error) for an account without keys or unknown.
	KeysOf(ctx context.Context, accountID string) ([]Key, error)
	// RevokeKey revokes the key whose ID equals ref or whose Prefix starts
	// with ref; ErrNotFound or ErrAmbiguous otherwise. Revoking twice keeps
	// the first time.
	RevokeKey(ctx context.Context, ref string, at time.Time) (Key, error)
	// SetKeyLimits replaces the rate limits of the key ref designates (as
	// RevokeKey's) and returns the key; negative limits are an error.
	// Cached keys see the change: it moves KeysVersion.
	SetKeyLimits(ctx context.Context, ref string, l KeyLimits) (Key, error)
	// UpdateKey applies u to the key id owned by accountID ("" = any
	// account, for operators) at `at` and returns the key as read
	// afterwards. ErrNotFound when no such key (or another account's),
	// ErrConflict when the key is revoked (nothing changes then). An empty
	// u changes nothing and returns the key. A negative SpendCap is an
	// error. Disabled true keeps an earlier DisabledAt. Any change that
	// can make the key stop or start authenticating (disabled, cap,
	// expiry) moves KeysVersion; a rename need not.
	UpdateKey(ctx context.Context, accountID, id string, u KeyUpdate, at time.Time) (Key, error)
}

// Usage stores usage records.
type Usage interface {
	// InsertUsage writes a batch in one transaction; records already stored
	// are skipped, so a retried batch or a replayed journal is never counted
	// twice. A record is stored already when its account has a record with
	// its RequestID and Time (a retry or a replay brings back the very
	// record), and a batch's records after the first of a RequestID are
	// skipped. Each request id belongs to one request at one time: the
	// gateway makes them so.
	// A record whose charge the ledger already holds (its row was purged,
	// then a crash journal replayed it) is stored without charging again.
	InsertUsage(ctx context.Context, recs []UsageRecord) error
	// AppendUsage writes records that are not stored yet, each RequestID
	// once, in one transaction, with their charges, exactly as InsertUsage
	// stores new records; it does not look for stored request ids, so a
	// record passed twice is stored and charged twice. It is the hot path
	// for a caller that knows its records are new: the usage recorder's
	// first attempt at a batch of requests this process served. A retry
	// after an error (which may have been a lost reply to a commit) and a
	// crash journal's replay go through InsertUsage.
	AppendUsage(ctx context.Context, recs []UsageRecord) error
	ListUsage(ctx context.Context, f UsageFilter) ([]UsageRecord, error)
	// UsageStats groups the records of accountID with since <= Time <
	// until by UTC day, by model and by key. A backend may keep the
	// statistics as hourly sums: since and until are then truncated to the
	// UTC hour (callers pass UTC day boundaries). The statistics outlive
	// the records: PurgeUsage does not change them. Records without an
	// account are not counted.
	UsageStats(ctx context.Context, accountID string, since, until time.Time) (UsageStats, error)
	// PurgeUsage deletes at most limit records whose Time is before before
	// (oldest first) and returns how many it deleted; callers repeat it
	// until it returns less than limit, so no transaction grows large. It
	// never touches the ledger, balances or spent amounts: usage records
	// have a retention, money does not. limit must be positive.
	PurgeUsage(ctx context.Context, before time.Time, limit int) (int, error)
}

// RefusalCount counts the requests one key had refused for one reason in
// one minute before any upstream call: a 400 naming a parameter, a 403, a
// 404, a 429 of the balance or the rate limit. Such requests leave no usage
// record each (a key with no balance can send thousands a second, and
// records are kept for months): they are counted here instead.
type RefusalCount struct {
	AccountID string
	KeyID     string
	Minute    time.Time // the start of the UTC minute
	Endpoint  string    // e.g. "chat.completions"
	Reason    string    // the error code the client got (insufficient_quota, model_not_found, ...)
	Status    int       // the HTTP status the client got (the last one seen, if it varied)
	Count     int64
}

// RefusalFilter selects refusal counts; zero fields do not filter.
type RefusalFilter struct {
	AccountID string
	KeyID     string
	Since     time.Time // inclusive, compared with Minute
	Until     time.Time // exclusive
	Limit     int       // 0: no limit; newest minutes first
}

// Refusals stores the counts of refused requests (see RefusalCount).
type Refusals interface {
	// AddRefusals adds each count to the stored row of its account, key,
	// minute, endpoint and reason (created at its Count when there is none), in one
	// transaction. Counts only add: replicas each add their own.
	AddRefusals(ctx context.Context, counts []RefusalCount) error
	// ListRefusals returns the rows f selects, newest minute first, then
	// by account, key, endpoint and reason.
	ListRefusals(ctx context.Context, f RefusalFilter) ([]RefusalCount, error)
	// PurgeRefusals deletes the rows of minutes before before, as
	// PurgeUsage deletes records (at most limit per call), and returns how
	// many it deleted.
	PurgeRefusals(ctx context.Context, before time.Time, limit int) (int, error)
}

// LedgerKind says why a balance changed.
type LedgerKind string

// The kinds of ledger entries.
const (
	KindTopUp      LedgerKind = "topup"      // money paid in
	KindCharge     LedgerKind = "charge"     // a request's cost (negative amount)
	KindRefund     LedgerKind = "refund"     // money given back for a charge
	KindAdjustment LedgerKind = "adjustment" // an operator's correction, either sign
	KindBonus      LedgerKind = "bonus"      // free credit (first top-up bonus, demo credit)
	KindCode       LedgerKind = "code"       // a redeemed code's credit (Ref "code:"+code ID)
)

// Valid reports whether k is one of the kinds above.
func (k LedgerKind) Valid() bool {
	switch k {
	case KindTopUp, KindCharge, KindRefund, KindAdjustment, KindBonus, KindCode:
		return true
	}
	return false
}

// LedgerEntry is one change of an account's balance.
type LedgerEntry struct {
	ID           int64 // assigned by the store, increasing
	AccountID    string
	Kind         LedgerKind
	Amount       money.Micros // signed: credits > 0, charges < 0
	BalanceAfter money.Micros // set by the store
	Ref          string       // optional idempotency key (a request id, a payment id); unique when set
	Note         string
	Time         time.Time
	// Count is how many entries this one stands for: 1 for a plain entry,
	// the run's length for charges LedgerPage grouped (GroupCharges). Set
	// on reads (ListLedger, LedgerPage); Post ignores it.
	Count int64
}

// Ledger stores balance changes. Every change of Account.Balance is an
// entry, written in the same transaction as the balance.
type Ledger interface {
	// Post applies e: inserts it and moves the account's balance by
	// e.Amount, atomically, and returns the stored entry. An entry whose
	// Ref was posted before changes nothing and returns ErrConflict.
	// ErrNotFound when the account does not exist.
	Post(ctx context.Context, e LedgerEntry) (LedgerEntry, error)
	// ListLedger returns an account's entries, oldest first.
	ListLedger(ctx context.Context, accountID string) ([]LedgerEntry, error)
	// LedgerPage returns up to q.Limit entries of q.AccountID, ID
	// descending, and the Before of the next page (0: no more). Walking
	// pages from Before 0 with nextBefore yields exactly ListLedger
	// reversed (GroupCharges false, no filters); each entry is as
	// ListLedger has it, so the newest one's BalanceAfter is the account's
	// Balance. An unknown account has no entries. A q.Limit outside
	// 1..1000 is an error. nextBefore is 0 only when no entry q selects
	// is left below the page. A backend must not read the whole ledger for
	// one page: it walks the entries newest first and stops when the page
	// is full. See LedgerQuery for filters and grouping.
	LedgerPage(ctx context.Context, q LedgerQuery) (entries []LedgerEntry, nextBefore int64, err error)
	// LedgerSum is the sum of an account's entries (for audits: it must
	// equal the account's Balance).
	LedgerSum(ctx context.Context, accountID string) (money.Micros, error)
}

// Holds publishes the in-memory reservations of running gateway processes.
type Holds interface {
	// PutHolds replaces instance's holds with amounts, stamped at.
	PutHolds(ctx context.Context, instance string, amounts map[string]money.Micros, at time.Time) error
	// Reserved is the total held on an account by all instances.
	Reserved(ctx context.Context, accountID string) (money.Micros, error)
	// DropHolds deletes the holds of every instance but keep that were last
	// stamped before before, and returns their total per account.
	DropHolds(ctx context.Context, keep string, before time.Time) (map[string]money.Micros, error)
	// LeaseHold sets instance's hold on accountID, stamped at, to want
	// when the account can cover it, else to least when it can cover that,
	// and returns the hold; what it can cover is its balance less what its
	// open tasks hold and the other instances' holds stamped at or after
	// fresh. When it cannot cover least, nothing changes and it returns 0. Replicas sharing one database reserve balance this way
	// (billing's leases), so two never spend the same cent.
	// store.ErrNotFound when the account does not exist.
	LeaseHold(ctx context.Context, instance, accountID string, least, want money.Micros, at, fresh time.Time) (money.Micros, error)
}

// Bootstrapper creates the first account and key exactly once per database.
type Bootstrapper interface {
	// Bootstrap inserts a and k in one transaction unless the database was
	// bootstrapped before; it reports whether it did. A non-zero credit is
	// posted to a's ledger as a bonus in the same transaction.
	Bootstrap(ctx context.Context, a Account, k Key, credit money.Micros) (bool, error)
}

// Responses records the ownership of vendor-stored Responses API objects
// created through the gateway: every key shares the operator's vendor
// account, so the gateway itself decides which account may read an id.
type Responses interface {
	// SaveResponseOwner records that accountID created the response id.
	// Saving the same id for the same account again is a no-op;
	// ErrConflict when id belongs to another account, ErrNotFound when
	// the account does not exist.
	SaveResponseOwner(ctx context.Context, id, accountID string, at time.Time) error
	// ResponseOwner returns the account that created id; ErrNotFound when
	// the gateway never saved it.
	ResponseOwner(ctx context.Context, id string) (accountID string, err error)
	// SaveResponse records r as SaveResponseOwner does (same errors), with
	// its bound and, when r.Sized, its size. Saving an id again for its
	// owner keeps the first bound and adds a size not recorded yet.
	SaveResponse(ctx context.Context, r StoredResponse) error
	// SizeResponses records the vendor's counts of saved responses, in one
	// transaction; ids never saved are skipped (their size is not needed:
	// no request may continue them), and a recorded size is replaced.
	SizeResponses(ctx context.Context, sizes []ResponseSize) error
	// StoredResponse returns what the gateway recorded of id; ErrNotFound
	// when it never saved it.
	StoredResponse(ctx context.Context, id string) (StoredResponse, error)
}

// StoredResponse is what the gateway knows of a response the vendor
// stores: who created it and how much context a request that continues it
// (previous_response_id) makes the vendor bill.
type StoredResponse struct {
	ID        string
	AccountID string
	CreatedAt time.Time
	// Bound is the most input and output tokens the response can hold, as
	// its request reserved them: what a request that continues it
	// reserves while its size is not known yet. 0: unknown (saved before
	// the gateway kept bounds).
	Bound int64
	// Sized says InputTokens and OutputTokens are the vendor's counts,
	// recorded when the response's answer ended.
	Sized        bool
	InputTokens  int64
	OutputTokens int64
}

// ResponseSize is the vendor's count of a stored response's tokens.
type ResponseSize struct {
	ID                        string
	InputTokens, OutputTokens int64
}

// Store is everything a backend provides.
type Store interface {
	Accounts
	Keys
	Usage
	Ledger
	Holds
	Bootstrapper
	Responses
	Tasks
	ResponseTasks
	Console
	Refusals
	// Ping reports whether the database answers (a cheap round trip; the
	// caller bounds it with ctx). /readyz calls it; an error after Close.
	Ping(ctx context.Context) error
	Close() error
}
