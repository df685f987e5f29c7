-- The readiness page's Instant Forms figure from the per-day counters
-- (site_counters), not a count of the period's leads: 'lead_ads' counts the
-- leads received on a day that carry a Lead Ads id. LeadInsert adds a
-- lead's, erasure and retention (LeadRedact, which takes the id) take it
-- away, in the same transaction; the verdicts the page also reads are
-- counted since migration 0261. The counts of the leads already there,
-- once (the same SQL as Store.CountersRebuild's):
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT site_id, received_at / 86400000, 'lead_ads', '', 0, COUNT(*) FROM leads
WHERE lead_ads_id <> '' GROUP BY site_id, received_at / 86400000;
