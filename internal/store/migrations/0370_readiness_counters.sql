-- The readiness page's event figures from the per-day counters
-- (site_counters), not a read of each lead of the period with its Meta
-- events and stages: 'ready_waits' counts the Meta events that Meta
-- accepted (or that were built for a dry-run site) of the leads received
-- on a day, by kind, event name and wait after the lead in tenths of a day
-- (model.ReadyWaitDim); 'ready_uploaded' the leads received on a day with
-- at least one; 'ready_uploads' those events by the day they were
-- accepted. DeliveryRecord and DeliveryInsertAll add an event's in the
-- transaction that records it sent or built. The counts of the events
-- already there, once (the SQL of Store.CountersRebuild's, over every
-- site):
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT site_id, day, 'ready_waits', kind || '|' || event_name || '|' || CAST(bucket AS TEXT), 0, COUNT(*)
FROM (SELECT d.site_id AS site_id, d.kind AS kind, e.event_name AS event_name, l.received_at / 86400000 AS day,
		CASE WHEN (COALESCE(s.at, CASE WHEN d.kind = 'qualified' THEN d.created_at ELSE l.received_at END) - l.received_at) <= 0 THEN 0
			WHEN (COALESCE(s.at, CASE WHEN d.kind = 'qualified' THEN d.created_at ELSE l.received_at END) - l.received_at) >= 31536000000 THEN 3650
			ELSE (COALESCE(s.at, CASE WHEN d.kind = 'qualified' THEN d.created_at ELSE l.received_at END) - l.received_at) / 8640000 END AS bucket
	FROM delivery_state d JOIN delivery_events e ON e.id = d.id
	JOIN leads l ON l.id = e.lead_id
	LEFT JOIN lead_stages s ON s.lead_id = l.id AND d.kind = 'stage:' || s.stage
	WHERE e.lead_id <> '' AND d.destination = 'meta' AND d.state IN ('sent', 'dry_run')) r
GROUP BY site_id, day, kind, event_name, bucket;
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT l.site_id, l.received_at / 86400000, 'ready_uploaded', '', 0, COUNT(DISTINCT l.id)
FROM delivery_state d JOIN delivery_events e ON e.id = d.id
JOIN leads l ON l.id = e.lead_id
WHERE e.lead_id <> '' AND d.destination = 'meta' AND d.state IN ('sent', 'dry_run')
GROUP BY l.site_id, l.received_at / 86400000;
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT d.site_id, COALESCE(d.sent_at, d.created_at) / 86400000, 'ready_uploads', '', 0, COUNT(*)
FROM delivery_state d JOIN delivery_events e ON e.id = d.id
JOIN leads l ON l.id = e.lead_id
WHERE e.lead_id <> '' AND d.destination = 'meta' AND d.state IN ('sent', 'dry_run')
GROUP BY d.site_id, COALESCE(d.sent_at, d.created_at) / 86400000;
