-- Each migration from here on records the cleanads version that applied
-- it, so an older binary that meets a newer schema can say which version
-- to run instead of only refusing.
ALTER TABLE schema_migrations ADD COLUMN binary_version TEXT NOT NULL DEFAULT '';
