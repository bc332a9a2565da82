-- 0009: usage records are stored as blocks, one row per batch and account,
-- instead of one row per record (docs/usage-records.md, "Blocks"). A row
-- of usage_records cost ~10 µs of CPU to insert (binding its ~20 values and
-- four B-tree inserts); a block costs that once for up to a whole batch.
--
--   account_id   the account of every record in the block ('' for records
--                without an account);
--   first_time,  the oldest and newest record time (Unix microseconds):
--   last_time    listings walk blocks by last_time, newest first, and
--                PurgeUsage by first_time, oldest first;
--   records      how many records data holds;
--   charges,     how many of them hold a charge and the sum of those
--   charged      charges (LedgerSum reads the sum, ListLedger the blocks
--                with charges);
--   data         the records, encoded as internal/store/sqlite/usage_block.go
--                describes (a version byte first).
--
-- Records written before this migration are moved from usage_records into
-- blocks by the store when it opens (convertLegacyUsage), a few thousand
-- per transaction, so a crash in the middle loses nothing and the move
-- continues at the next start. usage_records stays, empty, for that.
CREATE TABLE usage_blocks (
	id         INTEGER PRIMARY KEY,
	account_id TEXT NOT NULL,
	first_time INTEGER NOT NULL,
	last_time  INTEGER NOT NULL,
	records    INTEGER NOT NULL,
	charges    INTEGER NOT NULL,
	charged    INTEGER NOT NULL,
	data       BLOB NOT NULL
);

CREATE INDEX usage_blocks_account_last ON usage_blocks(account_id, last_time);
CREATE INDEX usage_blocks_last ON usage_blocks(last_time);
CREATE INDEX usage_blocks_first ON usage_blocks(first_time);

-- usage_ids holds the request id of every stored record, so InsertUsage
-- skips a record stored before (a retried batch, a replayed journal)
-- exactly. Request ids are time-ordered, so it grows by appends. PurgeUsage
-- deletes the ids of the records it deletes.
CREATE TABLE usage_ids (
	request_id TEXT PRIMARY KEY
) WITHOUT ROWID;
