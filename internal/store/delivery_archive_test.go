package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestDeliveryArchive: a lead's finished event, once shrunk, is archived
// (its state row gone, its state in its delivery_events row) and every
// reader still finds it as it was: by id, on its lead's page (oldest
// first with the lead's live event), in the deliveries list of its site, of
// every site and of its state (paged), in the counts, the stats and the
// metrics; a sent one keeps no answer, a dead one its answer. Queuing the
// same event again is refused, and erasure redacts its payload. A webhook
// post of the lead is shrunk but keeps its two rows.
func TestDeliveryArchive(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 6, 23, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		old := now.Add(-40 * 24 * time.Hour)
		sent := old.Add(2 * time.Second)
		rows := []*model.Delivery{
			{ID: "d_sent", LeadID: "l_1", Kind: model.KindLead, State: model.DeliverySent, Response: []byte(`{"events_received":1}`)},
			{ID: "d_dead", LeadID: "l_1", Kind: model.KindQualified, State: model.DeliveryDead, LastError: "bad token",
				Response: []byte(`{"error":"bad token"}`)},
			{ID: "d_live", LeadID: "l_1", Kind: "stage:won", State: model.DeliveryPending},
			{ID: "d_hook", LeadID: "l_1", Kind: model.KindLead, State: model.DeliverySent, Destination: model.DestinationWebhook,
				Response: []byte(`{"status":200}`)},
			{ID: "d_other", LeadID: "l_2", Kind: model.KindLead, State: model.DeliverySent, SiteID: "b"},
		}
		for i, d := range rows {
			if d.SiteID == "" {
				d.SiteID = "a"
			}
			d.EventName, d.EventID, d.PixelID = "Lead", "e_"+d.ID, "px"
			d.Payload, d.Attempts, d.Mode = []byte(`{"event_name":"Lead","user_data":{"em":"x"}}`), 1, "live"
			d.CreatedAt = old.Add(time.Duration(i) * time.Minute)
			d.NextAt, d.UpdatedAt, d.DeadlineAt = d.CreatedAt, sent, d.CreatedAt.Add(7*24*time.Hour)
			if d.ID == "d_live" {
				d.CreatedAt, d.NextAt, d.UpdatedAt, d.DeadlineAt, d.Attempts = now, now, now, now.Add(time.Hour), 0
			}
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
			if d.State == model.DeliverySent {
				if err := db.TestExec(ctx, `UPDATE delivery_state SET sent_at = ? WHERE id = ?`, sent.UnixMilli(), d.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		shrunk := json.RawMessage(`{"event_name":"Lead","match_keys":["em"]}`)
		ds, err := db.DeliveriesToShrink(ctx, now.Add(-30*24*time.Hour), store.ShrinkCursor{}, now, 10)
		if err != nil || len(ds) != 4 {
			t.Fatalf("to shrink: %d %v", len(ds), err)
		}
		for _, d := range ds {
			if ok, err := db.DeliveryShrink(ctx, d.ID, shrunk, now); err != nil || !ok {
				t.Fatalf("shrink %s: %v %v", d.ID, ok, err)
			}
			if ok, err := db.DeliveryShrink(ctx, d.ID, shrunk, now); err != nil || ok {
				t.Errorf("shrink %s twice: %v %v", d.ID, ok, err)
			}
		}
		states, err := db.TestQueryAll(ctx, `SELECT id FROM delivery_state ORDER BY id`)
		if err != nil || !slices.Equal(states, []string{"d_hook", "d_live"}) {
			t.Errorf("state rows left: %v %v, want the webhook post's and the live event's", states, err)
		}
		archived, err := db.TestQueryAll(ctx, `SELECT id FROM delivery_events WHERE archived_at IS NOT NULL ORDER BY id`)
		if err != nil || !slices.Equal(archived, []string{"d_dead", "d_other", "d_sent"}) {
			t.Errorf("archived rows: %v %v", archived, err)
		}
		// An archived row's payload is stored packed (migration 0490), the
		// webhook post's as it was given.
		stored, err := db.TestQueryAll(ctx, `SELECT cleanads_idtext(id) || ' ' || SUBSTR(payload, 1, 3) FROM delivery_events ORDER BY id`)
		if want := []string{"d_dead z1:", "d_hook {\"e", "d_live {\"e", "d_other z1:", "d_sent z1:"}; err != nil ||
			!slices.Equal(stored, want) {
			t.Errorf("payloads stored: %q %v, want %q", stored, err, want)
		}

		// Each row as it was, shrunk: by id and on its lead's page.
		check := func(got *model.Delivery, want *model.Delivery) {
			t.Helper()
			if got.SiteID != want.SiteID || got.LeadID != want.LeadID || got.Kind != want.Kind || got.State != want.State ||
				got.EventName != want.EventName || got.EventID != want.EventID || got.PixelID != want.PixelID ||
				got.Attempts != want.Attempts || got.Mode != want.Mode || got.LastError != want.LastError ||
				!got.CreatedAt.Equal(want.CreatedAt) || !got.DeadlineAt.Equal(want.DeadlineAt) ||
				got.Destination != destinationOr(want.Destination) {
				t.Errorf("%s: %+v, want %+v", want.ID, got, want)
			}
			if want.State == model.DeliverySent && (got.SentAt == nil || !got.SentAt.Equal(sent)) {
				t.Errorf("%s sent at %v, want %v", want.ID, got.SentAt, sent)
			}
			if want.ID != "d_live" && (got.ShrunkAt == nil || !got.ShrunkAt.Equal(now) || string(got.Payload) != string(shrunk)) {
				t.Errorf("%s: shrunk at %v, payload %s", want.ID, got.ShrunkAt, got.Payload)
			}
		}
		for _, want := range rows {
			got, err := db.DeliveryByID(ctx, want.ID)
			if err != nil {
				t.Fatalf("%s: %v", want.ID, err)
			}
			check(got, want)
		}
		if d, _ := db.DeliveryByID(ctx, "d_sent"); len(d.Response) != 0 {
			t.Errorf("an archived sent event kept its answer %s", d.Response)
		}
		if d, _ := db.DeliveryByID(ctx, "d_dead"); string(d.Response) != `{"error":"bad token"}` {
			t.Errorf("an archived dead event's answer: %s", d.Response)
		}
		if d, _ := db.DeliveryByID(ctx, "d_hook"); string(d.Response) == "" {
			t.Errorf("a shrunk webhook post lost its answer")
		}
		byLead, err := db.DeliveriesByLead(ctx, "l_1")
		if err != nil {
			t.Fatal(err)
		}
		if got := deliveryIDs(byLead); !slices.Equal(got, []string{"d_sent", "d_dead", "d_hook", "d_live"}) {
			t.Errorf("lead page: %v, want every event oldest first", got)
		}
		for _, d := range byLead {
			check(d, rows[slices.IndexFunc(rows, func(r *model.Delivery) bool { return r.ID == d.ID })])
		}

		// The lists: of a site, of every site, of some, of a state, paged.
		list := func(f store.DeliveryFilter) []string {
			t.Helper()
			var got []string
			for range 10 {
				ds, err := db.DeliveryList(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, deliveryIDs(ds)...)
				if len(ds) < f.Limit {
					return got
				}
				f.Before, f.BeforeID = ds[len(ds)-1].CreatedAt, ds[len(ds)-1].ID
			}
			t.Fatalf("more than 10 pages of %+v", f)
			return nil
		}
		for _, c := range []struct {
			f    store.DeliveryFilter
			want []string
		}{
			{store.DeliveryFilter{Limit: 2}, []string{"d_live", "d_other", "d_hook", "d_dead", "d_sent"}},
			{store.DeliveryFilter{Site: "a", Limit: 1}, []string{"d_live", "d_hook", "d_dead", "d_sent"}},
			{store.DeliveryFilter{Only: []model.SiteID{"b"}, Limit: 50}, []string{"d_other"}},
			{store.DeliveryFilter{State: model.DeliverySent, Limit: 1}, []string{"d_other", "d_hook", "d_sent"}},
			{store.DeliveryFilter{Site: "a", State: model.DeliveryDead, Limit: 5}, []string{"d_dead"}},
		} {
			if got := list(c.f); !slices.Equal(got, c.want) {
				t.Errorf("list %+v: %v, want %v", c.f, got, c.want)
			}
		}

		// The counts.
		counts, err := db.DeliveryCounts(ctx, "")
		if err != nil || counts[model.DeliverySent] != 3 || counts[model.DeliveryDead] != 1 || counts[model.DeliveryPending] != 1 {
			t.Errorf("counts of every site: %v %v", counts, err)
		}
		if counts, err := db.DeliveryCounts(ctx, "a"); err != nil || counts[model.DeliverySent] != 2 {
			t.Errorf("counts of a: %v %v", counts, err)
		}
		if st, err := db.DeliveryStats(ctx, "", "", time.Time{}); err != nil || st[model.DeliverySent] != 3 || st[model.DeliveryDead] != 1 {
			t.Errorf("stats of every site: %v %v", st, err)
		}
		if st, err := db.DeliveryStats(ctx, "a", model.KindQualified, old); err != nil || len(st) != 1 || st[model.DeliveryDead] != 1 {
			t.Errorf("stats of a's qualified events: %v %v", st, err)
		}
		byDest, err := db.DeliveryStatsByDestination(ctx, "a", "", time.Time{})
		if err != nil || byDest[model.DestinationMeta][model.DeliverySent] != 1 || byDest[model.DestinationMeta][model.DeliveryDead] != 1 ||
			byDest[model.DestinationWebhook][model.DeliverySent] != 1 {
			t.Errorf("stats by destination: %v %v", byDest, err)
		}
		stats, err := db.Stats(ctx, now)
		if err != nil || stats.Deliveries["a"][model.DeliverySent] != 2 || stats.Deliveries["b"][model.DeliverySent] != 1 {
			t.Errorf("metrics: %v %v", stats, err)
		}
		if held, err := db.LeadEventsHeld(ctx, "l_1", now.Add(-time.Hour)); err != nil || held {
			t.Errorf("a lead with archived events is held: %v %v", held, err)
		}

		// The same event again is refused: the guard holds for archived rows.
		again := *rows[0]
		again.ID, again.State, again.CreatedAt = "d_again", model.DeliveryPending, now
		if ok, err := db.DeliveryInsert(ctx, &again); err != nil || ok {
			t.Errorf("an archived event queued again: %v %v", ok, err)
		}
		if _, err := db.DeliveryByID(ctx, "d_again"); err == nil {
			t.Errorf("the refused event is in the outbox")
		}

		// Erasure redacts an archived row's payload, which stays archived.
		if _, err := db.DeliveryRedact(ctx, "d_sent", json.RawMessage(`{"erased":true}`), "erased", now); err != nil {
			t.Fatal(err)
		}
		if d, err := db.DeliveryByID(ctx, "d_sent"); err != nil || string(d.Payload) != `{"erased":true}` || d.State != model.DeliverySent {
			t.Errorf("erased archived row: %+v %v", d, err)
		}
		if p, err := db.TestQueryString(ctx, `SELECT payload FROM delivery_events WHERE id = 'd_sent'`); err != nil ||
			!strings.HasPrefix(p, "z1:") {
			t.Errorf("erased archived row's payload stored as %q %v, want it packed", p, err)
		}
		// Replay refuses it.
		if err := db.DeliveryReplay(ctx, "d_dead", "fixed", now); err == nil || !strings.Contains(err.Error(), "cannot be sent again") {
			t.Errorf("replay of an archived dead event: %v", err)
		}
	})
}

// destinationOr is a row's destination as read back: Meta's when it named
// none.
func destinationOr(d string) string {
	if d == "" {
		return model.DestinationMeta
	}
	return d
}

// deliveryIDs are the rows' ids in order.
func deliveryIDs(ds []*model.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}
