package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0430CoverageOfEventsThere: on a database of the shape
// before migration 0430, with Meta events of two sites sent (on a later
// day than they were made), built in dry run, still to send, dead or for
// Google, some whole and some shrunk by retention to their keys' names,
// the migration's coverage counters equal a recount of the events sent or
// built, by the keys that hold something, on their upload day.
func TestMigration0430CoverageOfEventsThere(t *testing.T) {
	eachBelow(t, 430, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		rng := rand.New(rand.NewPCG(4, 30))
		want := coverageWant{}
		for i := range 200 {
			site := []model.SiteID{"a", "b"}[rng.IntN(2)]
			created := now.Add(-time.Duration(rng.Int64N(int64(20 * 24 * time.Hour))))
			ud, have := randomUserData(rng)
			payload, _ := json.Marshal(map[string]any{"event_name": "Lead", "user_data": ud})
			if rng.IntN(3) == 0 {
				payload, _ = json.Marshal(map[string]any{"event_name": "Lead", "match_keys": have})
			}
			state := []string{"sent", "sent", "sent", "dry_run", "pending", "dead"}[rng.IntN(6)]
			dest := model.DestinationMeta
			if rng.IntN(8) == 0 {
				dest = model.DestinationGoogle
			}
			var sent any
			upload := created
			if state == "sent" {
				upload = created.Add(time.Duration(rng.Int64N(int64(2 * 24 * time.Hour))))
				sent = upload.UnixMilli()
			}
			id := fmt.Sprintf("d_%03d", i)
			if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, event_name, event_id, pixel_id, payload, destination)
				VALUES (?, ?, 'Lead', ?, 'px', ?, ?)`, id, string(site), id, string(payload), dest); err != nil {
				t.Fatal(err)
			}
			if err := db.TestExec(ctx, `INSERT INTO delivery_state (id, site_id, kind, state, next_at, deadline_at, created_at,
				updated_at, sent_at, destination) VALUES (?, ?, 'lead', ?, 0, 0, ?, 0, ?, ?)`,
				id, string(site), state, created.UnixMilli(), sent, dest); err != nil {
				t.Fatal(err)
			}
			if dest == model.DestinationMeta && (state == "sent" || state == "dry_run") {
				want.add(site, model.Day(upload), have)
			}
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		checkCoverage(t, db, want, model.Day(now)-21, model.Day(now)+2, "a", "b")
	})
}
