-- The CRM stages in the per-site, per-day counters (site_counters), so that
-- the dashboard's won deals and revenue cost a read of a few rows: 'stages'
-- counts the stages reached on a day (the stage's own time), split by stage;
-- 'stage_cents' adds up their values in hundredths, split by stage and
-- currency ('won EUR'), rounded half up (store.LeadStageInsert keeps them
-- from now on, store.CountersRebuild recounts them). Twins only because the
-- engines round a real cast to an integer differently.
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, s.at / 86400000, 'stages', s.stage, 0, COUNT(*) FROM lead_stages s JOIN leads l ON l.id = s.lead_id
GROUP BY l.site_id, s.at / 86400000, s.stage;
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, s.at / 86400000, 'stage_cents', s.stage || ' ' || s.currency, 0, SUM(CAST(FLOOR(s.value * 100 + 0.5) AS BIGINT))
FROM lead_stages s JOIN leads l ON l.id = s.lead_id WHERE s.value IS NOT NULL AND s.currency <> ''
GROUP BY l.site_id, s.at / 86400000, s.stage, s.currency;
