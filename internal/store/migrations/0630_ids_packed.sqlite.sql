-- PostgreSQL stores its ids packed from this version (see the twin); SQLite
-- has since 0600.
SELECT 1;
