package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0581ArchivedRedactedOnce: on a database of the shape before
// migration 0581, with archived events redacted when they were archived,
// archived events erased before or after, and events not archived, every
// event reads the same afterwards from the view deliveries (its redaction
// time included), by id and on its lead's page; on SQLite an archived row
// keeps a redaction time of its own only when it is not its archived time
// (PostgreSQL's stay as they were and read the same), and an
// event archived afterwards reads its archived time as its redaction time.
func TestMigration0581ArchivedRedactedOnce(t *testing.T) {
	eachBelow(t, 581, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a")
		const n = 40
		archivedAt := now.Add(-time.Hour).UnixMilli()
		for i := range n {
			id := fmt.Sprintf("d_%04d", i)
			lead := fmt.Sprintf("l_%d", i/2)
			created := now.Add(-time.Duration(40*24*60+i) * time.Minute).UnixMilli()
			if i%5 == 0 {
				// Not archived: sent, erased or not.
				var redacted any
				if i%10 == 0 {
					redacted = created + 5000
				}
				if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, destination, lead_id, event_name, event_id,
					pixel_id, payload, redacted_at) VALUES (?, 'a', 'meta', ?, 'Lead', ?, 'px', '{}', ?)`, id, lead, "e_"+id, redacted); err != nil {
					t.Fatal(err)
				}
				if err := db.TestExec(ctx, `INSERT INTO delivery_state (id, site_id, destination, kind, created_at, deadline_at,
					state, next_at, sent_at, updated_at, mode) VALUES (?, 'a', 'meta', 'lead', ?, ?, 'sent', ?, ?, ?, 'live')`,
					id, created, created+7*86400000, created, created+1000, created+1000); err != nil {
					t.Fatal(err)
				}
				continue
			}
			// Archived: redacted as it was archived, or erased before
			// (i%5 == 1) or after (i%5 == 2).
			redacted := archivedAt
			switch i % 5 {
			case 1:
				redacted = created + 2000
			case 2:
				redacted = archivedAt + 3000
			}
			if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, destination, lead_id, event_name, event_id,
				pixel_id, payload, redacted_at, archived_at, archived_created_at, archived_deadline_at, archived_updated_at,
				archived_sent_at, archived_attempts, archived_kind, archived_state, archived_mode, archived_error, archived_response)
				VALUES (?, 'a', 'meta', ?, 'Lead', ?, 'px', 'z1:x', ?, ?, ?, ?, ?, ?, 1, 'lead', 'sent', 'live', '', '')`,
				id, lead, "e_"+id, redacted, archivedAt, created, created+7*86400000, created+1000, created+1000); err != nil {
				t.Fatal(err)
			}
		}
		idTextOfText(t, ctx, db)
		read := func() []string {
			t.Helper()
			rows, err := db.TestQueryAll(ctx, `SELECT cleanads_idtext(id) || ' ' || COALESCE(CAST(redacted_at AS TEXT), '-') || ' '
				|| COALESCE(CAST(shrunk_at AS TEXT), '-') || ' ' || state || ' ' || CAST(created_at AS TEXT)
				FROM deliveries ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				id := fmt.Sprintf("d_%04d", i)
				d, err := db.DeliveryByID(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				j, _ := json.Marshal(d)
				rows = append(rows, string(j))
				if i%2 == 0 {
					ds, err := db.DeliveriesByLead(ctx, d.LeadID)
					if err != nil {
						t.Fatal(err)
					}
					j, _ := json.Marshal(ds)
					rows = append(rows, string(j))
				}
			}
			return rows
		}
		before := read()
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		if after := read(); !slices.Equal(after, before) {
			t.Errorf("after the migration:\n%v\nbefore:\n%v", after, before)
		}
		kept, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM delivery_events WHERE archived_at IS NOT NULL AND redacted_at IS NOT NULL`)
		// SQLite rewrites the archived rows; PostgreSQL leaves them (a
		// rewrite would grow a database in service).
		want := "16"
		if db.Dialect() == store.Postgres {
			want = "32"
		}
		if err != nil || kept != want {
			t.Errorf("archived rows keeping a redaction time of their own: %s (%v), want %s", kept, err, want)
		}
		// An event archived now reads its archived time as its redaction.
		id := "d_new"
		if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, destination, lead_id, event_name, event_id,
			pixel_id, payload) VALUES (?, 'a', 'meta', 'l_new', 'Lead', 'e_new', 'px', '{"event_name":"Lead"}')`, id); err != nil {
			t.Fatal(err)
		}
		created := now.Add(-40 * 24 * time.Hour).UnixMilli()
		if err := db.TestExec(ctx, `INSERT INTO delivery_state (id, site_id, destination, kind, created_at, deadline_at,
			state, next_at, sent_at, updated_at, mode) VALUES (?, 'a', 'meta', 'lead', ?, ?, 'sent', ?, ?, ?, 'live')`,
			id, created, created+7*86400000, created, created+1000, created+1000); err != nil {
			t.Fatal(err)
		}
		if ok, err := db.DeliveryShrink(ctx, id, json.RawMessage(`{"event_name":"Lead"}`), now); err != nil || !ok {
			t.Fatalf("shrink: %v %v", ok, err)
		}
		got, err := db.TestQueryString(ctx, `SELECT COALESCE(CAST(e.redacted_at AS TEXT), '-') || ' ' || CAST(d.redacted_at AS TEXT)
			|| ' ' || CAST(d.shrunk_at AS TEXT) FROM deliveries d JOIN delivery_events e ON e.id = d.id WHERE d.id = ?`, id)
		if ms := now.UnixMilli(); err != nil || got != fmt.Sprintf("- %d %d", ms, ms) {
			t.Errorf("an event archived now: stored, read and archived %q (%v), want its archived time read as its redaction", got, err)
		}
		// An erasure after it is kept.
		if _, err := db.DeliveryRedact(ctx, id, json.RawMessage(`{}`), "", now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		got, err = db.TestQueryString(ctx, `SELECT CAST(redacted_at AS TEXT) FROM deliveries WHERE id = ?`, id)
		if want := fmt.Sprint(now.Add(time.Minute).UnixMilli()); err != nil || got != want {
			t.Errorf("an archived event erased: redacted %q (%v), want %s", got, err, want)
		}
	})
}
