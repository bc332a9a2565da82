-- 0012: how much context a stored response holds, so a request that
-- continues it (previous_response_id) reserves what the vendor will bill
-- for that context: bound is what the response's own request reserved
-- (input and output tokens), input_tokens and output_tokens the vendor's
-- counts once its answer ended (NULL until then).

ALTER TABLE response_owners ADD COLUMN bound INTEGER NOT NULL DEFAULT 0;
ALTER TABLE response_owners ADD COLUMN input_tokens INTEGER;
ALTER TABLE response_owners ADD COLUMN output_tokens INTEGER;
