-- The owner's word on the leads by reason code, and in total, in the
-- per-site, per-day counters (site_counters), so that the dashboard's
-- learning card reads a few rows a code and day instead of the reasons of
-- every lead of the period: 'reasons' counts the leads received on a day
-- that carry a code with points (dim, the code), 'reasons_judged',
-- 'reasons_junk', 'reasons_customers', 'reasons_overturned' and
-- 'reasons_crm' the same leads by the owner's word (or a CRM stage's) on
-- them, and 'agreement' all of a day's leads by that word against the
-- rules' verdict at intake (dim judged, junk, missed, rescued,
-- crm_rescued). LeadInsert adds a lead's, a new decision (LeadSetDecision,
-- LeadAttemptSet) moves it, in the same transaction; erasure keeps the
-- codes and verdict, and no counter names a person. The counts of the
-- leads already there, once (the same SQL as Store.CountersRebuild's):
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, l.received_at / 86400000, 'reasons', json_extract(r.value, '$.code'), 0, COUNT(*)
FROM leads l, json_each(l.reasons) AS r
WHERE json_extract(r.value, '$.points') > 0 AND 1 = 1
GROUP BY l.site_id, l.received_at / 86400000, json_extract(r.value, '$.code');
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, l.received_at / 86400000, 'reasons_judged', json_extract(r.value, '$.code'), 0, COUNT(*)
FROM leads l, json_each(l.reasons) AS r
WHERE json_extract(r.value, '$.points') > 0 AND l.decided_by = 'owner'
GROUP BY l.site_id, l.received_at / 86400000, json_extract(r.value, '$.code');
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, l.received_at / 86400000, 'reasons_junk', json_extract(r.value, '$.code'), 0, COUNT(*)
FROM leads l, json_each(l.reasons) AS r
WHERE json_extract(r.value, '$.points') > 0 AND l.decided_by = 'owner' AND l.verdict = 'junk'
GROUP BY l.site_id, l.received_at / 86400000, json_extract(r.value, '$.code');
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, l.received_at / 86400000, 'reasons_customers', json_extract(r.value, '$.code'), 0, COUNT(*)
FROM leads l, json_each(l.reasons) AS r
WHERE json_extract(r.value, '$.points') > 0 AND l.decided_by = 'owner' AND l.verdict = 'clean'
GROUP BY l.site_id, l.received_at / 86400000, json_extract(r.value, '$.code');
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, l.received_at / 86400000, 'reasons_overturned', json_extract(r.value, '$.code'), 0, COUNT(*)
FROM leads l, json_each(l.reasons) AS r
WHERE json_extract(r.value, '$.points') > 0 AND l.decided_by IN ('owner', 'crm') AND l.verdict = 'clean' AND COALESCE((SELECT json_extract(h.data, '$.verdict') FROM lead_history h WHERE h.lead_id = l.id AND h.kind = 'verdict' ORDER BY h.at, h.id LIMIT 1), '') IN ('review', 'junk')
GROUP BY l.site_id, l.received_at / 86400000, json_extract(r.value, '$.code');
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, l.received_at / 86400000, 'reasons_crm', json_extract(r.value, '$.code'), 0, COUNT(*)
FROM leads l, json_each(l.reasons) AS r
WHERE json_extract(r.value, '$.points') > 0 AND l.decided_by = 'crm' AND l.verdict = 'clean' AND COALESCE((SELECT json_extract(h.data, '$.verdict') FROM lead_history h WHERE h.lead_id = l.id AND h.kind = 'verdict' ORDER BY h.at, h.id LIMIT 1), '') IN ('review', 'junk')
GROUP BY l.site_id, l.received_at / 86400000, json_extract(r.value, '$.code');
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, l.received_at / 86400000, 'agreement', 'judged', 0, COUNT(*) FROM leads l
WHERE l.decided_by = 'owner'
GROUP BY l.site_id, l.received_at / 86400000;
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, l.received_at / 86400000, 'agreement', 'junk', 0, COUNT(*) FROM leads l
WHERE l.decided_by = 'owner' AND l.verdict = 'junk'
GROUP BY l.site_id, l.received_at / 86400000;
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, l.received_at / 86400000, 'agreement', 'missed', 0, COUNT(*) FROM leads l
WHERE l.decided_by = 'owner' AND l.verdict = 'junk' AND COALESCE((SELECT json_extract(h.data, '$.verdict') FROM lead_history h WHERE h.lead_id = l.id AND h.kind = 'verdict' ORDER BY h.at, h.id LIMIT 1), '') = 'clean'
GROUP BY l.site_id, l.received_at / 86400000;
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, l.received_at / 86400000, 'agreement', 'rescued', 0, COUNT(*) FROM leads l
WHERE l.decided_by = 'owner' AND l.verdict = 'clean' AND COALESCE((SELECT json_extract(h.data, '$.verdict') FROM lead_history h WHERE h.lead_id = l.id AND h.kind = 'verdict' ORDER BY h.at, h.id LIMIT 1), '') IN ('review', 'junk')
GROUP BY l.site_id, l.received_at / 86400000;
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, l.received_at / 86400000, 'agreement', 'crm_rescued', 0, COUNT(*) FROM leads l
WHERE l.decided_by = 'crm' AND l.verdict = 'clean' AND COALESCE((SELECT json_extract(h.data, '$.verdict') FROM lead_history h WHERE h.lead_id = l.id AND h.kind = 'verdict' ORDER BY h.at, h.id LIMIT 1), '') IN ('review', 'junk')
GROUP BY l.site_id, l.received_at / 86400000;
