-- The Lead Ads leads erased on a person's request (cleanads forget) or by
-- retention: the SHA-256 of each leadgen id, per site, so that neither a
-- redelivered webhook nor the backfill's overlap reads the lead from Meta
-- again and stores the person anew. Only the hash is kept: the table is not
-- a list of ids to fetch the person back with.
CREATE TABLE leadads_erased (
    site_id     TEXT NOT NULL,
    leadgen_key TEXT NOT NULL,
    erased_at   BIGINT NOT NULL,
    PRIMARY KEY (site_id, leadgen_key)
);
