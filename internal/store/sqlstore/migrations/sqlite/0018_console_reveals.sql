-- 0018: secrets waiting to be shown once. A console form that creates a
-- secret too large for a cookie (a batch of redeem codes) answers 303 and
-- keeps the secret here, sealed under the console's cookie key, until the
-- page it redirects to takes it (deleting the row) or it expires (a few
-- minutes). Any replica may serve that page, so it is not process memory.
CREATE TABLE console_reveals (
	id         TEXT PRIMARY KEY,
	sealed     BLOB NOT NULL,
	expires_at INTEGER NOT NULL
);
CREATE INDEX console_reveals_expires ON console_reveals(expires_at);
