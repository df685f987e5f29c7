-- A lead kept its e-mail twice: as written (email) and as its key (email_key,
-- normalised, for the same person's earlier lead, LeadFind, the inbox's
-- search by a whole address and the erasure's look-up). Most addresses are
-- written as their key: 24-25 bytes a lead twice. Now email_key holds '='
-- when it is the e-mail as written; the store reads the key as
-- (CASE email_key WHEN '=' THEN email ELSE email_key END), which is what
-- leads_email_recent indexes, and every look-up by the key says it so.
-- A key is a normalised address (it has an '@'), never '='.
--
-- Unlike SQLite's twin, this one leaves the stored leads as they are (a
-- whole key reads the same through the expression) and only new leads keep
-- their e-mail once: an UPDATE of every lead is not HOT (the heap's pages
-- are full), so each lead would go again into its twelve other indexes, the
-- search GIN's trigrams included, and a database in service would grow
-- (measured at 10,000 leads after a plain VACUUM: 7,424 -> 8,528 bytes a
-- lead) where only a VACUUM FULL or a dump and restore would show the 26
-- bytes a lead saved. docs/performance.md says how to rewrite them anyway.
DROP INDEX leads_email_recent;
CREATE INDEX leads_email_recent ON leads (site_id, (CASE email_key WHEN '=' THEN email ELSE email_key END), received_at)
    WHERE email_key <> '';
