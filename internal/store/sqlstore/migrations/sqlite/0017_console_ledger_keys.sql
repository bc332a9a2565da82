-- 0017: what the console's balance history, key editing and operator
-- pages need (issue 32).
--
-- Redeemed codes get their own ledger kind. RedeemCode posted its credit
-- as a 'topup' with ref 'code:'+ID; from now on it posts kind 'code', and
-- the entries it posted before are rewritten so the history shows them the
-- same way. The ledger has no CHECK on kind. Nothing sums top-ups by kind,
-- so no total changes meaning; balances are untouched (amounts stay).
UPDATE ledger SET kind = 'code' WHERE kind = 'topup' AND ref LIKE 'code:%';

-- A key can be disabled without being revoked: disabled_at is when
-- (NULL: enabled). A disabled key is refused like a revoked one until it is
-- enabled again. The gateway caches keys, so enabling or disabling must
-- move keys_version: the trigger of 0016 is recreated with the new column.
ALTER TABLE api_keys ADD COLUMN disabled_at INTEGER;

DROP TRIGGER api_keys_changed;
CREATE TRIGGER api_keys_changed
AFTER UPDATE OF hash, account_id, group_name, revoked_at, expires_at, spend_cap, rpm, tpm, concurrency,
	disabled_at ON api_keys
BEGIN
	UPDATE keys_version SET version = version + 1 WHERE id = 1;
END;

-- LedgerPage walks an account's charges newest first without decoding
-- every block: first_charge is the smallest charge id a block holds (NULL
-- for the blocks written before this migration, which LedgerPage decodes
-- to find out; 0 never occurs for a block with charges). Blocks hold
-- disjoint runs of charge ids in the order of their ids, so walking
-- (account_id, id) descending walks the charges descending; the index
-- covers first_charge so the blocks wholly at or after a page's cursor are
-- skipped without reading their data.
ALTER TABLE usage_blocks ADD COLUMN first_charge INTEGER;
CREATE INDEX usage_blocks_account_charges ON usage_blocks(account_id, id, first_charge) WHERE charges > 0;
