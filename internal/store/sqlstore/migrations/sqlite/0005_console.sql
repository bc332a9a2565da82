-- 0005: the web console's records (store.Console): sign-in identities,
-- console sessions, top-ups with the webhook events already handled, and
-- redemption codes. Times are Unix microseconds; optional times are NULL
-- while unset. Secrets (session cookies, codes) are stored as SHA-256 only.
-- Money moved by a top-up or a code goes through the ledger, like any other
-- balance change; these tables only say why.

CREATE TABLE identities (
	provider     TEXT NOT NULL,
	subject      TEXT NOT NULL,
	account_id   TEXT NOT NULL REFERENCES accounts(id),
	login        TEXT NOT NULL DEFAULT '',
	email        TEXT NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,
	last_seen_at INTEGER,
	PRIMARY KEY (provider, subject)
);

CREATE INDEX identities_account ON identities(account_id);

CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	hash       BLOB NOT NULL UNIQUE,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	role       TEXT NOT NULL CHECK (role IN ('user', 'admin')),
	csrf       TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
);

CREATE INDEX sessions_expires ON sessions(expires_at);

-- amount is what was asked; credited what the provider says was paid and
-- bonus the first-top-up bonus, both set when it is paid.
CREATE TABLE topups (
	id          TEXT PRIMARY KEY,
	account_id  TEXT NOT NULL REFERENCES accounts(id),
	amount      INTEGER NOT NULL,
	credited    INTEGER NOT NULL DEFAULT 0,
	bonus       INTEGER NOT NULL DEFAULT 0,
	method      TEXT NOT NULL DEFAULT '',
	status      TEXT NOT NULL
		CHECK (status IN ('pending', 'paid', 'failed', 'expired')),
	provider    TEXT NOT NULL,
	external_id TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	paid_at     INTEGER,
	ended_at    INTEGER,
	UNIQUE (provider, external_id)
);

CREATE INDEX topups_account_created ON topups(account_id, created_at);

-- Payment webhook events already handled, so a redelivery is recognised.
CREATE TABLE webhook_events (
	provider    TEXT NOT NULL,
	event_id    TEXT NOT NULL,
	received_at INTEGER NOT NULL,
	PRIMARY KEY (provider, event_id)
);

CREATE TABLE redeem_codes (
	id          TEXT PRIMARY KEY,
	hash        BLOB NOT NULL UNIQUE,
	batch       TEXT NOT NULL DEFAULT '',
	amount      INTEGER NOT NULL,
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER,
	redeemed_by TEXT REFERENCES accounts(id),
	redeemed_at INTEGER
);

CREATE INDEX redeem_codes_batch ON redeem_codes(batch);
