package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0340SplitsTheOutbox: on a database of the shape before
// migration 0340, filled with outbox rows of every state, destination and
// kind (leased ones, retried ones, sent ones with Meta's answer, redacted
// ones), the migration loses no row and keeps every column; afterwards a
// claim leases exactly the due unleased events in deadline order, their
// outcome is recorded, an expired lease is given back, and an event already
// there is still refused.
func TestMigration0340SplitsTheOutbox(t *testing.T) {
	eachBelow(t, 340, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		rng := rand.New(rand.NewPCG(3, 40))
		states := []model.DeliveryState{model.DeliveryPending, model.DeliveryRetry, model.DeliverySent, model.DeliveryDead,
			model.DeliveryExpired, model.DeliveryPaused, model.DeliveryDryRun}
		dests := []string{model.DestinationMeta, model.DestinationMeta, model.DestinationGoogle, model.DestinationWebhook}
		kinds := []string{model.KindLead, model.KindQualified, model.KindPageView, "stage:won"}
		type leaseOf struct {
			owner string
			until int64
		}
		var (
			want   = map[string]*model.Delivery{}
			leases = map[string]leaseOf{}
			ids    []string
		)
		const n = 400
		for i := range n {
			id := fmt.Sprintf("dl_%03d", i)
			created := now.Add(-time.Duration(rng.Int64N(int64(6 * 24 * time.Hour)))).Truncate(time.Millisecond)
			d := &model.Delivery{ID: id, SiteID: model.SiteID([]string{"a", "b"}[rng.IntN(2)]),
				Destination: dests[rng.IntN(len(dests))], Kind: kinds[rng.IntN(len(kinds))], EventName: "Lead",
				EventID: fmt.Sprintf("ev-%03d", i), PixelID: "px", Payload: []byte(fmt.Sprintf(`{"event_id":"ev-%03d","pad":"%0200d"}`, i, i)),
				State: states[rng.IntN(len(states))], Attempts: rng.IntN(5),
				NextAt: created.Add(time.Duration(rng.Int64N(int64(48*time.Hour))) - 24*time.Hour).Truncate(time.Millisecond), DeadlineAt: created.Add(7 * 24 * time.Hour),
				CreatedAt: created, UpdatedAt: created.Add(time.Minute), Mode: []string{"", "live", "test"}[rng.IntN(3)]}
			if rng.IntN(2) == 0 {
				d.LeadID = model.LeadID(fmt.Sprintf("ld_%03d", i/2))
			}
			if d.State == model.DeliverySent || d.State == model.DeliveryDryRun {
				at := created.Add(time.Second)
				d.SentAt = &at
				d.Response = []byte(`{"events_received":1,"fbtrace_id":"A` + id + `"}`)
			}
			if d.State == model.DeliveryRetry || d.State == model.DeliveryDead {
				d.LastError = "error " + id
			}
			var lease leaseOf
			if (d.State == model.DeliveryPending || d.State == model.DeliveryRetry) && rng.IntN(4) == 0 {
				lease = leaseOf{"n1", now.Add(time.Duration(rng.IntN(3)-1) * time.Minute).UnixMilli()}
				leases[id] = lease
			}
			var sent, until, redacted any
			if d.SentAt != nil {
				sent = d.SentAt.UnixMilli()
			}
			if lease.owner != "" {
				until = lease.until
			}
			if rng.IntN(10) == 0 {
				redacted = created.UnixMilli()
			}
			if err := db.TestExec(ctx, `INSERT INTO deliveries (id, site_id, lead_id, kind, event_name, event_id, pixel_id, payload,
				state, attempts, next_at, deadline_at, lease_owner, lease_until, last_error, response, mode, created_at, updated_at,
				sent_at, redacted_at, destination) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				d.ID, string(d.SiteID), string(d.LeadID), d.Kind, d.EventName, d.EventID, d.PixelID, string(d.Payload),
				string(d.State), d.Attempts, d.NextAt.UnixMilli(), d.DeadlineAt.UnixMilli(), lease.owner, until, d.LastError,
				string(d.Response), d.Mode, d.CreatedAt.UnixMilli(), d.UpdatedAt.UnixMilli(), sent, redacted, d.Destination); err != nil {
				t.Fatal(err)
			}
			want[id] = d
			ids = append(ids, id)
		}
		before := map[model.DeliveryState]int{}
		for _, d := range want {
			before[d.State]++
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}

		// Nothing lost, every column kept.
		if after, err := db.DeliveryCounts(ctx, ""); err != nil || fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("counts after the migration: %v %v, before %v", after, err, before)
		}
		for _, id := range ids {
			w := want[id]
			got, err := db.DeliveryByID(ctx, id)
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			if got.SiteID != w.SiteID || got.LeadID != w.LeadID || got.Destination != w.Destination || got.Kind != w.Kind ||
				got.EventName != w.EventName || got.EventID != w.EventID || got.PixelID != w.PixelID ||
				string(got.Payload) != string(w.Payload) || got.State != w.State || got.Attempts != w.Attempts ||
				!got.NextAt.Equal(w.NextAt) || !got.DeadlineAt.Equal(w.DeadlineAt) || got.LastError != w.LastError ||
				string(got.Response) != string(w.Response) || got.Mode != w.Mode || !got.CreatedAt.Equal(w.CreatedAt) ||
				!got.UpdatedAt.Equal(w.UpdatedAt) || (got.SentAt == nil) != (w.SentAt == nil) ||
				(got.SentAt != nil && !got.SentAt.Equal(*w.SentAt)) {
				got.Payload, w.Payload = nil, nil // compared above; too long to print
				t.Errorf("%s after the migration:\n got %+v\nwant %+v", id, got, w)
			}
		}
		for lead := range n / 2 {
			id := model.LeadID(fmt.Sprintf("ld_%03d", lead))
			var wantIDs, gotIDs []string
			for _, i := range ids {
				if want[i].LeadID == id {
					wantIDs = append(wantIDs, i)
				}
			}
			got, err := db.DeliveriesByLead(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range got {
				gotIDs = append(gotIDs, d.ID)
			}
			slices.Sort(wantIDs)
			slices.Sort(gotIDs)
			if !slices.Equal(gotIDs, wantIDs) {
				t.Errorf("events of %s: %v, want %v", id, gotIDs, wantIDs)
			}
		}

		// A claim leases exactly the due events whose lease is not held
		// (one run out is given back), Meta's destination, oldest deadline
		// first within a site.
		var due []string
		for _, id := range ids {
			d, l := want[id], leases[id]
			if d.Destination == model.DestinationMeta && (d.State == model.DeliveryPending || d.State == model.DeliveryRetry) &&
				!d.NextAt.After(now) && (l.owner == "" || l.until <= now.UnixMilli()) {
				due = append(due, id)
			}
		}
		claimed, err := db.DeliveryClaim(ctx, "n2", now, now.Add(time.Minute), n, nil)
		if err != nil {
			t.Fatal(err)
		}
		var gotIDs []string
		for i, d := range claimed {
			gotIDs = append(gotIDs, d.ID)
			if i > 0 && claimed[i-1].SiteID == d.SiteID && claimed[i-1].DeadlineAt.After(d.DeadlineAt) {
				t.Errorf("claim order: %s (%v) after %s (%v)", d.ID, d.DeadlineAt, claimed[i-1].ID, claimed[i-1].DeadlineAt)
			}
			if string(d.Payload) != string(want[d.ID].Payload) {
				t.Errorf("claimed %s with payload %s", d.ID, d.Payload)
			}
		}
		slices.Sort(gotIDs)
		slices.Sort(due)
		if len(due) == 0 || !slices.Equal(gotIDs, due) {
			t.Fatalf("claimed %v, want %v", gotIDs, due)
		}
		for _, d := range claimed {
			d.State, d.Attempts = model.DeliverySent, d.Attempts+1
			at := now.Add(time.Second)
			d.SentAt, d.Response = &at, []byte(`{"events_received":1}`)
		}
		if lost, err := db.DeliveryRecord(ctx, "n2", claimed, now.Add(time.Second)); err != nil || lost != 0 {
			t.Fatalf("record: lost %d, %v", lost, err)
		}
		for _, d := range claimed {
			got, err := db.DeliveryByID(ctx, d.ID)
			if err != nil || got.State != model.DeliverySent || got.Attempts != want[d.ID].Attempts+1 ||
				string(got.Payload) != string(want[d.ID].Payload) {
				t.Errorf("%s after its outcome: %+v %v", d.ID, got, err)
			}
		}
		if again, err := db.DeliveryClaim(ctx, "n2", now, now.Add(time.Minute), n, nil); err != nil || len(again) != 0 {
			t.Errorf("a second claim: %d events, %v", len(again), err)
		}

		// The event's key still refuses a repeat; a new event goes in.
		repeat := *want[ids[0]]
		repeat.ID = "dl_repeat"
		fresh := repeat
		fresh.ID, fresh.EventID = "dl_fresh", "ev-fresh"
		got, err := db.DeliveryInsertAll(ctx, []*model.Delivery{&repeat, &fresh})
		if err != nil || !slices.Equal(got, []bool{false, true}) {
			t.Errorf("insert after the migration: %v %v, want [false true]", got, err)
		}
		if _, err := db.DeliveryByID(ctx, "dl_repeat"); err == nil {
			t.Errorf("the refused repeat has a row")
		}
	})
}
