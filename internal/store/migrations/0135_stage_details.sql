-- What a stage's Meta event carries besides its time, kept with the stage:
-- a stage held back (the owner said junk) is sent later as it came, when
-- the owner changes the word.
ALTER TABLE lead_stages ADD COLUMN value DOUBLE PRECISION;
ALTER TABLE lead_stages ADD COLUMN currency TEXT NOT NULL DEFAULT '';
ALTER TABLE lead_stages ADD COLUMN action_source TEXT NOT NULL DEFAULT '';
