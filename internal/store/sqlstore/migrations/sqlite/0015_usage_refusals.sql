-- 0015: requests an authenticated key had refused before any upstream
-- call (a bad parameter, an unknown model, no balance, a rate limit) are
-- counted, one row per account, key, UTC minute, endpoint and reason, instead of
-- leaving a usage record each: a key with no balance can send thousands
-- of them a second and records are kept for months.
--
-- minute is the start of the UTC minute in Unix microseconds; status the
-- HTTP status the client got; count how many were refused. PurgeRefusals
-- deletes rows past usage.retention, as records are.
CREATE TABLE usage_refusals (
	account_id TEXT NOT NULL,
	key_id     TEXT NOT NULL,
	minute     INTEGER NOT NULL,
	endpoint   TEXT NOT NULL,
	reason     TEXT NOT NULL,
	status     INTEGER NOT NULL,
	count      INTEGER NOT NULL,
	PRIMARY KEY (account_id, minute, key_id, endpoint, reason)
) WITHOUT ROWID;

CREATE INDEX usage_refusals_minute ON usage_refusals(minute);
