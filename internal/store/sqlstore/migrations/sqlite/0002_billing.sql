-- 0002: balances, the ledger, key spend caps and expiry, and the cost of
-- each request. Amounts are integer micro-units of the operator's currency.
-- accounts.balance always equals the sum of the account's ledger amounts:
-- both change only together, in one transaction.

ALTER TABLE accounts ADD COLUMN balance INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN spent INTEGER NOT NULL DEFAULT 0;

ALTER TABLE api_keys ADD COLUMN spend_cap INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN spent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;

ALTER TABLE usage_records ADD COLUMN cost INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0;

CREATE TABLE ledger (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	account_id    TEXT NOT NULL REFERENCES accounts(id),
	kind          TEXT NOT NULL,
	amount        INTEGER NOT NULL,
	balance_after INTEGER NOT NULL,
	ref           TEXT UNIQUE,
	note          TEXT NOT NULL DEFAULT '',
	created_at    INTEGER NOT NULL
);

CREATE INDEX ledger_account ON ledger(account_id, id);

-- Outstanding reservations of running gateway processes, published about
-- once a second so that CLI commands can show them and a restart can
-- release what a dead process left behind.
CREATE TABLE holds (
	instance   TEXT NOT NULL,
	account_id TEXT NOT NULL,
	amount     INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (instance, account_id)
);
