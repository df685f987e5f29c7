-- The search index keyed by the lead's day too, so that a search reads
-- its matches newest first a window of days at a time and stops at a
-- page (leadSearchDays), where leads_search (0260) gave every lead that
-- has the term, then sorted them: at a million leads a name's 1,300 leads,
-- each row on its own page, 2,579 buffers and 155-251 ms. A GIN index of
-- two columns: the lead's UTC day, received_at / 86400000, as a
-- one-element array (the built-in array_ops, so no extension but pg_trgm:
-- btree_gin would give a plain integer key, and is one more contrib
-- extension to create) and the trigrams of the same lowered text as
-- before. A search asks for both, the term's trigrams and the window's
-- days (ARRAY[day] && '{d1,...}'), and GIN intersects their lists; one
-- with the text alone (the older days, in one go) is served by it as the
-- old index served it, so that one is dropped. Each lead adds one item to
-- its day's list (a byte or two compressed); the pending list is kept at
-- 1 MB as 0400 set it for the old index. Building it holds writes to
-- leads (in the migration's transaction) for as long as the build takes.
DO $$
DECLARE s text;
BEGIN
    SELECT n.nspname INTO s FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
    EXECUTE format('CREATE INDEX leads_search_days ON leads USING gin ((ARRAY[received_at / 86400000]),
        (lower(name || '' '' || first_name || '' '' || last_name || '' '' || email || '' '' || phone || '' '' || phone_key
        || '' '' || message)) %I.gin_trgm_ops) WITH (gin_pending_list_limit = 1024)', s);
END $$;
DROP INDEX leads_search;
