-- The B-trees whose entries arrive in key order (time-ordered ids, times,
-- days) fill their pages to the brim. PostgreSQL builds an index (CREATE
-- INDEX, REINDEX, VACUUM FULL, a restore) to its fillfactor, 90 by default,
-- and splits the page where keys are appended, at the right end of the tree
-- or of one site's range, to the same fill: a tenth of every such page was
-- left for inserts that seldom come, as a page behind the newest key loses
-- entries and rarely gains one. Random keys (event ids, e-mail and phone
-- keys, visitors) keep the default: they insert into every page, and a full
-- page splits at the first. Only a setting: the indexes are not rewritten
-- here (new pages fill at once, the old ones when the index is rebuilt), so
-- this takes no time on a database of any size. IF EXISTS: an index that
-- another change has dropped or replaced is that change's own.
ALTER INDEX IF EXISTS leads_pkey SET (fillfactor = 100);
ALTER INDEX IF EXISTS leads_received SET (fillfactor = 100);
ALTER INDEX IF EXISTS leads_site_received SET (fillfactor = 100);
ALTER INDEX IF EXISTS leads_site_changed SET (fillfactor = 100);
ALTER INDEX IF EXISTS leads_click_kept SET (fillfactor = 100);
ALTER INDEX IF EXISTS deliveries_pkey SET (fillfactor = 100);
ALTER INDEX IF EXISTS delivery_events_lead SET (fillfactor = 100);
ALTER INDEX IF EXISTS delivery_events_archived SET (fillfactor = 100);
ALTER INDEX IF EXISTS visitors_last_seen SET (fillfactor = 100);
