-- The ids stored packed on PostgreSQL too, as SQLite does since 0600: a
-- prefixed id (ld_, dl_, h_ ... and 26 lower-case Crockford digits, 30
-- bytes as text) or a canonical lower-case UUID (37) becomes a bytea of 17
-- bytes (18 stored): a tag byte naming its kind, then its 128 bits,
-- big-endian; anything else (a client's event id of another form, a
-- test's id, the empty string) is kept as its UTF-8 bytes. The encoding is
-- SQLite's (store/idpack.go), a pure function of the string, so equality,
-- UNIQUE, the foreign keys and the keyset pages stay exact in a column that
-- mixes both. The store binds a string to a bytea parameter packed and
-- reads a packed value back as its text (idCodec, registered on every
-- connection): no statement changes.
--
-- The columns are the ones that hold a lead's, an event's, a visitor's or
-- a visit's id and every column compared with them; users', sites' and
-- webhooks' ids stay text (a few rows). Each table is rewritten once by
-- ALTER ... TYPE (an exclusive lock while it runs; the rewrite leaves the
-- table and its indexes compact, where an UPDATE would leave every row's
-- old version behind).
CREATE FUNCTION cleanads_idpack(s text) RETURNS bytea LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    tag int;
    b bit varying := B'';
BEGIN
    IF length(s) = 36 AND s ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
        RETURN '\x01'::bytea || decode(replace(s, '-', ''), 'hex');
    END IF;
    IF s ~ '^[a-z]{1,3}_[0-7][0-9a-hjkmnp-tv-z]{25}$' THEN
        tag := array_position(ARRAY['dl_', 'evt_', 'h_', 'la_', 'ld_', 'u_', 'v_', 'wh_'], left(s, length(s) - 26));
        IF tag IS NOT NULL THEN
            FOR i IN length(s) - 25 .. length(s) LOOP
                b := b || (strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(s, i, 1)) - 1)::bit(5);
            END LOOP;
            RETURN set_byte('\x00'::bytea, 0, tag + 1)
                || decode(lpad(to_hex(substring(b FROM 3 FOR 64)::bit(64)::bigint), 16, '0')
                    || lpad(to_hex(substring(b FROM 67 FOR 64)::bit(64)::bigint), 16, '0'), 'hex');
        END IF;
    END IF;
    RETURN convert_to(s, 'UTF8');
END $$;

