-- 0011: keys_version counts the changes that can make a verified API key
-- stop authenticating: a key revoked, deleted or changed in what
-- authentication reads (its hash, account, group, cap or expiry), or an
-- account disabled, enabled or deleted. The gateway caches verified keys
-- and, once the cache's TTL has passed, reads this one number instead of
-- every cached key again: while it is unchanged, no cached key changed.
-- The triggers keep it whoever writes (the gateway, the CLI, the console,
-- another replica). Writes that leave authentication alone (a key's spent
-- and last use, an account's balance, a new key: failures are never
-- cached) do not touch it, so the usage flusher's updates never do.
CREATE TABLE keys_version (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	version INTEGER NOT NULL
);
INSERT INTO keys_version (id, version) VALUES (1, 0);

CREATE TRIGGER api_keys_changed
AFTER UPDATE OF hash, account_id, group_name, revoked_at, expires_at, spend_cap ON api_keys
BEGIN
	UPDATE keys_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
BEGIN
	UPDATE keys_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER accounts_disabled_changed AFTER UPDATE OF disabled_at ON accounts
BEGIN
	UPDATE keys_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER accounts_deleted AFTER DELETE ON accounts
BEGIN
	UPDATE keys_version SET version = version + 1 WHERE id = 1;
END;
