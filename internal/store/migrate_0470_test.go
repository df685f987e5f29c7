package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0470ArchivesShrunkEvents: on a database of the shape before
// migration 0470, filled with events of two sites in every state, shrunk
// or not, of leads, page views and webhook posts, the migration archives
// the shrunk events of leads (their state rows gone) and loses nothing:
// every row reads the same through the view after as before, but a sent
// archived event's answer; the lists and counts find every row.
func TestMigration0470ArchivesShrunkEvents(t *testing.T) {
	eachBelow(t, 470, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 6, 23, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		states := []string{"sent", "dead", "expired", "dry_run", "sent", "pending", "retry", "paused"}
		wantArchived := map[string]bool{}
		for i := range 160 {
			id := fmt.Sprintf("d_%03d", i)
			site := []string{"a", "b"}[i%2]
			state := states[i%len(states)]
			lead, kind, dest := fmt.Sprintf("l_%d", i/3), "lead", "meta"
			switch i % 5 {
			case 1:
				kind = "qualified"
			case 2:
				dest = "google"
			case 3:
				dest, kind = "webhook", "lead"
			}
			if i%7 == 0 {
				lead, kind = "", "pageview"
			}
			finished := state == "sent" || state == "dead" || state == "expired" || state == "dry_run"
			var shrunk, sentAt any
			if finished && i%3 != 0 {
				shrunk = now.Add(-time.Hour).UnixMilli()
			}
			if state == "sent" {
				sentAt = now.Add(-time.Duration(200-i) * time.Hour).UnixMilli()
			}
			if shrunk != nil && lead != "" && dest != "webhook" {
				wantArchived[id] = true
			}
			created := now.Add(-time.Duration(200-i/2) * time.Hour).UnixMilli()
			if err := db.TestExec(ctx, `INSERT INTO delivery_events (id, site_id, destination, lead_id, event_name, event_id,
				pixel_id, payload, redacted_at) VALUES (?, ?, ?, ?, 'Lead', ?, 'px', ?, ?)`,
				id, site, dest, lead, "e_"+id, fmt.Sprintf(`{"event_name":"Lead","n":%d}`, i), shrunk); err != nil {
				t.Fatal(err)
			}
			if err := db.TestExec(ctx, `INSERT INTO delivery_state (id, site_id, destination, kind, created_at, deadline_at,
				state, attempts, next_at, sent_at, updated_at, mode, last_error, response, shrunk_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'live', ?, ?, ?)`,
				id, site, dest, kind, created, created+7*86400000, state, i%4, created+1000, sentAt, created+2000,
				fmt.Sprintf("error %d", i%3), fmt.Sprintf(`{"answer":%d}`, i), shrunk); err != nil {
				t.Fatal(err)
			}
		}
		const whole = `SELECT id || '|' || site_id || '|' || lead_id || '|' || kind || '|' || event_name || '|' || event_id
			|| '|' || pixel_id || '|' || payload || '|' || state || '|' || CAST(attempts AS TEXT) || '|' || CAST(deadline_at AS TEXT)
			|| '|' || last_error || '|' || mode || '|' || CAST(created_at AS TEXT) || '|' || CAST(updated_at AS TEXT)
			|| '|' || COALESCE(CAST(sent_at AS TEXT), '-') || '|' || COALESCE(CAST(redacted_at AS TEXT), '-')
			|| '|' || destination || '|' || COALESCE(CAST(shrunk_at AS TEXT), '-') FROM deliveries ORDER BY id`
		const answers = `SELECT id || '|' || response FROM deliveries ORDER BY id`
		before, err := db.TestQueryAll(ctx, whole)
		if err != nil || len(before) != 160 {
			t.Fatalf("before: %d rows, %v", len(before), err)
		}
		beforeAnswers, err := db.TestQueryAll(ctx, answers)
		if err != nil {
			t.Fatal(err)
		}
		// Up to 0490, which packs the archived payloads (its own test reads
		// them back): the rows are compared as stored.
		if _, err := db.MigrateWith(ctx, store.MigrateOptions{Below: 490}); err != nil {
			t.Fatal(err)
		}
		after, err := db.TestQueryAll(ctx, whole)
		if err != nil || !slices.Equal(after, before) {
			t.Errorf("rows after the migration (%v):\n%s\nwant\n%s", err, strings.Join(after, "\n"), strings.Join(before, "\n"))
		}
		afterAnswers, err := db.TestQueryAll(ctx, answers)
		if err != nil || len(afterAnswers) != len(beforeAnswers) {
			t.Fatalf("answers after: %d, %v", len(afterAnswers), err)
		}
		for i, a := range beforeAnswers {
			id, _, _ := strings.Cut(a, "|")
			want := a
			if wantArchived[id] && states[i%len(states)] == "sent" {
				want = id + "|"
			}
			if afterAnswers[i] != want {
				t.Errorf("answer of %s after: %q, want %q", id, afterAnswers[i], want)
			}
		}
		archived, err := db.TestQueryAll(ctx, `SELECT id FROM delivery_events WHERE archived_at IS NOT NULL ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for id := range wantArchived {
			want = append(want, id)
		}
		slices.Sort(want)
		if !slices.Equal(archived, want) || len(want) < 30 {
			t.Errorf("archived: %v, want %v", archived, want)
		}
		if n, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM delivery_state`); err != nil || n != fmt.Sprint(160-len(want)) {
			t.Errorf("state rows left: %s %v, want %d", n, err, 160-len(want))
		}
		var listed []string
		f := store.DeliveryFilter{Limit: 17}
		for range 20 {
			ds, err := db.DeliveryList(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, deliveryIDs(ds)...)
			if len(ds) < f.Limit {
				break
			}
			f.Before, f.BeforeID = ds[len(ds)-1].CreatedAt, ds[len(ds)-1].ID
		}
		slices.Sort(listed)
		if len(listed) != 160 || len(slices.Compact(slices.Clone(listed))) != 160 {
			t.Errorf("the list of every site after: %d rows, want 160", len(listed))
		}
		counts, err := db.DeliveryCounts(ctx, "")
		total := 0
		for _, n := range counts {
			total += n
		}
		if err != nil || total != 160 || counts[model.DeliverySent] != 40 {
			t.Errorf("counts after: %v %v", counts, err)
		}
	})
}
