package store

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"sync"
)

// An archived event's shrunk payload (migration 0470) is stored packed
// (migration 0490): deflated with a preset dictionary of the words shrunk
// events repeat (their members' names, the match keys' names, the action
// sources) and written as base64 text after packedPrefix. A shrunk Meta
// event of about 165 bytes is stored in about 41: the names of its match
// keys ("client_ip_address", "client_user_agent", ...) are most of it, and
// the dictionary holds them. Packing is exact: every payload reads back as
// it was given, whatever it holds, so no reader depends on its shape and a
// payload the dictionary does not know only packs less well. Nothing reads
// a payload in SQL: the store unpacks it where it scans one
// (scanDelivery, the coverage recount).

// packedPrefix starts a packed payload; a payload as given is JSON, which
// never starts with a z. A dictionary other than payloadDict would take
// another prefix, and unpackPayload would keep reading this one's.
const packedPrefix = "z1:"

// payloadDict is the dictionary of packedPrefix's payloads. It must never
// change: the stored payloads were deflated with it. Deflate finds a match
// cheaper the nearer it is to the end, so Meta's words, the most frequent,
// come last.
const payloadDict = `"properties":{"value":,"currency":"USD"},"lead":{"lead_event_source":"event":"SubmitForm",` +
	`"eventTimestamp":"2026-","conversionValue":,"eventSource":"WEB","address","emailAddress","gbraid","gclid",` +
	`"phoneNumber","wbraid","email","ip","phone","ttclid","ttp","user_agent"],` +
	`"custom_data":{"currency":"EUR","value":,"event_source":"crm","lead_event_source":"` +
	`"messaging_channel":"whatsapp","action_source":"system_generated","event_name":"QualifiedLead",` +
	`"Schedule","Purchase","CompleteRegistration","Contact","event_time":17` +
	`{"action_source":"website","event_name":"Lead","event_time":17,"match_keys":["client_ip_address",` +
	`"client_user_agent","country","ct","db","em","external_id","fbc","fbp","fn","ge","lead_id","ln","ph","st","zp"]}`

var (
	payloadWriters = sync.Pool{New: func() any {
		w, err := flate.NewWriterDict(nil, flate.BestCompression, []byte(payloadDict))
		if err != nil {
			panic(err) // only for a bad level
		}
		return w
	}}
	payloadReaders = sync.Pool{New: func() any {
		return flate.NewReaderDict(strings.NewReader(""), []byte(payloadDict))
	}}
)

// packPayload is p as an archived event stores it.
func packPayload(p []byte) string {
	var b bytes.Buffer
	w := payloadWriters.Get().(*flate.Writer)
	defer payloadWriters.Put(w)
	w.Reset(&b)
	// Writes to a bytes.Buffer do not fail.
	_, _ = w.Write(p)
	_ = w.Close()
	return packedPrefix + base64.RawStdEncoding.EncodeToString(b.Bytes())
}

// unpackPayload is a stored payload as it was given: a packed one
// unpacked, any other as it is. A packed payload that does not unpack (a
// row damaged outside the store) is returned as stored, so that the page
// that shows it still opens.
func unpackPayload(s string) []byte {
	packed, ok := strings.CutPrefix(s, packedPrefix)
	if !ok {
		return []byte(s)
	}
	raw, err := base64.RawStdEncoding.DecodeString(packed)
	if err != nil {
		return []byte(s)
	}
	r := payloadReaders.Get().(io.ReadCloser)
	defer payloadReaders.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(raw), []byte(payloadDict)); err != nil {
		return []byte(s)
	}
	p, err := io.ReadAll(r)
	if err != nil {
		return []byte(s)
	}
	return p
}

// packBatch is how many archived payloads packArchivedPayloads reads and
// writes a statement: its update names each row in a UNION ALL of as many
// parts, and SQLite allows 500.
const packBatch = 200

// packArchivedPayloads is migration 0490's Go step: the payloads of the
// events archived before it, packed, a batch at a time in the order of
// their key (the batch's rows read, then written in one statement).
func packArchivedPayloads(ctx context.Context, tx *Tx) error {
	after := ""
	for {
		var ids, payloads []string
		err := tx.eachRow(ctx, func(r *sql.Rows) error {
			var id, payload string
			if err := r.Scan(&id, &payload); err != nil {
				return err
			}
			ids, payloads = append(ids, id), append(payloads, payload)
			return nil
		}, `/* Store.packArchivedPayloads */ SELECT id, payload FROM delivery_events
			WHERE id > ? AND archived_at IS NOT NULL ORDER BY id LIMIT ?`, after, packBatch)
		if err != nil {
			return fmt.Errorf("store: pack archived payloads: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		var rows strings.Builder
		args := make([]any, 0, 2*len(ids))
		for i, id := range ids {
			if i == 0 {
				rows.WriteString(`SELECT ? AS id, ? AS payload`)
			} else {
				rows.WriteString(` UNION ALL SELECT ?, ?`)
			}
			args = append(args, id, packPayload(unpackPayload(payloads[i])))
		}
		if _, err := tx.exec(ctx, `/* Store.packArchivedPayloads */ UPDATE delivery_events SET payload = p.payload
			FROM (`+rows.String()+`) p WHERE delivery_events.id = p.id`, args...); err != nil {
			return fmt.Errorf("store: pack archived payloads: %w", err)
		}
		after = ids[len(ids)-1]
	}
}
