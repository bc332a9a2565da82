-- 0013: background Responses API requests (store.ResponseTask). The vendor
-- answers "queued" and runs the response afterwards, so the reservation
-- lives in this row until a worker or a client's GET or cancel sees the
-- response end and settles it, once. Times are Unix microseconds;
-- finished_at and lease_until are NULL while unset. A task is open while
-- its status is queued or in_progress; every partial index below spells
-- that predicate exactly as the queries in response_tasks.go do, so the
-- planner can use it.

CREATE TABLE response_tasks (
	id                 TEXT PRIMARY KEY,
	account_id         TEXT NOT NULL REFERENCES accounts(id),
	key_id             TEXT NOT NULL DEFAULT '',
	request_id         TEXT NOT NULL DEFAULT '',
	model              TEXT NOT NULL DEFAULT '',
	provider           TEXT NOT NULL DEFAULT '',
	upstream_model     TEXT NOT NULL DEFAULT '',
	status             TEXT NOT NULL
		CHECK (status IN ('queued', 'in_progress', 'completed', 'failed', 'incomplete', 'cancelled')),
	error              TEXT NOT NULL DEFAULT '',
	input_price        INTEGER NOT NULL DEFAULT 0,
	cached_input_price INTEGER NOT NULL DEFAULT 0,
	output_price       INTEGER NOT NULL DEFAULT 0,
	ratio_ppm          INTEGER NOT NULL DEFAULT 0,
	held               INTEGER NOT NULL DEFAULT 0,
	cost               INTEGER NOT NULL DEFAULT 0,
	prompt_estimate    INTEGER NOT NULL DEFAULT 0,
	terms              TEXT NOT NULL DEFAULT '',
	created_at         INTEGER NOT NULL,
	finished_at        INTEGER,
	deadline           INTEGER NOT NULL,
	next_poll_at       INTEGER NOT NULL,
	polls              INTEGER NOT NULL DEFAULT 0,
	lease_owner        TEXT NOT NULL DEFAULT '',
	lease_until        INTEGER,
	updated_at         INTEGER NOT NULL
);

-- The worker's claim: open tasks, earliest next_poll_at first.
CREATE INDEX response_tasks_open_due ON response_tasks(next_poll_at, id)
	WHERE status IN ('queued', 'in_progress');

-- Account.Held and Key.Held: the sums read only these (covering) indexes.
CREATE INDEX response_tasks_open_account ON response_tasks(account_id, held)
	WHERE status IN ('queued', 'in_progress');
CREATE INDEX response_tasks_open_key ON response_tasks(key_id, held)
	WHERE status IN ('queued', 'in_progress');

-- The purge: final tasks, oldest first.
CREATE INDEX response_tasks_final_created ON response_tasks(created_at, id)
	WHERE status IN ('completed', 'failed', 'incomplete', 'cancelled');
