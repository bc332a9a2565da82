-- 0001: accounts, API keys, usage records and the bootstrap marker.
-- Times are Unix microseconds (INTEGER), always UTC.

CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);

CREATE TABLE accounts (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
	id         TEXT PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	group_name TEXT NOT NULL,
	name       TEXT NOT NULL DEFAULT '',
	prefix     TEXT NOT NULL,
	hash       BLOB NOT NULL UNIQUE,
	created_at INTEGER NOT NULL,
	revoked_at INTEGER
);

CREATE INDEX api_keys_account ON api_keys(account_id);

CREATE TABLE usage_records (
	request_id        TEXT PRIMARY KEY,
	time              INTEGER NOT NULL,
	account_id        TEXT NOT NULL DEFAULT '',
	key_id            TEXT NOT NULL DEFAULT '',
	endpoint          TEXT NOT NULL DEFAULT '',
	model             TEXT NOT NULL DEFAULT '',
	provider          TEXT NOT NULL DEFAULT '',
	upstream_model    TEXT NOT NULL DEFAULT '',
	stream            INTEGER NOT NULL DEFAULT 0,
	prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	completion_tokens INTEGER NOT NULL DEFAULT 0,
	latency_us        INTEGER NOT NULL DEFAULT 0,
	ttft_us           INTEGER NOT NULL DEFAULT 0,
	status            INTEGER NOT NULL DEFAULT 0,
	error_code        TEXT NOT NULL DEFAULT ''
);

CREATE INDEX usage_records_account_time ON usage_records(account_id, time);
CREATE INDEX usage_records_time ON usage_records(time);
