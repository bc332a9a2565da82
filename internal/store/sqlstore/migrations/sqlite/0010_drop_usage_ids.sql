-- 0010: usage_ids goes. It held the request id of every stored record so
-- that InsertUsage could skip a record stored before; keeping that B-tree
-- entry cost ~2 µs of CPU per record, more than storing the record in its
-- block. The recorder's first attempt at a batch now stores it without
-- looking (AppendUsage: its records are new by construction), and
-- InsertUsage (a retried batch, a replayed journal, a finished video task)
-- finds stored ids in the blocks themselves: a stored record is in a block
-- of its account whose first_time..last_time holds its time
-- (docs/usage-records.md, "Duplicates").
DROP TABLE usage_ids;
