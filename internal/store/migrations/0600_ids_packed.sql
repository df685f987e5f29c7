-- On SQLite the ids are stored packed (store/idpack.go): a prefixed id
-- (ld_, dl_, h_ ... and 26 Crockford digits) or a canonical UUID as 17
-- bytes, a tag byte and its 128 bits, where its text took 28 to 36. The
-- Go step (packStoredIDs) rewrites the stored ones of every table; from
-- this version on the store binds every id packed and reads it back as
-- its text. PostgreSQL keeps text: nothing to do there.
SELECT 1;
