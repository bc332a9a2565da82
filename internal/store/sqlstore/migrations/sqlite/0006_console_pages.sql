-- 0006: what the console's pages need: disabled and admin accounts, the
-- last use of each key, and one-time admin sign-in links. Times are Unix
-- microseconds; optional times are NULL while unset. The account's usage
-- listing and stats use usage_records_account_time from 0001.

-- disabled_at is NULL while the account is enabled; admin is 0 or 1.
ALTER TABLE accounts ADD COLUMN disabled_at INTEGER;
ALTER TABLE accounts ADD COLUMN admin INTEGER NOT NULL DEFAULT 0;

-- last_used_at is the newest time of the key's usage records, kept by
-- InsertUsage; NULL while the key was never used.
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;

UPDATE api_keys SET last_used_at = u.last_used
	FROM (SELECT key_id, MAX(time) AS last_used FROM usage_records
	      WHERE key_id <> '' GROUP BY key_id) AS u
	WHERE u.key_id = api_keys.id;

-- A link signs in once: used_at is set by the single UPDATE that uses it.
-- Only the SHA-256 of the secret is stored.
CREATE TABLE login_links (
	id         TEXT PRIMARY KEY,
	hash       BLOB NOT NULL UNIQUE,
	account    TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	used_at    INTEGER
);
