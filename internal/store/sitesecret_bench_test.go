package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// BenchmarkSiteByID reads a site with three platform secrets, as the site
// cache does on a miss and the API's key look-up on every call: the sites
// row, then its secrets' rows, each opened.
func BenchmarkSiteByID(b *testing.B) {
	db := storetest.SQLite(b)
	ctx := context.Background()
	s := &model.Site{ID: "dent", Name: "Dent", APIKeyHash: model.HashAPIKey("k"), AccessToken: "EAAB-token",
		Secrets: map[string]string{"tiktok.access_token": "tt-0123456789", "google.client_secret": "gs-0123456789",
			"google.refresh_token": "1//0123456789"}}
	if err := db.SiteUpsert(ctx, s, time.Now()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := db.SiteByID(ctx, "dent"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSiteList reads 50 sites of three secrets each: the sites, then
// every secret in one statement.
func BenchmarkSiteList(b *testing.B) {
	db := storetest.SQLite(b)
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for i := range 50 {
			s := &model.Site{ID: model.SiteID(fmt.Sprint("s", i)), Name: "S", AccessToken: "EAAB-token",
				Secrets: map[string]string{"tiktok.access_token": "tt-0123456789", "google.client_secret": "gs-0123456789",
					"google.refresh_token": "1//0123456789"}}
			if err := tx.SiteUpsert(ctx, s, time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if l, err := db.SiteList(ctx); err != nil || len(l) != 50 {
			b.Fatal(len(l), err)
		}
	}
}
