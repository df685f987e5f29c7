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

// TestWebhookEndpoints: an endpoint's secret is sealed at rest and opens
// only as its own; a lead's unsettled earlier post blocks a later one of
// the same endpoint and no other; a junk verdict's cancel leaves the
// webhook's posts alone.
func TestWebhookEndpoints(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.UnixMilli(time.Now().UnixMilli()).UTC()
		testkit.AddSites(t, db, now, "dent")
		ep := &model.WebhookEndpoint{ID: "wh_1", SiteID: "dent", URL: "https://crm.example/h",
			Events: []string{model.HookLeadReceived, model.HookStage}, Secret: "whsec_clear0123456789", CreatedAt: now}
		if err := db.WebhookEndpointInsert(ctx, ep); err != nil {
			t.Fatal(err)
		}
		rows, err := db.TestQueryAll(ctx, `SELECT sealed FROM webhook_endpoints`)
		if err != nil || len(rows) != 1 || strings.Contains(rows[0], "clear0123") {
			t.Fatalf("stored %q %v", rows, err)
		}
		got, err := db.WebhookEndpointByID(ctx, "wh_1")
		if err != nil || got.Secret != ep.Secret || got.URL != ep.URL || len(got.Events) != 2 || !got.Wants(model.HookStage) || got.Wants(model.HookQualified) {
			t.Fatalf("read %+v %v", got, err)
		}
		list, err := db.WebhookEndpoints(ctx, "dent", false)
		if err != nil || len(list) != 1 || list[0].Secret != "" {
			t.Fatalf("list %+v %v", list, err)
		}
		row := func(id string, at time.Time, lead model.LeadID, ep string) *model.Delivery {
			return &model.Delivery{ID: id, SiteID: "dent", LeadID: lead, Destination: model.DestinationWebhook, Kind: model.HookStage,
				EventName: model.HookStage, EventID: id, PixelID: ep, Payload: []byte(`{}`), State: model.DeliveryPending,
				NextAt: at, DeadlineAt: at.Add(time.Hour), CreatedAt: at, UpdatedAt: at}
		}
		a, b, c := row("dl_a", now, "ld_1", "wh_1"), row("dl_b", now.Add(time.Second), "ld_1", "wh_1"), row("dl_c", now.Add(time.Second), "ld_1", "wh_2")
		if _, err := db.DeliveryInsertAll(ctx, []*model.Delivery{a, b, c}); err != nil {
			t.Fatal(err)
		}
		if got, err := db.WebhookBlocker(ctx, b); err != nil || got.ID != "dl_a" {
			t.Errorf("blocker of b = %v %v, want dl_a", got, err)
		}
		for _, d := range []*model.Delivery{a, c} {
			if _, err := db.WebhookBlocker(ctx, d); !errors.Is(err, model.ErrNotFound) {
				t.Errorf("blocker of %s: %v, want none", d.ID, err)
			}
		}
		if n, err := db.DeliveryCancelByLead(ctx, "ld_1", "junk", now); err != nil || n != 0 {
			t.Errorf("cancel by lead ended %d webhook posts (%v)", n, err)
		}
		if err := db.WebhookEndpointDelete(ctx, "dent", "wh_1"); err != nil {
			t.Fatal(err)
		}
		if err := db.WebhookEndpointDelete(ctx, "dent", "wh_1"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
	})
}
