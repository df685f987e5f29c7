-- A lead's history is read only by its lead, oldest first: see the SQLite
-- twin. PostgreSQL keeps a table apart from its indexes, so the table
-- stays and its key becomes (lead_id, at, id), the order it is read in:
-- the id's own index and lead_history_lead (lead_id, at) go, one B-tree
-- instead of two for every entry. The trigger of migration 0270 stays.
ALTER TABLE lead_history DROP CONSTRAINT lead_history_pkey;
ALTER TABLE lead_history ADD PRIMARY KEY (lead_id, at, id);
DROP INDEX lead_history_lead;
