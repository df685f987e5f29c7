-- An archived event's shrunk payload (migration 0470) is stored packed:
-- deflated with a preset dictionary of the words shrunk events repeat and
-- written as base64 after the prefix z1: (store/payload.go), about 40 to
-- 60 bytes where the JSON was about 165. The Go step packs the payloads of
-- the events archived before; the store unpacks a payload where it scans
-- one, so every reader reads it as it was.
SELECT 1;
