-- 0007: usage rollups, so UsageStats reads a few rows per (account, key,
-- model) and day instead of every usage record.
--
-- usage_rollups sums an account's records by UTC hour, key and model;
-- usage_rollups_daily sums the same records by UTC day. hour and day are
-- the start of the hour or day in Unix microseconds (the record's time
-- floored, also before 1970), so a day's row equals the sum of its 24
-- hours' rows. UsageStats reads whole days from the daily table and the
-- hours at the ends of its range from the hourly one.
--
-- InsertUsage keeps both in the transaction that stores the records,
-- counting only records that were new; records without an account are not
-- rolled up. PurgeUsage deletes usage records but never rollups: statistics
-- outlive the records' retention.
CREATE TABLE usage_rollups (
	account_id        TEXT NOT NULL,
	hour              INTEGER NOT NULL,
	key_id            TEXT NOT NULL,
	model             TEXT NOT NULL,
	requests          INTEGER NOT NULL DEFAULT 0,
	prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	completion_tokens INTEGER NOT NULL DEFAULT 0,
	cost              INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (account_id, hour, key_id, model)
) WITHOUT ROWID;

CREATE TABLE usage_rollups_daily (
	account_id        TEXT NOT NULL,
	day               INTEGER NOT NULL,
	key_id            TEXT NOT NULL,
	model             TEXT NOT NULL,
	requests          INTEGER NOT NULL DEFAULT 0,
	prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	completion_tokens INTEGER NOT NULL DEFAULT 0,
	cost              INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (account_id, day, key_id, model)
) WITHOUT ROWID;

INSERT INTO usage_rollups
	(account_id, hour, key_id, model, requests, prompt_tokens, completion_tokens, cost)
SELECT account_id, (time / 3600000000 - (time % 3600000000 < 0)) * 3600000000,
	key_id, model, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost)
FROM usage_records WHERE account_id <> ''
GROUP BY 1, 2, 3, 4;

INSERT INTO usage_rollups_daily
	(account_id, day, key_id, model, requests, prompt_tokens, completion_tokens, cost)
SELECT account_id, (hour / 86400000000 - (hour % 86400000000 < 0)) * 86400000000,
	key_id, model, SUM(requests), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost)
FROM usage_rollups
GROUP BY 1, 2, 3, 4;
