-- 0003: the owners of Responses API objects the vendor stores. All gateway
-- keys share the operator's vendor account, so the gateway records which
-- account created each response id and only that account may read it.

CREATE TABLE response_owners (
	id         TEXT PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	created_at INTEGER NOT NULL
);
