package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0490PacksArchivedPayloads: on a database of the shape
// before migration 0490, with more archived events than five batches of the
// migration's and events not archived, the migration packs the archived
// events' payloads and no other; every event reads back with the payload
// it had, by id and on its lead's page, and the coverage counters recount
// from them as they did.
func TestMigration0490PacksArchivedPayloads(t *testing.T) {
	eachBelow(t, 490, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a")
		const n = 1200
		payloads := map[string]string{}
		for i := range n {
			id := fmt.Sprintf("d_%04d", i)
			keys := []string{`"client_ip_address"`, `"client_user_agent"`, `"em"`, `"fbp"`, `"ph"`}[:1+i%5]
			payloads[id] = fmt.Sprintf(`{"action_source":"website","event_name":"Lead","event_time":%d,"match_keys":[%s]}`,
				now.Unix()-int64(i), strings.Join(keys, ","))
			created := now.Add(-time.Duration(40*24*60+i) * time.Minute).UnixMilli()
			if i%10 == 0 {
				// Not archived: a page view shrunk and a lead's event sent.
				lead := ""
				if i%20 == 0 {
					lead = fmt.Sprintf("l_%d", i/2)
				}
				if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, destination, lead_id, event_name, event_id,
					pixel_id, payload) VALUES (?, 'a', 'meta', ?, 'Lead', ?, 'px', ?)`, id, lead, "e_"+id, payloads[id]); err != nil {
					t.Fatal(err)
				}
				if err := db.TestExec(ctx, `INSERT INTO delivery_state (id, site_id, destination, kind, created_at, deadline_at,
					state, next_at, sent_at, updated_at, mode) VALUES (?, 'a', 'meta', 'lead', ?, ?, 'sent', ?, ?, ?, 'live')`,
					id, created, created+7*86400000, created, created+1000, created+1000); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, destination, lead_id, event_name, event_id,
				pixel_id, payload, redacted_at, archived_at, archived_created_at, archived_deadline_at, archived_updated_at,
				archived_sent_at, archived_attempts, archived_kind, archived_state, archived_mode, archived_error, archived_response)
				VALUES (?, 'a', 'meta', ?, 'Lead', ?, 'px', ?, ?, ?, ?, ?, ?, ?, 1, 'lead', 'sent', 'live', '', '')`,
				id, fmt.Sprintf("l_%d", i/2), "e_"+id, payloads[id], now.UnixMilli(), now.UnixMilli(), created,
				created+7*86400000, created+1000, created+1000); err != nil {
				t.Fatal(err)
			}
		}
		day := now.Unix() / 86400
		counters := func() []string {
			t.Helper()
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CountersRebuild(ctx, "a", day-45, day) }); err != nil {
				t.Fatal(err)
			}
			got, err := db.TestQueryAll(ctx, `SELECT CAST(day AS TEXT) || ' ' || name || ' ' || dim || ' ' || CAST(SUM(n) AS TEXT)
				FROM site_counters WHERE site_id = 'a' GROUP BY day, name, dim ORDER BY day, name, dim`)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		before := counters()
		if len(before) == 0 {
			t.Fatal("no counters recounted before the migration")
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		stored, err := db.TestQueryAll(ctx, `SELECT cleanads_idtext(id) || ' ' || payload FROM delivery_events ORDER BY id`)
		if err != nil || len(stored) != n {
			t.Fatalf("stored: %d rows, %v", len(stored), err)
		}
		for i, s := range stored {
			id, p, _ := strings.Cut(s, " ")
			if packed := strings.HasPrefix(p, "z1:"); packed != (i%10 != 0) || (!packed && p != payloads[id]) {
				t.Errorf("%s stored as %.60s", id, p)
			}
		}
		for _, i := range []int{0, 1, 9, 10, 199, 200, 201, 999, 1000, 1199} {
			id := fmt.Sprintf("d_%04d", i)
			d, err := db.DeliveryByID(ctx, id)
			if err != nil || string(d.Payload) != payloads[id] {
				t.Errorf("%s read back: %v %s, want %s", id, err, d.Payload, payloads[id])
				continue
			}
			if d.LeadID == "" {
				continue
			}
			ds, err := db.DeliveriesByLead(ctx, d.LeadID)
			if err != nil || len(ds) == 0 {
				t.Fatalf("%s's lead: %d %v", id, len(ds), err)
			}
			for _, got := range ds {
				if string(got.Payload) != payloads[got.ID] {
					t.Errorf("%s on its lead's page: %s, want %s", got.ID, got.Payload, payloads[got.ID])
				}
			}
		}
		if after := counters(); !slices.Equal(after, before) {
			t.Errorf("counters recounted after:\n%s\nwant\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
		}
	})
}
