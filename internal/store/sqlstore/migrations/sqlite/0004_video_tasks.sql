-- 0004: asynchronous video generation tasks (store.VideoTask).
-- Times are Unix microseconds; started_at, finished_at and lease_until are
-- NULL while unset. A task is open while its state is pending or
-- processing; every partial index below spells that predicate exactly as
-- the queries in tasks.go do, so the planner can use it.

CREATE TABLE video_tasks (
	id               TEXT PRIMARY KEY,
	account_id       TEXT NOT NULL REFERENCES accounts(id),
	key_id           TEXT NOT NULL DEFAULT '',
	request_id       TEXT NOT NULL DEFAULT '',
	model            TEXT NOT NULL DEFAULT '',
	provider         TEXT NOT NULL DEFAULT '',
	upstream_model   TEXT NOT NULL DEFAULT '',
	upstream_id      TEXT NOT NULL DEFAULT '',
	upstream_ref     TEXT NOT NULL DEFAULT '',
	prompt           TEXT NOT NULL DEFAULT '',
	size             TEXT NOT NULL DEFAULT '',
	seconds          INTEGER NOT NULL DEFAULT 0,
	upstream_seconds INTEGER NOT NULL DEFAULT 0,
	state            TEXT NOT NULL
		CHECK (state IN ('pending', 'processing', 'completed', 'failed')),
	progress         INTEGER NOT NULL DEFAULT 0,
	error            TEXT NOT NULL DEFAULT '',
	price            INTEGER NOT NULL DEFAULT 0,
	ratio_ppm        INTEGER NOT NULL DEFAULT 0,
	held             INTEGER NOT NULL DEFAULT 0,
	cost             INTEGER NOT NULL DEFAULT 0,
	content_key      TEXT NOT NULL DEFAULT '',
	content_type     TEXT NOT NULL DEFAULT '',
	content_size     INTEGER NOT NULL DEFAULT 0,
	created_at       INTEGER NOT NULL,
	started_at       INTEGER,
	finished_at      INTEGER,
	expires_at       INTEGER NOT NULL,
	deadline         INTEGER NOT NULL,
	next_poll_at     INTEGER NOT NULL,
	polls            INTEGER NOT NULL DEFAULT 0,
	lease_owner      TEXT NOT NULL DEFAULT '',
	lease_until      INTEGER,
	updated_at       INTEGER NOT NULL
);

-- An account's listing, both directions, with the (created_at, id) cursor.
CREATE INDEX video_tasks_account_created ON video_tasks(account_id, created_at, id);

-- The poller's claim: open tasks, earliest next_poll_at first.
CREATE INDEX video_tasks_open_due ON video_tasks(next_poll_at, id)
	WHERE state IN ('pending', 'processing');

-- Account.Held and Key.Held: the sums read only these (covering) indexes.
CREATE INDEX video_tasks_open_account ON video_tasks(account_id, held)
	WHERE state IN ('pending', 'processing');
CREATE INDEX video_tasks_open_key ON video_tasks(key_id, held)
	WHERE state IN ('pending', 'processing');

-- The expiry sweep: final tasks, oldest first.
CREATE INDEX video_tasks_final_created ON video_tasks(created_at, id)
	WHERE state IN ('completed', 'failed');
