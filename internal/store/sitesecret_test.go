package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/secret"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

const (
	clearTikTok  = "tt-clear-access-token-0123456789"
	clearRefresh = "1//clear-google-refresh-token"
)

// TestSiteSecretsSealed: a site's platform secrets are never in the
// database in clear; every way of reading a site gives them back in clear;
// a sealed value copied to another name or site does not open.
func TestSiteSecretsSealed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now()
		s := &model.Site{ID: "dent", Name: "Dent", APIKeyHash: model.HashAPIKey("k"),
			Secrets: map[string]string{"tiktok.access_token": clearTikTok, "google.refresh_token": clearRefresh}}
		if err := db.SiteUpsert(ctx, s, now); err != nil {
			t.Fatal(err)
		}
		rows, err := db.TestQueryAll(ctx, `SELECT site_id || ' ' || name || ' ' || sealed FROM site_secrets ORDER BY name`)
		if err != nil || len(rows) != 2 {
			t.Fatalf("stored %q %v", rows, err)
		}
		for _, r := range rows {
			f := strings.Fields(r)
			if len(f) != 3 || !strings.HasPrefix(f[2], secret.Prefix) || strings.Contains(r, clearTikTok) || strings.Contains(r, clearRefresh) {
				t.Errorf("stored row %q", r)
			}
		}
		for name, get := range map[string]func() (*model.Site, error){
			"by id":  func() (*model.Site, error) { return db.SiteByID(ctx, "dent") },
			"by key": func() (*model.Site, error) { return db.SiteByAPIKeyHash(ctx, model.HashAPIKey("k")) },
			"list": func() (*model.Site, error) {
				l, err := db.SiteList(ctx)
				if err != nil {
					return nil, err
				}
				return l[0], nil
			},
		} {
			got, err := get()
			if err != nil || len(got.Secrets) != 2 || got.Secrets["tiktok.access_token"] != clearTikTok ||
				got.Secrets["google.refresh_token"] != clearRefresh {
				t.Errorf("%s: %+v %v", name, got, err)
			}
		}
		// Bound to its name: moved to another name, it does not open.
		db.TestExec(ctx, `UPDATE site_secrets SET sealed = (SELECT sealed FROM site_secrets WHERE name = 'tiktok.access_token')
			WHERE name = 'google.refresh_token'`)
		if _, err := db.SiteByID(ctx, "dent"); err == nil {
			t.Errorf("a secret moved to another name opened")
		}
		// And to its site.
		testkit.AddSite(t, db, &model.Site{ID: "other", Name: "O"}, now)
		db.TestExec(ctx, `INSERT INTO site_secrets (site_id, name, sealed, updated_at)
			SELECT 'other', name, sealed, updated_at FROM site_secrets WHERE site_id = 'dent' AND name = 'tiktok.access_token'`)
		if _, err := db.SiteByID(ctx, "other"); err == nil {
			t.Errorf("a secret moved to another site opened")
		}
	})
}

// TestSiteSecretsEdit: an edit without a secret keeps it, "" clears it,
// the site's settings documents round-trip, and the secrets go with their
// site.
func TestSiteSecretsEdit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now()
		doc := json.RawMessage(`{"pixel_code":"C123","stages":{"won":"CompletePayment"}}`)
		s := &model.Site{ID: "dent", Name: "Dent", Settings: model.SiteSettings{Platforms: map[string]json.RawMessage{"tiktok": doc}},
			Secrets: map[string]string{"tiktok.access_token": clearTikTok, "google.refresh_token": clearRefresh}}
		if err := db.SiteUpsert(ctx, s, now); err != nil {
			t.Fatal(err)
		}
		got, err := db.SiteByID(ctx, "dent")
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]any
		if err := json.Unmarshal(got.Settings.Platforms["tiktok"], &back); err != nil || back["pixel_code"] != "C123" {
			t.Errorf("settings document: %s %v", got.Settings.Platforms["tiktok"], err)
		}
		// Saved again without secrets (a form that does not touch them).
		got.Secrets = nil
		got.Name = "Dent 2"
		if err := db.SiteUpsert(ctx, got, now); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.SiteByID(ctx, "dent"); len(got.Secrets) != 2 || got.Name != "Dent 2" {
			t.Errorf("an edit without secrets: %v", got.Secrets)
		}
		// One cleared, one replaced, one added.
		got.Secrets = map[string]string{"tiktok.access_token": "", "google.refresh_token": "1//new", "google.client_id": "cid"}
		if err := db.SiteUpsert(ctx, got, now); err != nil {
			t.Fatal(err)
		}
		got, _ = db.SiteByID(ctx, "dent")
		if len(got.Secrets) != 2 || got.Secrets["google.refresh_token"] != "1//new" || got.Secrets["google.client_id"] != "cid" {
			t.Errorf("after the edit: %v", got.Secrets)
		}
		// Erased with the site.
		if err := db.TestExec(ctx, `DELETE FROM sites WHERE id = 'dent'`); err != nil {
			t.Fatal(err)
		}
		if n, err := db.TestQueryString(ctx, `SELECT COUNT(*) FROM site_secrets`); err != nil || n != "0" {
			t.Errorf("%s secrets left after the site went (%v)", n, err)
		}
	})
}

