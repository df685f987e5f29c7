package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/secret"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

const clearToken = "EAAG-clear-meta-token-0123456789"

// TestAccessTokenEncrypted: the database never holds the clear token, and
// everything the store returns carries it in clear.
func TestAccessTokenEncrypted(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now()
		s := &model.Site{ID: "dent", Name: "Dent", APIKeyHash: model.HashAPIKey("k"), AccessToken: clearToken}
		if err := db.SiteUpsert(ctx, s, now); err != nil {
			t.Fatal(err)
		}
		raw, err := db.TestQueryString(ctx, `SELECT access_token FROM sites WHERE id = 'dent'`)
		if err != nil || !strings.HasPrefix(raw, secret.Prefix) || strings.Contains(raw, clearToken) {
			t.Fatalf("stored %q %v", raw, err)
		}
		dump, _ := db.TestQueryString(ctx, `SELECT name || settings || access_token FROM sites`)
		if strings.Contains(dump, clearToken) {
			t.Fatalf("the clear token is in the sites row")
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
			if got, err := get(); err != nil || got.AccessToken != clearToken {
				t.Errorf("%s: %+v %v", name, got, err)
			}
		}
		// The same token again keeps a pause (the sealed text is equal); a
		// new token lifts it.
		db.SitePause(ctx, "dent", "token expired", now)
		db.SiteUpsert(ctx, s, now)
		if got, _ := db.SiteByID(ctx, "dent"); got.PausedReason == "" {
			t.Errorf("the same token lifted the pause")
		}
		s.AccessToken = clearToken + "-new"
		db.SiteUpsert(ctx, s, now)
		if got, _ := db.SiteByID(ctx, "dent"); got.PausedReason != "" || got.AccessToken != clearToken+"-new" {
			t.Errorf("a new token: %+v", got)
		}
		// A sealed value copied to another site's row does not open there.
		testkit.AddSite(t, db, &model.Site{ID: "other", Name: "O"}, now)
		db.TestExec(ctx, `UPDATE sites SET access_token = (SELECT access_token FROM sites WHERE id = 'dent') WHERE id = 'other'`)
		if _, err := db.SiteByID(ctx, "other"); err == nil {
			t.Errorf("a token moved to another site opened")
		}
	})
}

// TestSealTokensOnStart: tokens stored in clear by an older version are
// encrypted once; a second run changes nothing; a wrong key is refused.
func TestSealTokensOnStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	db := storetest.Open(t, dsn)
	now := time.Now()
	for _, id := range []string{"a", "b", "c"} {
		testkit.AddSite(t, db, &model.Site{ID: model.SiteID(id), Name: id}, now)
	}
	// As an older version left them: clear tokens (c has none), a paused b.
	db.TestExec(ctx, `UPDATE sites SET access_token = ? WHERE id = 'a'`, clearToken+"-a")
	db.TestExec(ctx, `UPDATE sites SET access_token = ? WHERE id = 'b'`, clearToken+"-b")
	db.TestExec(ctx, `INSERT INTO destination_pauses (site_id, destination, reason, paused_at) VALUES ('b', 'meta', 'expired', 1)`)
	n, err := db.SiteSealTokens(ctx)
	if err != nil || n != 2 {
		t.Fatalf("sealed %d %v", n, err)
	}
	for _, id := range []string{"a", "b"} {
		raw, _ := db.TestQueryString(ctx, `SELECT access_token FROM sites WHERE id = ?`, id)
		if !secret.IsSealed(raw) || strings.Contains(raw, clearToken) {
			t.Errorf("site %s stored %q", id, raw)
		}
		if s, err := db.SiteByID(ctx, model.SiteID(id)); err != nil || s.AccessToken != clearToken+"-"+id {
			t.Errorf("site %s: %+v %v", id, s, err)
		}
	}
	if s, _ := db.SiteByID(ctx, "b"); s.PausedReason != "expired" {
		t.Errorf("sealing lifted a pause")
	}
	if n, err := db.SiteSealTokens(ctx); err != nil || n != 0 {
		t.Errorf("second run sealed %d %v", n, err)
	}
	db.Close()

	other, _ := secret.NewBox("another-secret-key-0123456789abcdef")
	db2, err := store.Open(ctx, dsn, store.Options{Secrets: other})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if _, err := db2.SiteSealTokens(ctx); err == nil || !strings.Contains(err.Error(), "[a b]") {
		t.Errorf("a wrong key was accepted: %v", err)
	}
	none, _ := store.Open(ctx, dsn, store.Options{})
	defer none.Close()
	if err := none.SiteUpsert(ctx, &model.Site{ID: "d", Name: "d", AccessToken: "x"}, now); err == nil ||
		!strings.Contains(err.Error(), "secret_key") {
		t.Errorf("a token was stored without a key: %v", err)
	}
}
