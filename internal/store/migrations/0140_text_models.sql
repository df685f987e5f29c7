-- Each site's text model, learnt from the leads its owner judged (junk or a
-- real customer): the counts of a naive Bayes over the messages' words, as
-- JSON (qualify.TextModel). fingerprint is what the owner-judged leads
-- looked like when it was trained (LeadOwnerFingerprint): the rebuild job
-- trains again when it differs. The owner-judged leads are few next to all
-- of a site's leads; the partial index finds them for training, for the
-- fingerprint and for the dashboard's agreement figures.
CREATE TABLE text_models (
    site_id     TEXT PRIMARY KEY REFERENCES sites (id) ON DELETE CASCADE,
    trained_at  BIGINT NOT NULL,
    judged      INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    data        TEXT NOT NULL
);
CREATE INDEX leads_owner_judged ON leads (site_id, received_at) WHERE decided_by = 'owner';
