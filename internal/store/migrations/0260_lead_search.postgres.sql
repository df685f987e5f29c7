-- The inbox's search by name, e-mail, phone and message words through an
-- index, not a LIKE scan of every lead (257 ms for a search that matched
-- nothing at 100,000 leads on SQLite, growing with each lead): a GIN index
-- of trigrams (pg_trgm) over the lowered text of the name, e-mail, phone
-- (as written, and its digits with the country code) and message, which
-- serves the LIKE '%...%' of three characters or more. It is kept by
-- PostgreSQL in the lead's own transaction, and an erased lead's emptied
-- text leaves it with the row's old version (vacuum removes both).
-- pg_trgm ships with PostgreSQL (contrib) and is a trusted extension: the
-- database's owner may create it. It is created once per database, in
-- public when there is one, so that dropping one schema (a test's) never
-- takes it from another; the operator class is named with its schema.
DO $$
DECLARE s text;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('cleanads pg_trgm'));
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'public') THEN
            CREATE EXTENSION pg_trgm SCHEMA public;
        ELSE
            CREATE EXTENSION pg_trgm;
        END IF;
    END IF;
    SELECT n.nspname INTO s FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
    EXECUTE format('CREATE INDEX leads_search ON leads USING gin ((lower(name || '' '' || first_name || '' '' || last_name
        || '' '' || email || '' '' || phone || '' '' || phone_key || '' '' || message)) %I.gin_trgm_ops)', s);
END $$;
