-- 0014: refunds and disputes of paid top-ups, and what a top-up's
-- creation is counted by.
--
-- payment_ref is the provider's id of the payment (Stripe's PaymentIntent),
-- set when the top-up is paid: refunds and disputes name the payment, not
-- the Checkout Session. reversed is the part of credited taken back from
-- the account, bonus_reversed the same share of bonus; both only grow.
ALTER TABLE topups ADD COLUMN payment_ref TEXT NOT NULL DEFAULT '';
ALTER TABLE topups ADD COLUMN reversed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE topups ADD COLUMN bonus_reversed INTEGER NOT NULL DEFAULT 0;

CREATE UNIQUE INDEX topups_payment ON topups(provider, payment_ref) WHERE payment_ref <> '';

-- The provider's running totals of what it took back from a payment, by
-- kind: a charge's amount_refunded, a dispute's amount, in micro-units.
-- Kept also for a payment no top-up is paid with yet (events arrive in any
-- order), so paying it later applies them.
CREATE TABLE topup_reversals (
	provider    TEXT NOT NULL,
	payment_ref TEXT NOT NULL,
	kind        TEXT NOT NULL CHECK (kind IN ('refund', 'dispute')),
	total       INTEGER NOT NULL CHECK (total >= 0),
	updated_at  INTEGER NOT NULL,
	PRIMARY KEY (provider, payment_ref, kind)
);
