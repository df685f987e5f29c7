package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// Migration 0281 keys an outbox row by its destination too: the rows there
// stay, and the same event of a lead goes to Meta and to TikTok as two
// rows, each still once.
func TestMigration0281KeysRowsPerPlatform(t *testing.T) {
	eachBelow(t, 281, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Now().UTC().Truncate(time.Millisecond)
		row := func(id, dest string) *model.Delivery {
			return &model.Delivery{ID: id, SiteID: "dent", LeadID: "ld_1", Destination: dest, Kind: model.KindLead,
				EventName: "Lead", EventID: "browser-1", PixelID: "1", Payload: []byte(`{}`), State: model.DeliveryPending,
				NextAt: now, DeadlineAt: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}
		}
		if err := db.TestExec(ctx, `INSERT INTO sites (id, name, api_key_hash, pinned, settings, access_token, created_at, updated_at)
			VALUES ('dent', 'Dent', '', 0, '{}', '', 1, 1)`); err != nil {
			t.Fatal(err)
		}
		if err := db.TestExec(ctx, `INSERT INTO deliveries (id, site_id, lead_id, kind, event_name, event_id, pixel_id, payload,
			state, next_at, deadline_at, created_at, updated_at, destination)
			VALUES ('dl_old', 'dent', 'ld_1', 'lead', 'Lead', 'browser-1', '1', '{}', 'sent', 1, 2, 1, 1, 'meta')`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		if d, err := db.DeliveryByID(ctx, "dl_old"); err != nil || d.State != model.DeliverySent {
			t.Fatalf("the row from before: %+v %v", d, err)
		}
		for _, c := range []struct {
			d    *model.Delivery
			want bool
		}{{row("dl_meta", model.DestinationMeta), false}, {row("dl_tt", "tiktok"), true}, {row("dl_tt2", "tiktok"), false}} {
			got, err := db.DeliveryInsertAll(ctx, []*model.Delivery{c.d})
			if err != nil || got[0] != c.want {
				t.Errorf("%s: inserted %v %v, want %v", c.d.ID, got, err, c.want)
			}
		}
	})
}
