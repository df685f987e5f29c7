-- The site's leads by verdict in the per-site, per-day counters
-- (site_counters), so that the dashboard's leads per day and verdict, and
-- the metrics' leads by verdict, read a few rows instead of counting every
-- lead of the period (or of all time). 'verdicts' counts the leads
-- received on a day by their verdict now (dim): LeadInsert adds one, a new
-- verdict (LeadSetDecision, LeadAttemptSet) moves the lead from its old
-- verdict's count to the new one's on its day of receipt, in the same
-- transaction. An erased lead keeps its verdict and so its count, which
-- names nobody. The counts of the leads already there, once:
INSERT INTO site_counters (site_id, day, name, dim, shard, n)
SELECT site_id, received_at / 86400000, 'verdicts', verdict, 0, COUNT(*) FROM leads
GROUP BY site_id, received_at / 86400000, verdict;
