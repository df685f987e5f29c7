-- The newest received time of the leads stored up to each block of 64
-- rowids, so that the search can read its index's candidates newest rowid
-- first and stop at a page (see leadSearchWalk). lead_search names a lead by
-- its rowid, and FTS5 gives the leads having a term's trigrams in rowid
-- order, lazily: 60 of them in 0.7-1.3 ms at a million leads, where all of
-- a name's took 15-27. The inbox pages by (received_at, id), and a lead's
-- rowid follows its time only while every lead is stored when it arrives
-- (an import or the Lead Ads backfill stores older times, two intakes can
-- commit in the other order): here, for a block b, upto is at least the
-- received time of every lead whose rowid is in block b or below, so the
-- leads below a rowid are all older than the upto of its block, whatever
-- order they were stored in.
-- One row a block: 16,000 at a million leads (about 20 bytes each, not a
-- lead's index entry); a lead stored adds one to the block or raises it,
-- and raises the blocks above its own, of which there are none unless a
-- lead of the highest rowid was deleted and its rowid taken again.
-- received_at does not change once stored; the update trigger keeps the
-- bound if it ever did.
CREATE TABLE lead_search_order (
    block INTEGER PRIMARY KEY,
    upto  BIGINT NOT NULL
);
INSERT INTO lead_search_order (block, upto)
SELECT block, max(m) OVER (ORDER BY block) FROM (SELECT rowid >> 6 AS block, max(received_at) AS m FROM leads GROUP BY rowid >> 6);
CREATE TRIGGER leads_search_order_insert AFTER INSERT ON leads BEGIN
    INSERT INTO lead_search_order (block, upto)
    VALUES (new.rowid >> 6, max(new.received_at,
        COALESCE((SELECT upto FROM lead_search_order WHERE block < new.rowid >> 6 ORDER BY block DESC LIMIT 1), new.received_at)))
    ON CONFLICT (block) DO UPDATE SET upto = max(upto, excluded.upto);
    UPDATE lead_search_order SET upto = new.received_at WHERE block > new.rowid >> 6 AND upto < new.received_at;
END;
CREATE TRIGGER leads_search_order_update AFTER UPDATE OF received_at ON leads BEGIN
    UPDATE lead_search_order SET upto = new.received_at WHERE block >= new.rowid >> 6 AND upto < new.received_at;
END;
