package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

func trackerSite(t *testing.T, db *store.DB, id model.SiteID) {
	t.Helper()
	testkit.AddSite(t, db, &model.Site{ID: id, Name: string(id)}, time.Now())
}

func TestVisitorAndVisits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		trackerSite(t, db, "dent")
		trackerSite(t, db, "other")
		t0 := time.UnixMilli(1796205600123).UTC()
		yes := true
		v := &model.Visitor{ID: "v_1", SiteID: "dent", FBC: "fb.1.1796205600123.AAA", FBCAt: t0, FBP: "fb.1.1796205600123.42",
			FirstSeen: t0, LastSeen: t0, LastIP: "2001:db8::1", LastUserAgent: "UA", Consent: &yes}
		if err := db.VisitorUpsert(ctx, v); err != nil {
			t.Fatal(err)
		}
		// A later sighting changes everything but the first one.
		later := *v
		later.FirstSeen, later.LastSeen, later.LastIP, later.FBC, later.FBCAt = t0.Add(time.Hour), t0.Add(time.Hour), "198.51.100.1",
			"fb.1.1796209200123.BBB", t0.Add(time.Hour)
		if err := db.VisitorUpsert(ctx, &later); err != nil {
			t.Fatal(err)
		}
		got, err := db.VisitorByID(ctx, "dent", "v_1")
		if err != nil {
			t.Fatal(err)
		}
		if !got.FirstSeen.Equal(t0) || !got.LastSeen.Equal(t0.Add(time.Hour)) || got.LastIP != "198.51.100.1" ||
			got.FBC != later.FBC || !got.FBCAt.Equal(later.FBCAt) || got.Consent == nil || !*got.Consent {
			t.Errorf("visitor: %+v", got)
		}
		if err := db.VisitorSetConsent(ctx, "dent", "v_1", false, t0.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.VisitorByID(ctx, "dent", "v_1"); got.Consent == nil || *got.Consent {
			t.Errorf("consent withdrawn: %+v", got.Consent)
		}
		if _, err := db.VisitorByID(ctx, "other", "v_1"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("visitor of another site: %v", err)
		}

		visit := &model.Visit{SiteID: "dent", VisitorID: "v_1",
			ClickIDs: model.ClickIDs{FBClid: "AAA", GBraid: "G"}, UTM: model.UTM{Source: "fb", Content: "c"},
			At: t0, EventID: "ev-1"}
		if err := db.VisitInsert(ctx, visit); err != nil {
			t.Fatal(err)
		}
		dup := *visit
		if err := db.VisitInsert(ctx, &dup); !errors.Is(err, model.ErrConflict) {
			t.Errorf("a second visit with the same PageView event_id: %v", err)
		}
		// On PostgreSQL another node may forget the visitor between a
		// collect's look-up and its insert, and the foreign key refuses
		// the orphan. SQLite's one writer runs the look-up and the insert
		// in one transaction that nothing interleaves with, and its
		// visits carry no foreign key (migration 0200): one B-tree less
		// per collect.
		if db.Dialect() == store.Postgres {
			orphan := *visit
			orphan.EventID, orphan.VisitorID = "ev-3", "v_nobody"
			if err := db.VisitInsert(ctx, &orphan); err == nil {
				t.Errorf("a visit of an unknown visitor was stored")
			}
		}
		byEvent, err := db.VisitByEventID(ctx, "dent", "ev-1")
		if err != nil || *byEvent != *visit {
			t.Errorf("visit by event: %+v %v", byEvent, err)
		}
		if _, err := db.VisitByEventID(ctx, "other", "ev-1"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("visit of another site: %v", err)
		}
		list, err := db.VisitsByVisitor(ctx, "dent", "v_1")
		if err != nil || len(list) != 1 {
			t.Errorf("visits: %v %v", list, err)
		}
		if _, err := db.VisitPageView(ctx, "dent", "ev-1"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("PageView never queued: %v", err)
		}
	})
}

// A used nonce is refused, and the transaction goes on (PostgreSQL aborts a
// transaction on a failed INSERT; the store must not cause one).
func TestFormTokenUse(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		trackerSite(t, db, "dent")
		now := time.Now()
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.FormTokenUse(ctx, "dent", "nonce-1", "ld_1", now); err != nil {
				return err
			}
			if err := tx.FormTokenUse(ctx, "dent", "nonce-1", "ld_2", now); !errors.Is(err, model.ErrConflict) {
				t.Errorf("replayed nonce: %v", err)
			}
			if err := tx.FormTokenUse(ctx, "other", "nonce-1", "ld_3", now); err != nil {
				t.Errorf("the same nonce on another site: %v", err)
			}
			_, err := tx.SiteByID(ctx, "dent")
			return err
		})
		if err != nil {
			t.Fatalf("transaction after a replay: %v", err)
		}
	})
}

func TestServerKey(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		first, err := db.ServerKey(ctx, "k", "aaa", time.Now())
		if err != nil || first != "aaa" {
			t.Fatalf("first: %q %v", first, err)
		}
		second, err := db.ServerKey(ctx, "k", "bbb", time.Now())
		if err != nil || second != "aaa" {
			t.Errorf("second node got %q %v, want the first key", second, err)
		}
	})
}