-- cleanads_idtext is the inverse, for whoever reads the tables with psql
-- (SQLite's binary has the same function): the id's text, or the value's
-- own text when it is not a packed id.
CREATE FUNCTION cleanads_idtext(b bytea) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    bits bit(130);
    digits text := '';
BEGIN
    IF length(b) = 17 AND get_byte(b, 0) BETWEEN 1 AND 9 THEN
        IF get_byte(b, 0) = 1 THEN
            RETURN regexp_replace(encode(substr(b, 2), 'hex'), '^(.{8})(.{4})(.{4})(.{4})(.{12})$', '\1-\2-\3-\4-\5');
        END IF;
        bits := B'00' || ('x' || encode(substr(b, 2), 'hex'))::bit(128);
        FOR i IN 0 .. 25 LOOP
            digits := digits || substr('0123456789abcdefghjkmnpqrstvwxyz', substring(bits FROM i * 5 + 1 FOR 5)::int + 1, 1);
        END LOOP;
        RETURN (ARRAY['dl_', 'evt_', 'h_', 'la_', 'ld_', 'u_', 'v_', 'wh_'])[get_byte(b, 0) - 1] || digits;
    END IF;
    RETURN convert_from(b, 'UTF8');
END $$;

DROP VIEW deliveries;
ALTER TABLE lead_history DROP CONSTRAINT lead_history_lead_id_fkey;
ALTER TABLE lead_stages DROP CONSTRAINT lead_stages_lead_id_fkey;
ALTER TABLE visits DROP CONSTRAINT visits_site_id_visitor_id_fkey;
DROP INDEX delivery_events_lead;

ALTER TABLE leads ALTER visitor_id DROP DEFAULT,
    ALTER id TYPE bytea USING cleanads_idpack(id),
    ALTER event_id TYPE bytea USING cleanads_idpack(event_id),
    ALTER visitor_id TYPE bytea USING cleanads_idpack(visitor_id),
    ALTER visitor_id SET DEFAULT ''::bytea;
ALTER TABLE lead_history ALTER id TYPE bytea USING cleanads_idpack(id),
    ALTER lead_id TYPE bytea USING cleanads_idpack(lead_id);
ALTER TABLE lead_stages ALTER lead_id TYPE bytea USING cleanads_idpack(lead_id);
ALTER TABLE delivery_events ALTER lead_id DROP DEFAULT,
    ALTER id TYPE bytea USING cleanads_idpack(id),
    ALTER lead_id TYPE bytea USING cleanads_idpack(lead_id),
    ALTER event_id TYPE bytea USING cleanads_idpack(event_id),
    ALTER lead_id SET DEFAULT ''::bytea;
ALTER TABLE delivery_state ALTER id TYPE bytea USING cleanads_idpack(id);
ALTER TABLE delivery_leases ALTER id TYPE bytea USING cleanads_idpack(id);
ALTER TABLE visitors ALTER id TYPE bytea USING cleanads_idpack(id);
ALTER TABLE visits ALTER visitor_id TYPE bytea USING cleanads_idpack(visitor_id),
    ALTER event_id TYPE bytea USING cleanads_idpack(event_id);
ALTER TABLE pageview_queue ALTER event_id TYPE bytea USING cleanads_idpack(event_id);
ALTER TABLE form_token_uses ALTER lead_id TYPE bytea USING cleanads_idpack(lead_id);
ALTER TABLE notifications ALTER lead_id TYPE bytea USING cleanads_idpack(lead_id);
ALTER TABLE webhook_receipts ALTER lead_id DROP DEFAULT,
    ALTER lead_id TYPE bytea USING cleanads_idpack(lead_id),
    ALTER lead_id SET DEFAULT ''::bytea;
ALTER TABLE whatsapp_contacts ALTER lead_id TYPE bytea USING cleanads_idpack(lead_id);
ALTER TABLE whatsapp_conversations ALTER lead_id TYPE bytea USING cleanads_idpack(lead_id);

CREATE INDEX delivery_events_lead ON delivery_events (lead_id) WITH (fillfactor = 100) WHERE lead_id <> ''::bytea;
ALTER TABLE lead_history ADD CONSTRAINT lead_history_lead_id_fkey FOREIGN KEY (lead_id) REFERENCES leads(id) ON DELETE CASCADE;
ALTER TABLE lead_stages ADD CONSTRAINT lead_stages_lead_id_fkey FOREIGN KEY (lead_id) REFERENCES leads(id) ON DELETE CASCADE;
ALTER TABLE visits ADD CONSTRAINT visits_site_id_visitor_id_fkey FOREIGN KEY (site_id, visitor_id) REFERENCES visitors(site_id, id);
CREATE VIEW deliveries AS SELECT s.id, s.site_id, e.lead_id, s.kind, e.event_name, e.event_id, e.pixel_id, e.payload,
    s.state, s.attempts, s.next_at, s.deadline_at, s.last_error,
    s.response, s.mode, s.created_at, s.updated_at, s.sent_at, e.redacted_at, s.destination, s.shrunk_at
    FROM delivery_state s JOIN delivery_events e ON e.id = s.id
UNION ALL SELECT id, site_id, lead_id, archived_kind, event_name, event_id, pixel_id, payload,
    archived_state, archived_attempts, archived_updated_at, archived_deadline_at, archived_error,
    archived_response, archived_mode, archived_created_at, archived_updated_at, archived_sent_at,
    COALESCE(redacted_at, archived_at), destination, archived_at
    FROM delivery_events WHERE archived_at IS NOT NULL;
