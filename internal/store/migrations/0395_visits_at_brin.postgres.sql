-- Visits are read by time alone only in ranges (retention's visits before a
-- day, CountersRebuild's days), never in time order, and they arrive in
-- time order, so the pages of the heap follow their times. A BRIN index
-- (each range of 128 pages keeps the least and greatest time) serves those
-- reads at a few kilobytes for the whole table, where the B-tree on at took
-- about 30 of the 410 bytes a visit cost (cmd/cleanads-scale at 10,000
-- leads, 100,000 visits). A range whose pages retention freed and new
-- visits filled again is still right, only read more often: rows are
-- rechecked. autosummarize summarises each new range once it is full.
DROP INDEX visits_at;
CREATE INDEX visits_at ON visits USING brin (at) WITH (autosummarize = on);
