-- Operations: when a lead's contact details were removed (retention or
-- forget), and the indexes that keep metrics at scrape time and the
-- retention sweeps cheap.
ALTER TABLE leads ADD COLUMN redacted_at BIGINT;
CREATE INDEX leads_site_verdict ON leads (site_id, verdict);
CREATE INDEX deliveries_site_state ON deliveries (site_id, state);
CREATE INDEX visits_at ON visits (at);
CREATE INDEX visitors_last_seen ON visitors (last_seen);
CREATE INDEX form_token_uses_used_at ON form_token_uses (used_at);
-- When a delivery's payload lost the IP, user agent, fbc, fbp and URL it
-- carried in clear (its hashes stay).
ALTER TABLE deliveries ADD COLUMN redacted_at BIGINT;
CREATE INDEX deliveries_created ON deliveries (created_at);
