package store_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0570UnshrunkFinished: on a database of the shape before
// migration 0570, with events of two sites in every state, shrunk or not,
// retention's two walks (DeliveriesToShrink, DeliveriesToRedact) return the
// same rows after it as before, page after page; delivery_state_unshrunk
// then holds only finished rows, and on PostgreSQL both walks still read
// it (an index scan, no scan of delivery_state, no sort).
func TestMigration0570UnshrunkFinished(t *testing.T) {
	eachBelow(t, 570, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		states := []model.DeliveryState{model.DeliveryPending, model.DeliveryRetry, model.DeliveryPaused, model.DeliverySent,
			model.DeliveryDead, model.DeliveryExpired, model.DeliveryDryRun}
		for i := range 700 {
			id := fmt.Sprintf("dl_%04d", i)
			site := []string{"a", "b"}[i%2]
			lead := ""
			if i%3 > 0 {
				lead = fmt.Sprintf("ld_%03d", i/3)
			}
			var shrunk any
			if i%5 == 0 {
				shrunk = now.Add(-time.Hour).UnixMilli()
			}
			created := now.Add(-time.Duration(700-i) * time.Hour).UnixMilli()
			if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, lead_id, event_name, event_id, pixel_id, payload,
				destination) VALUES (?, ?, ?, 'Lead', ?, '1', '{"event_name":"Lead"}', 'meta')`, id, site, lead, "ev-"+id); err != nil {
				t.Fatal(err)
			}
			if err := db.TestExec(ctx, `INSERT INTO delivery_state (id, site_id, kind, state, next_at, deadline_at, created_at,
				updated_at, destination, shrunk_at) VALUES (?, ?, 'lead', ?, ?, ?, ?, ?, 'meta', ?)`,
				id, site, string(states[i%len(states)]), created, created+1000, created, created, shrunk); err != nil {
				t.Fatal(err)
			}
		}
		read := func() (shrink, redact []string) {
			t.Helper()
			var after store.ShrinkCursor
			for {
				page, err := db.DeliveriesToShrink(ctx, now, after, now, 50)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range page {
					shrink = append(shrink, d.ID+" "+string(d.State))
				}
				if len(page) < 50 {
					break
				}
				after = store.ShrinkCursor{CreatedAt: page[len(page)-1].CreatedAt, ID: page[len(page)-1].ID}
			}
			list, err := db.DeliveriesToRedact(ctx, now, now.Add(-100*time.Hour), 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range list {
				redact = append(redact, d.ID+" "+string(d.State))
			}
			return shrink, redact
		}
		shrink, redact := read()
		if len(shrink) == 0 || len(redact) == 0 {
			t.Fatalf("before the migration: %d rows to shrink, %d to redact: the test proves nothing", len(shrink), len(redact))
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		shrink2, redact2 := read()
		if !reflect.DeepEqual(shrink2, shrink) {
			t.Errorf("rows to shrink after the migration\n%v\nwant\n%v", shrink2, shrink)
		}
		if !reflect.DeepEqual(redact2, redact) {
			t.Errorf("rows to redact after the migration\n%v\nwant\n%v", redact2, redact)
		}
		def, err := db.TestQueryString(ctx, `SELECT sql FROM sqlite_master WHERE name = 'delivery_state_unshrunk'`)
		if db.Dialect() == store.Postgres {
			def, err = db.TestQueryString(ctx, `SELECT pg_get_indexdef(c.oid) FROM pg_class c
				JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = current_schema() AND c.relname = 'delivery_state_unshrunk'`)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []string{"pending", "retry", "paused"} {
			if !strings.Contains(def, "'"+st+"'") {
				t.Errorf("delivery_state_unshrunk after the migration: %s, want a predicate leaving out %s rows", def, st)
			}
		}
		if db.Dialect() == store.SQLite {
			return // TestDeliveriesTo*ReadOnlyRowsNotShrunk check SQLite's plans
		}
		// As in a live outbox: most rows shrunk (page views, webhook posts)
		// or queued, a few finished ones waiting for retention.
		if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, lead_id, event_name, event_id, pixel_id, payload,
			destination) SELECT convert_to('dl_x' || g, 'UTF8'), 'a', '', 'PageView', convert_to('ev-x' || g, 'UTF8'), '1', '{}', 'meta' FROM generate_series(1, 20000) g`); err != nil {
			t.Fatal(err)
		}
		if err := db.TestExec(ctx, `INSERT INTO delivery_state (id, site_id, kind, state, next_at, deadline_at, created_at,
			updated_at, destination, shrunk_at) SELECT convert_to('dl_x' || g, 'UTF8'), 'a', 'pageview', CASE WHEN g % 2 = 0 THEN 'sent' ELSE 'pending' END,
			g, g, g, g, 'meta', CASE WHEN g % 2 = 0 THEN g END FROM generate_series(1, 20000) g`); err != nil {
			t.Fatal(err)
		}
		if err := db.TestExec(ctx, `ANALYZE delivery_events`); err != nil {
			t.Fatal(err)
		}
		for name, plan := range db.TestRetentionPlansPostgres(t, ctx) {
			if !strings.Contains(plan, "delivery_state_unshrunk") || strings.Contains(plan, "Seq Scan on delivery_state") ||
				strings.Contains(plan, "Sort") {
				t.Errorf("%s plan:\n%s\nwant a walk of delivery_state_unshrunk, no scan of delivery_state, no sort", name, plan)
			}
		}
	})
}
