-- The search index without its pending list: 263 bytes a lead where it
-- was 709 (10,000 leads of cmd/cleanads-scale). With fastupdate (the
-- default) a new lead's trigrams go to a pending list that vacuum or a
-- full list merges into the index later, and those merges leave its pages
-- half empty: the same leads inserted 500 at a time made an index of 673
-- bytes a lead with it, 263 without, 292 built at once. Without it each
-- lead's trigrams go into the index with the lead, and a search no longer
-- reads the pending list's recent entries one by one (25-31 ms at 10,000
-- leads). The index is rebuilt once, dense, from the leads there: writes
-- to leads wait for it (SHARE lock) while it builds.
ALTER INDEX leads_search SET (fastupdate = off);
REINDEX INDEX leads_search;
