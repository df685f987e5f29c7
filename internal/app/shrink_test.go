package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// TestRetentionShrinksFinishedEvents: a finished event past its deadline
// and retention.event_days keeps what the owner's view needs (name, time,
// the names of its match keys) and loses the hashed keys and clear values;
// it still lists, counts and shows, replay refuses it in plain words, a
// second run reads nothing, and erasure of its person still works. An
// event not finished, or too recent, stays whole.
func TestRetentionShrinksFinishedEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	lead, _ := f.visitAndLead()
	fresh := f.submit(realLead())
	now := f.clk.Now()
	claimed, err := f.db.DeliveryClaim(ctx, "n", now, now.Add(time.Minute), 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	var dead string
	for _, d := range claimed {
		if d.LeadID != lead.ID {
			d.State = model.DeliveryPending // fresh's: never sent
			continue
		}
		if d.Kind == model.KindLead {
			d.State, d.LastError, dead = model.DeliveryDead, "refused", d.ID
			continue
		}
		d.State, d.SentAt = model.DeliverySent, &now
	}
	if _, err := f.db.DeliveryRecord(ctx, "n", claimed, now); err != nil {
		t.Fatal(err)
	}
	if dead == "" || len(f.deliveries(lead.ID)) != 2 {
		t.Fatalf("the fixture's events: %v", f.deliveries(lead.ID))
	}

	// Within the window nothing is shrunk.
	f.clk.Add(29 * 24 * time.Hour)
	if res, err := f.svc.Retain(ctx, app.RetentionPolicy{EventDays: 30}); err != nil || res.Shrunk != 0 {
		t.Fatalf("within the window: %+v %v", res, err)
	}
	f.clk.Add(2 * 24 * time.Hour)
	// The lead's two events and the visit's PageView (the site is in dry
	// run: a row kept as dry_run).
	res, err := f.svc.Retain(ctx, app.RetentionPolicy{EventDays: 30})
	if err != nil || res.Shrunk != 3 {
		t.Fatalf("past the window: %+v %v", res, err)
	}
	for kind, d := range f.deliveries(lead.ID) {
		if d.ShrunkAt == nil || d.ShrunkDays() != 31 {
			t.Errorf("%s: shrunk at %v (%d days)", kind, d.ShrunkAt, d.ShrunkDays())
		}
		var ev struct {
			EventName string          `json:"event_name"`
			EventTime int64           `json:"event_time"`
			MatchKeys []string        `json:"match_keys"`
			UserData  json.RawMessage `json:"user_data"`
		}
		if err := json.Unmarshal(d.Payload, &ev); err != nil || ev.EventName != d.EventName || ev.EventTime == 0 ||
			ev.UserData != nil || !slices.Contains(ev.MatchKeys, "em") || !slices.Contains(ev.MatchKeys, "ph") {
			t.Errorf("%s shrunk payload: %s (%v)", kind, d.Payload, err)
		}
		for _, p := range append(personal, "fb.1.") {
			if strings.Contains(string(d.Payload), p) {
				t.Errorf("%s shrunk payload keeps %q: %s", kind, p, d.Payload)
			}
		}
		if len(d.Payload) > 250 {
			t.Errorf("%s shrunk payload is %d bytes: %s", kind, len(d.Payload), d.Payload)
		}
		if got, err := f.db.DeliveryByID(ctx, d.ID); err != nil || got.ShrunkAt == nil {
			t.Errorf("%s by id: %v %v", kind, got, err)
		}
	}
	for _, d := range f.deliveries(fresh.ID) {
		if d.ShrunkAt != nil || !strings.Contains(string(d.Payload), `"em"`) {
			t.Errorf("an event not sent was shrunk: %s", d.Payload)
		}
	}
	// They still count and list.
	counts, err := f.db.DeliveryStats(ctx, "dent", "", time.Time{})
	if err != nil || counts[model.DeliverySent] != 1 || counts[model.DeliveryDead] != 1 {
		t.Errorf("counts: %v %v", counts, err)
	}
	list, err := f.db.DeliveryList(ctx, store.DeliveryFilter{Site: "dent", State: model.DeliverySent, Limit: 10})
	if err != nil || len(list) != 1 || list[0].ShrunkAt == nil {
		t.Errorf("list: %v %v", list, err)
	}
	// Replay refuses a shrunk dead letter, saying why.
	err = f.db.DeliveryReplay(ctx, dead, "replayed", f.clk.Now())
	if !errors.Is(err, model.ErrConflict) || !strings.Contains(err.Error(), "cleared 31 days after it was queued") {
		t.Errorf("replay of a shrunk event: %v", err)
	}
	// A second run reads nothing more.
	if res, err := f.svc.Retain(ctx, app.RetentionPolicy{EventDays: 30}); err != nil || res.Shrunk != 0 {
		t.Errorf("second run: %+v %v", res, err)
	}
	// Erasure still finds the person and their shrunk events.
	got, err := f.svc.Forget(ctx, app.ForgetInput{Email: "ayse.yilmaz@gmail.com"})
	if err != nil || got.Leads != 2 || got.Deliveries < 2 {
		t.Errorf("forget: %+v %v", got, err)
	}
	text := f.leadText(lead.ID)
	for _, p := range personal {
		if strings.Contains(text, p) {
			t.Errorf("%q is still stored for the erased lead", p)
		}
	}
	for _, d := range f.deliveries(lead.ID) {
		if d.ShrunkAt == nil || !strings.Contains(string(d.Payload), "match_keys") {
			t.Errorf("erasure undid the shrink: %s", d.Payload)
		}
	}
}
