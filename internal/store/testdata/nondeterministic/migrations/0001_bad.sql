-- A migration TestNondeterministicCaught must find (line 4): every INSERT
-- that leaves created_at out would take the clock's time.
CREATE TABLE notes (id TEXT PRIMARY KEY,
    created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP);
