package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

func TestLeadList(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		base := time.Date(2026, 3, 10, 21, 30, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, base)
		testkit.AddSite(t, db, &model.Site{ID: "b", Name: "B"}, base)
		add := func(id, site, name, email, phoneKey string, v model.Verdict, at time.Time) {
			l := &model.Lead{ID: model.LeadID(id), SiteID: model.SiteID(site), EventID: id, Name: name, Email: email,
				Phone: phoneKey, PhoneKey: phoneKey, SubmittedAt: at, ReceivedAt: at, Decision: model.Decision{Verdict: v}}
			if err := db.LeadInsert(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		add("l1", "a", "Ayşe Yılmaz", "ayse@x.example", "905324128719", model.VerdictClean, base)
		add("l2", "a", "Mehmet 100%_off", "m@x.example", "905332184490", model.VerdictReview, base.Add(time.Hour))
		add("l3", "b", "Other", "o@x.example", "4915112345678", model.VerdictJunk, base.Add(2*time.Hour))
		add("l4", "a", "Same Time", "s@x.example", "", model.VerdictJunk, base.Add(2*time.Hour))
		ids := func(f store.LeadFilter) string {
			list, err := db.LeadList(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, l := range list {
				out = append(out, string(l.ID))
			}
			return strings.Join(out, ",")
		}
		cases := []struct {
			name string
			f    store.LeadFilter
			want string
		}{
			{"all newest first", store.LeadFilter{}, "l4,l3,l2,l1"},
			{"site", store.LeadFilter{Site: "a"}, "l4,l2,l1"},
			{"verdict", store.LeadFilter{Verdict: model.VerdictJunk}, "l4,l3"},
			{"name any case", store.LeadFilter{Search: "MEHMET"}, "l2"},
			{"e-mail", store.LeadFilter{Search: "ayse@"}, "l1"},
			{"phone digits", store.LeadFilter{Search: "533 218", PhoneDigits: "533218"}, "l2"},
			{"percent is literal", store.LeadFilter{Search: "100%_"}, "l2"},
			{"underscore is literal", store.LeadFilter{Search: "y_l"}, ""},
			{"page", store.LeadFilter{Limit: 2}, "l4,l3"},
			{"next page", store.LeadFilter{Before: base.Add(2 * time.Hour), BeforeID: "l3", Limit: 2}, "l2,l1"},
		}
		for _, c := range cases {
			if got := ids(c.f); got != c.want {
				t.Errorf("%s: %q, want %q", c.name, got, c.want)
			}
		}
	})
}

func TestDeliveryReplay(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
		ins := func(id string, st model.DeliveryState, deadline time.Time) {
			d := &model.Delivery{ID: id, SiteID: "a", Kind: model.KindLead, EventName: "Lead", EventID: id, Payload: []byte(`{}`),
				State: st, Attempts: 4, LastError: "Invalid parameter", NextAt: now.Add(-time.Hour), DeadlineAt: deadline,
				CreatedAt: now.Add(-time.Hour), UpdatedAt: now}
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		ins("d1", model.DeliveryDead, now.Add(time.Hour))
		ins("d2", model.DeliverySent, now.Add(time.Hour))
		ins("d3", model.DeliveryDead, now.Add(-time.Minute))
		if err := db.DeliveryReplay(ctx, "d1", "replayed by u_1", now); err != nil {
			t.Fatal(err)
		}
		d, _ := db.DeliveryByID(ctx, "d1")
		if d.State != model.DeliveryPending || d.Attempts != 4 || !d.NextAt.Equal(now) || d.LastError != "replayed by u_1; before: Invalid parameter" {
			t.Errorf("replayed: %+v", d)
		}
		for _, id := range []string{"d1", "d2", "d3"} {
			if err := db.DeliveryReplay(ctx, id, "again", now); !errors.Is(err, model.ErrConflict) {
				t.Errorf("replay %s: %v, want a conflict", id, err)
			}
		}
		if err := db.DeliveryReplay(ctx, "nope", "x", now); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("replay of a missing delivery: %v", err)
		}
		counts, _ := db.DeliveryStats(ctx, "a", "", time.Time{})
		if counts[model.DeliveryPending] != 1 || counts[model.DeliverySent] != 1 || counts[model.DeliveryDead] != 1 {
			t.Errorf("counts: %v", counts)
		}
		list, _ := db.DeliveryList(ctx, store.DeliveryFilter{State: model.DeliveryDead})
		if len(list) != 1 || list[0].ID != "d3" {
			t.Errorf("dead list: %v", list)
		}
	})
}
