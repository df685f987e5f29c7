-- PostgreSQL's appended B-trees fill their pages (see the twin). SQLite has
-- no such setting: nothing changes here.
SELECT 1;
