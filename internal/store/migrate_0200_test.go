package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// Migration 0200 rebuilds SQLite's visits and visitors tables (WITHOUT
// ROWID, other keys, nullable texts): a database that has them filled
// before keeps every row and column, and works as before afterwards.
func TestMigration0200KeepsVisitsAndVisitors(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "up.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.TestMigrateBelow(ctx, 200); err != nil {
		t.Fatal(err)
	}
	t0 := time.UnixMilli(1763629200000).UTC() // the rows' first time, below
	err = db.InTx(ctx, func(tx *Tx) error {
		for _, q := range []string{
			`INSERT INTO sites (id, name, settings, created_at, updated_at) VALUES ('dent', 'Dent', '{}', 0, 0)`,
			`INSERT INTO visitors (site_id, id, fbc, fbc_at, fbp, first_seen, last_seen, last_ip, last_user_agent, consent)
				VALUES ('dent', 'v_1', 'fb.1.1763629200000.IwAR1', 1763629200000, 'fb.1.1763629200000.42', 1763629200000, 1763632800000, '203.0.113.7', 'UA', 1)`,
			`INSERT INTO visits (id, site_id, visitor_id, page_url, referrer, fbclid, gclid, wbraid, gbraid, ttclid, msclkid,
				utm_source, utm_medium, utm_campaign, utm_term, utm_content, client_ip, user_agent, at, event_id)
				VALUES ('vi_1', 'dent', 'v_1', 'https://d.example/?fbclid=IwAR1', '', 'IwAR1', '', '', '', '', '', 'facebook', 'paid', 'implant', '', '', '203.0.113.7', 'UA', 1763629200000, 'ev-1'),
				('vi_2', 'dent', 'v_1', 'https://d.example/implant', 'https://d.example/', '', 'G1', '', '', '', '', '', '', '', '', '', '203.0.113.7', 'UA', 1763632800000, 'ev-2')`,
		} {
			if _, err := tx.w.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx, time.Now); err != nil {
		t.Fatal(err)
	}
	// Migration 0220 counts the visits already there.
	if cs, err := db.Counters(ctx, "dent", model.Day(t0), model.Day(t0)); err != nil || cs.Sum(model.CounterVisits, "", 0, 1<<40) != 2 {
		t.Errorf("counters after migration 0220: %v %v", cs, err)
	}
	v, err := db.VisitorByID(ctx, "dent", "v_1")
	if err != nil || v.FBC != "fb.1.1763629200000.IwAR1" || v.FBP != "fb.1.1763629200000.42" || v.LastIP != "203.0.113.7" ||
		v.Consent == nil || !*v.Consent || !v.LastSeen.Equal(t0.Add(time.Hour)) {
		t.Fatalf("visitor after the migration: %+v %v", v, err)
	}
	visits, err := db.VisitsByVisitor(ctx, "dent", "v_1")
	if err != nil || len(visits) != 2 {
		t.Fatalf("visits after the migration: %v %v", visits, err)
	}
	if w := visits[0]; w.EventID != "ev-1" || w.FBClid != "IwAR1" || w.Source != "facebook" || w.Campaign != "implant" || !w.At.Equal(t0) {
		t.Errorf("first visit: %+v", w)
	}
	if w := visits[1]; w.EventID != "ev-2" || w.GClid != "G1" || w.FBClid != "" {
		t.Errorf("second visit: %+v", w)
	}
	if w, err := db.VisitByEventID(ctx, "dent", "ev-2"); err != nil || w.GClid != "G1" {
		t.Errorf("visit by event id: %+v %v", w, err)
	}
	dup := *visits[1]
	if err := db.VisitInsert(ctx, &dup); !errors.Is(err, model.ErrConflict) {
		t.Errorf("a second visit with event_id ev-2: %v", err)
	}
	next := model.Visit{SiteID: "dent", VisitorID: "v_1", EventID: "ev-4", At: t0.Add(2 * time.Hour)}
	if err := db.VisitInsert(ctx, &next); err != nil {
		t.Fatal(err)
	}
	if n, err := db.VisitsDeleteBefore(ctx, t0.Add(30*time.Minute)); err != nil || n != 1 {
		t.Errorf("retention after the migration deleted %d visits: %v", n, err)
	}
}
