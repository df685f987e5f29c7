-- leads_site_verdict kept the metrics' leads by site and verdict cheap: a
-- count over the whole index at every scrape, growing with every lead. The
-- metrics now read the verdict counters (0261), and the inbox's verdict
-- filter walks (site_id, received_at) newest first, so the index goes: one
-- B-tree fewer for every lead written.
DROP INDEX leads_site_verdict;