// TestPlatformPauseLiftedOnChange: a platform's pause is lifted, and its
// parked rows go again, when its settings document or one of its secrets
// changes; a save that changes neither (or another platform's) keeps it.
func TestPlatformPauseLiftedOnChange(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		s := &model.Site{ID: "dent", Name: "Dent",
			Settings: model.SiteSettings{Platforms: map[string]json.RawMessage{"tiktok": json.RawMessage(`{"pixel_code":"C1"}`)}},
			Secrets:  map[string]string{"tiktok.access_token": clearTikTok}}
		if err := db.SiteUpsert(ctx, s, now); err != nil {
			t.Fatal(err)
		}
		d := &model.Delivery{ID: "t1", SiteID: "dent", Destination: "tiktok", Kind: model.KindLead, EventName: "SubmitForm",
			EventID: "t1", Payload: []byte(`{}`), State: model.DeliveryPaused, NextAt: now, DeadlineAt: now.Add(48 * time.Hour),
			CreatedAt: now, UpdatedAt: now}
		if _, err := db.DeliveryInsert(ctx, d); err != nil {
			t.Fatal(err)
		}
		share := model.Share{Site: "dent", Destination: "tiktok"}
		paused := func() bool {
			t.Helper()
			reason, err := db.DestinationPauseReason(ctx, share)
			if err != nil {
				t.Fatal(err)
			}
			return reason != ""
		}
		for _, tc := range []struct {
			name   string
			edit   func(s *model.Site)
			lifted bool
		}{
			{"nothing changed", func(s *model.Site) {}, false},
			{"the same secret again", func(s *model.Site) { s.Secrets = map[string]string{"tiktok.access_token": clearTikTok} }, false},
			{"the same settings, spaced otherwise", func(s *model.Site) {
				s.Settings.Platforms["tiktok"] = json.RawMessage(`{ "pixel_code": "C1" }`)
			}, false},
			{"another platform's secret", func(s *model.Site) { s.Secrets = map[string]string{"google.refresh_token": "1//r"} }, false},
			{"a new secret", func(s *model.Site) { s.Secrets = map[string]string{"tiktok.access_token": clearTikTok + "-new"} }, true},
			{"a cleared secret", func(s *model.Site) { s.Secrets = map[string]string{"tiktok.access_token": ""} }, true},
			{"new settings", func(s *model.Site) { s.Settings.Platforms["tiktok"] = json.RawMessage(`{"pixel_code":"C2"}`) }, true},
			{"settings removed", func(s *model.Site) { delete(s.Settings.Platforms, "tiktok") }, true},
		} {
			if err := db.DestinationPauseSet(ctx, share, "TikTok refused the access token", now); err != nil {
				t.Fatal(err)
			}
			cur, err := db.SiteByID(ctx, "dent")
			if err != nil {
				t.Fatal(err)
			}
			cur.Secrets = nil
			if cur.Settings.Platforms == nil {
				cur.Settings.Platforms = map[string]json.RawMessage{}
			}
			tc.edit(cur)
			if err := db.SiteUpsert(ctx, cur, now); err != nil {
				t.Fatal(err)
			}
			if paused() == tc.lifted {
				t.Errorf("%s: lifted %v, want %v", tc.name, !paused(), tc.lifted)
			}
			_, resumed, err := db.DeliverySweep(ctx, now)
			if err != nil {
				t.Fatal(err)
			}
			if (resumed == 1) != tc.lifted {
				t.Errorf("%s: %d parked rows went again", tc.name, resumed)
			}
			if tc.lifted {
				db.TestExec(ctx, `UPDATE delivery_state SET state = 'paused' WHERE id = 't1'`)
			}
		}
	})
}
