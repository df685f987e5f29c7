package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// Google's rows: counted apart from Meta's; the sent ones whose request
// Google is still processing are found for the follow-up, and its answer
// recorded; a pause's reason reads "" when there is none.
func TestGoogleDeliveries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
		for _, d := range []*model.Delivery{
			{ID: "m1", Kind: model.KindQualified, State: model.DeliverySent},
			{ID: "g1", Destination: model.DestinationGoogle, Kind: model.KindQualified, State: model.DeliveryPending},
			{ID: "g2", Destination: model.DestinationGoogle, Kind: model.KindQualified, State: model.DeliveryPending},
			{ID: "g3", Destination: model.DestinationGoogle, Kind: "stage:won", State: model.DeliveryDead},
		} {
			d.SiteID, d.EventName, d.EventID, d.Payload = "a", "QualifiedLead", d.ID, []byte(`{}`)
			d.NextAt, d.DeadlineAt, d.CreatedAt, d.UpdatedAt = now, now.Add(time.Hour), now, now
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		st, err := db.DeliveryStatsByDestination(ctx, "a", model.KindQualified, now.Add(-time.Hour))
		if err != nil || st[model.DestinationMeta][model.DeliverySent] != 1 || st[model.DestinationGoogle][model.DeliveryPending] != 2 ||
			st[model.DestinationGoogle][model.DeliveryDead] != 0 {
			t.Fatalf("stats %v %v", st, err)
		}
		if all, _ := db.DeliveryStatsByDestination(ctx, "a", "", now.Add(-time.Hour)); all[model.DestinationGoogle][model.DeliveryDead] != 1 {
			t.Errorf("all kinds: %v", all)
		}

		claimed, err := db.DeliveryClaimFor(ctx, model.ClaimParams{Owner: "n", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10,
			Destinations: []string{model.DestinationGoogle}})
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claim %d %v", len(claimed), err)
		}
		for i, d := range claimed {
			sent := now
			d.State, d.SentAt, d.Attempts = model.DeliverySent, &sent, 1
			d.Response = json.RawMessage(`{"requestId":"r1","awaiting":true}`)
			if i == 1 {
				d.Response = json.RawMessage(`{"requestId":"r1","status":{"requestStatus":"SUCCESS"}}`)
			}
		}
		if _, err := db.DeliveryRecord(ctx, "n", claimed, now); err != nil {
			t.Fatal(err)
		}
		waiting, err := db.DeliveriesAwaitingGoogle(ctx, now.Add(-time.Hour), 10)
		if err != nil || len(waiting) != 1 || waiting[0].ID != claimed[0].ID {
			t.Fatalf("awaiting %v %v", waiting, err)
		}
		if w, _ := db.DeliveriesAwaitingGoogle(ctx, now.Add(time.Hour), 10); len(w) != 0 {
			t.Errorf("sent before the window: %d", len(w))
		}
		d := waiting[0]
		d.State, d.SentAt, d.LastError = model.DeliveryDead, nil, "Google failed the request"
		d.Response = json.RawMessage(`{"requestId":"r1","status":{"requestStatus":"FAILED"}}`)
		if err := db.DeliveryAnswer(ctx, d, now); err != nil {
			t.Fatal(err)
		}
		got, _ := db.DeliveryByID(ctx, d.ID)
		if got.State != model.DeliveryDead || got.SentAt != nil || got.LastError != "Google failed the request" {
			t.Errorf("after the answer: %+v", got)
		}
		if w, _ := db.DeliveriesAwaitingGoogle(ctx, now.Add(-time.Hour), 10); len(w) != 0 {
			t.Errorf("still awaiting: %d", len(w))
		}

		sh := model.Share{Site: "a", Destination: model.DestinationGoogle}
		if r, err := db.DestinationPauseReason(ctx, sh); err != nil || r != "" {
			t.Errorf("no pause: %q %v", r, err)
		}
		db.DestinationPauseSet(ctx, sh, "terms", now)
		if r, err := db.DestinationPauseReason(ctx, sh); err != nil || r != "terms" {
			t.Errorf("pause: %q %v", r, err)
		}
	})
}

// A site's Google pause stands when the site is saved unchanged (a
// restart provisions it again) and is lifted when its Google settings or
// credentials' fingerprint change, as a new access token lifts Meta's.
func TestGooglePauseLiftsOnChange(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		sh := model.Share{Site: "a", Destination: model.DestinationGoogle}
		g := model.GoogleSettings{OperatingAccountID: "1234567890", QualifiedConversionAction: "555", Credentials: "aaaa"}
		save := func(g model.GoogleSettings) {
			t.Helper()
			testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A", Settings: model.SiteSettings{Google: &g}}, now)
		}
		paused := func() string {
			t.Helper()
			r, err := db.DestinationPauseReason(ctx, sh)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		pause := func() {
			t.Helper()
			if err := db.DestinationPauseSet(ctx, sh, "the terms are not accepted", now); err != nil {
				t.Fatal(err)
			}
		}
		save(g)
		pause()
		save(g)
		if paused() == "" {
			t.Fatal("saving the site unchanged lifted its Google pause")
		}
		g.Credentials = "bbbb"
		save(g)
		if r := paused(); r != "" {
			t.Errorf("new credentials left the pause: %q", r)
		}
		pause()
		g.LoginAccountID = "9999999999"
		save(g)
		if r := paused(); r != "" {
			t.Errorf("a new login account left the pause: %q", r)
		}
		// Meta's pause is the site's own and is not touched.
		if err := db.SitePause(ctx, "a", "token refused", now); err != nil {
			t.Fatal(err)
		}
		pause()
		g.Mode = model.GoogleModeValidate
		save(g)
		if s, _ := db.SiteByID(ctx, "a"); s.PausedReason != "token refused" || paused() != "" {
			t.Errorf("Meta's pause %q, Google's %q", s.PausedReason, paused())
		}
	})
}

// A replay goes by each row's own window: a Google dead letter ten days
// old is queued again (Google's 90 days), a Meta one past its 7 days is
// refused in Meta's words, and a Google one past its 90 in Google's.
func TestDeliveryReplayPerDestination(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		testkit.AddSite(t, db, &model.Site{ID: "a", Name: "A"}, now)
		ins := func(id, dest string, created time.Time, window time.Duration) {
			t.Helper()
			d := &model.Delivery{ID: id, SiteID: "a", Destination: dest, Kind: model.KindQualified, EventName: "QualifiedLead",
				EventID: id, Payload: []byte(`{}`), State: model.DeliveryDead, Attempts: 1, LastError: "refused",
				NextAt: created, DeadlineAt: created.Add(window), CreatedAt: created, UpdatedAt: created}
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		tenDays := now.Add(-10 * 24 * time.Hour)
		ins("g10", model.DestinationGoogle, tenDays, model.GoogleMaxEventAge)
		ins("m10", model.DestinationMeta, tenDays, model.MaxEventAge)
		ins("g91", model.DestinationGoogle, now.Add(-91*24*time.Hour), model.GoogleMaxEventAge)
		if err := db.DeliveryReplay(ctx, "g10", "replayed", now); err != nil {
			t.Errorf("a Google dead letter 10 days old: %v", err)
		}
		for id, want := range map[string]string{"m10": "Meta's 7-day window", "g91": "Google's 90-day window"} {
			err := db.DeliveryReplay(ctx, id, "replayed", now)
			if !errors.Is(err, model.ErrConflict) || !strings.Contains(err.Error(), want) {
				t.Errorf("replay of %s: %v, want %q", id, err, want)
			}
		}
	})
}
