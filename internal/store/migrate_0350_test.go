package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0350LeanVisitsKeepWhatMatchingNeeds: on a database of the
// shape before migration 0350, with visits of random click ids, UTM tags
// (stored empty or NULL), lead form counts, pages, referrers, IPs and user
// agents, the migration keeps every visit with its visitor, time, event_id,
// click ids, tags and form count, drops the id, page, referrer, IP and user
// agent, and visits are then stored, refused twice, read and deleted as
// before.
func TestMigration0350LeanVisitsKeepWhatMatchingNeeds(t *testing.T) {
	eachBelow(t, 350, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		rng := rand.New(rand.NewPCG(3, 50))
		for i := range 40 {
			if err := db.TestExec(ctx, `INSERT INTO visitors (site_id, id, fbc, fbp, first_seen, last_seen, last_ip, last_user_agent)
				VALUES (?, ?, '', 'fb.1.1.2', ?, ?, '85.1.2.3', 'UA')`, []string{"a", "b"}[i%2], fmt.Sprintf("v_%02d", i),
				now.Add(-30*24*time.Hour).UnixMilli(), now.UnixMilli()); err != nil {
				t.Fatal(err)
			}
		}
		// pick is a click id or tag: mostly nothing, stored as '' or NULL as
		// the versions before 0200 and after it did.
		pick := func(prefix string) any {
			switch rng.IntN(4) {
			case 0:
				return ""
			case 1:
				return prefix + fmt.Sprint(rng.IntN(1000))
			}
			return nil
		}
		str := func(v any) string {
			if s, ok := v.(string); ok {
				return s
			}
			return ""
		}
		want := map[string][]model.Visit{} // by site and visitor
		for i := range 400 {
			vis := fmt.Sprintf("v_%02d", rng.IntN(40))
			site := []string{"a", "b"}[(int(vis[3]-'0'))%2]
			at := now.Add(-time.Duration(rng.Int64N(int64(20 * 24 * time.Hour)))).Truncate(time.Millisecond)
			cols := make([]any, 11)
			for k, p := range []string{"fb", "g", "w", "gb", "tt", "ms", "src", "med", "camp", "term", "cont"} {
				cols[k] = pick(p)
			}
			var forms any
			switch rng.IntN(3) {
			case 1:
				forms = 0
			case 2:
				forms = 2
			}
			ev := fmt.Sprintf("ev-%03d", i)
			args := append([]any{fmt.Sprintf("vi_%03d", i), site, vis, "https://a.example/p?fbclid=x", "https://l.facebook.com/"}, cols...)
			args = append(args, "203.0.113.7", "Mozilla/5.0 (migration test)", at.UnixMilli(), ev, forms)
			if err := db.TestExec(ctx, `INSERT INTO visits (id, site_id, visitor_id, page_url, referrer, fbclid, gclid, wbraid, gbraid,
				ttclid, msclkid, utm_source, utm_medium, utm_campaign, utm_term, utm_content, client_ip, user_agent, at, event_id, lead_forms)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...); err != nil {
				t.Fatal(err)
			}
			v := model.Visit{SiteID: model.SiteID(site), VisitorID: vis, At: at, EventID: ev,
				ClickIDs: model.ClickIDs{FBClid: str(cols[0]), GClid: str(cols[1]), WBraid: str(cols[2]), GBraid: str(cols[3]),
					TTClid: str(cols[4]), MSClkid: str(cols[5])},
				UTM: model.UTM{Source: str(cols[6]), Medium: str(cols[7]), Campaign: str(cols[8]), Term: str(cols[9]), Content: str(cols[10])}}
			if n, ok := forms.(int); ok {
				v.LeadForms = &n
			}
			want[site+" "+vis] = append(want[site+" "+vis], v)
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}

		for key, ws := range want {
			var site, vis string
			fmt.Sscan(key, &site, &vis)
			got, err := db.VisitsByVisitor(ctx, model.SiteID(site), vis)
			if err != nil || len(got) != len(ws) {
				t.Fatalf("%s: %d visits after the migration, want %d: %v", key, len(got), len(ws), err)
			}
			byEvent := map[string]model.Visit{}
			for _, w := range ws {
				byEvent[w.EventID] = w
			}
			for _, g := range got {
				w, ok := byEvent[g.EventID]
				if !ok || !sameVisit(g, &w) {
					t.Errorf("%s: visit %+v after the migration, want %+v", key, g, w)
				}
			}
		}
		for _, col := range []string{"id", "page_url", "referrer", "client_ip", "user_agent"} {
			if err := db.TestExec(ctx, `UPDATE visits SET `+col+` = NULL WHERE 1 = 0`); err == nil {
				t.Errorf("visits still have %s", col)
			}
		}

		// Stored, refused twice, read by event and deleted as before.
		v := &model.Visit{SiteID: "a", VisitorID: "v_00", At: now, EventID: "ev-new", ClickIDs: model.ClickIDs{GClid: "G9"}}
		if err := db.VisitInsert(ctx, v); err != nil {
			t.Fatal(err)
		}
		if err := db.VisitInsert(ctx, v); !errors.Is(err, model.ErrConflict) {
			t.Errorf("the same PageView event_id twice: %v", err)
		}
		if g, err := db.VisitByEventID(ctx, "a", "ev-new"); err != nil || !sameVisit(g, v) {
			t.Errorf("the new visit: %+v %v", g, err)
		}
		n, err := db.VisitsDeleteBefore(ctx, now.Add(-10*24*time.Hour))
		if err != nil || n == 0 {
			t.Errorf("retention after the migration deleted %d visits: %v", n, err)
		}
	})
}

// sameVisit compares two visits field by field (LeadForms by value).
func sameVisit(a, b *model.Visit) bool {
	fa, fb := -1, -1
	if a.LeadForms != nil {
		fa = *a.LeadForms
	}
	if b.LeadForms != nil {
		fb = *b.LeadForms
	}
	return a.SiteID == b.SiteID && a.VisitorID == b.VisitorID && a.At.Equal(b.At) && a.EventID == b.EventID &&
		a.ClickIDs == b.ClickIDs && a.UTM == b.UTM && fa == fb
}
