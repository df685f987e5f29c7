-- Certificate storage for HTTPS by itself (tls.acme): the ACME account,
-- the certificates and their keys, and the HTTP-01 tokens in flight, each
-- under a path-like key, so every node of a PostgreSQL cluster answers with
-- the same certificate and any node can answer the CA's challenge.
CREATE TABLE cert_items (
    key         TEXT PRIMARY KEY,
    value       BYTEA NOT NULL,
    modified_at BIGINT NOT NULL
);
-- Named locks with an expiry: the node holding "issue_cert_t.example.com"
-- is the only one ordering that certificate; a node that died holding one
-- lets it go when expires_at passes.
CREATE TABLE cert_locks (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
