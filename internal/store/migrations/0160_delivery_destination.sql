-- The outbox serves more than Meta's Conversions API: a Lead Ads lead is
-- fetched from the Graph API by the same machinery (destination
-- meta_leadgen), and Google's Data Manager API will be one more. Every row
-- says where it goes; the rows before this all went to Meta. The claim goes
-- per site and destination, so the claim's index is by both: a destination
-- that is held back (backing off, paused) costs a seek, not a walk past its
-- backlog, and never holds another destination's rows of the same site.
ALTER TABLE deliveries ADD COLUMN destination TEXT NOT NULL DEFAULT 'meta';
DROP INDEX deliveries_claimable;
CREATE INDEX deliveries_claimable ON deliveries (site_id, destination, deadline_at, id, next_at)
    WHERE state IN ('pending', 'retry') AND lease_owner = '';

-- A destination other than meta pauses a site's rows here (Meta's pause
-- stays on sites.paused_reason): one platform's refused token never holds
-- another's rows. The row goes when the pause is lifted.
CREATE TABLE destination_pauses (
    site_id     TEXT NOT NULL,
    destination TEXT NOT NULL,
    reason      TEXT NOT NULL,
    paused_at   BIGINT NOT NULL,
    PRIMARY KEY (site_id, destination)
);
