-- A site's Lead Ads secrets (the Page or system-user token, the Meta app's
-- secret, the webhook's verify token), sealed as one value as the Meta
-- access token is.
ALTER TABLE sites ADD COLUMN lead_ads_secret TEXT NOT NULL DEFAULT '';

-- How far the backfill has read each form's leads: the created time (Unix
-- milliseconds) up to which every lead of the form is known to be in, so
-- the next pass asks only for newer ones (with an overlap; the fetch is
-- idempotent on the lead id).
CREATE TABLE leadads_watermarks (
    site_id    TEXT NOT NULL,
    form_id    TEXT NOT NULL,
    page_id    TEXT NOT NULL,
    until_ms   BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (site_id, form_id)
);
