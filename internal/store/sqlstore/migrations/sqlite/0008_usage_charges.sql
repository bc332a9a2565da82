-- 0008: a usage record holds its own charge. Until now InsertUsage wrote
-- a ledger row per charged request next to the record; that row was a
-- third of a record's cost (docs/usage-records.md). From now on the charge
-- is two columns of the record:
--
--   charge_id      the charge's ledger entry id, taken from the ledger's
--                  own AUTOINCREMENT sequence (sqlite_sequence 'ledger'),
--                  so charges and ledger rows share one id space and
--                  ListLedger orders them together; NULL when the record
--                  charged nothing (no cost, no account, or its charge
--                  was already posted);
--   balance_after  the account's balance after the charge.
--
-- ListLedger and LedgerSum read the ledger table and these columns.
-- PurgeUsage copies the charges of the records it deletes into the ledger
-- table with the same id, so the ledger reads the same before and after.
-- Charges posted before this migration stay where they are.
ALTER TABLE usage_records ADD COLUMN charge_id INTEGER;
ALTER TABLE usage_records ADD COLUMN balance_after INTEGER NOT NULL DEFAULT 0;

-- The sequence row exists from the first ledger insert on; make sure it
-- exists from now on, since InsertUsage reads and advances it.
INSERT INTO sqlite_sequence (name, seq)
SELECT 'ledger', COALESCE((SELECT MAX(id) FROM ledger), 0)
WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'ledger');

-- usage_charged_through is the latest record time whose charge may be in
-- the ledger table rather than in its record: charges posted before this
-- migration, and those PurgeUsage moved there. A record stored again
-- (a crash journal replayed late) with a time at or before it is looked up
-- in the ledger before it is charged; a newer one cannot have been charged
-- before, so the common batch does no lookup.
CREATE TABLE usage_charged_through (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	through INTEGER NOT NULL
);
INSERT INTO usage_charged_through (id, through)
SELECT 1, COALESCE(MAX(created_at), -9223372036854775808) FROM ledger WHERE kind = 'charge';
