-- A lead kept its e-mail twice: as written (email) and as its key (email_key,
-- normalised, for the same person's earlier lead, LeadFind, the inbox's
-- search by a whole address and the erasure's look-up). Most addresses are
-- written as their key: 24-25 bytes a lead twice. Now email_key holds '='
-- when it is the e-mail as written; the store reads the key as
-- (CASE email_key WHEN '=' THEN email ELSE email_key END), which is what
-- leads_email_recent indexes, and every look-up by the key says it so.
-- A key is a normalised address (it has an '@'), never '='.
-- On SQLite the stored leads are rewritten: the search index's trigger does
-- not fire for email_key, and the bytes saved come back at the next VACUUM.
DROP INDEX leads_email_recent;
UPDATE leads SET email_key = '=' WHERE email_key <> '' AND email_key = email;
CREATE INDEX leads_email_recent ON leads (site_id, (CASE email_key WHEN '=' THEN email ELSE email_key END), received_at)
    WHERE email_key <> '';
