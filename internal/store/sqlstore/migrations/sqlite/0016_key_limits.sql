-- 0016: a key's own rate limits: requests per minute (rpm), tokens per
-- minute (tpm) and requests running at once (concurrency); 0 is no limit
-- of the key's own (its group's applies, if any). They override the
-- group's (groups.G.limits). The gateway caches keys, so a change must move
-- keys_version for cached keys to be read again: the trigger of 0011 is
-- recreated with the new columns.
ALTER TABLE api_keys ADD COLUMN rpm INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN tpm INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN concurrency INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER api_keys_changed;
CREATE TRIGGER api_keys_changed
AFTER UPDATE OF hash, account_id, group_name, revoked_at, expires_at, spend_cap, rpm, tpm, concurrency ON api_keys
BEGIN
	UPDATE keys_version SET version = version + 1 WHERE id = 1;
END;
