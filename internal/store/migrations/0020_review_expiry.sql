-- When a review lead's wait for evidence ran out unconfirmed.
ALTER TABLE leads ADD COLUMN review_expired_at BIGINT;
