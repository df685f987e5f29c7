package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0600IDsPacked: on a database of the shape before migration
// 0600, with leads whose ids are minted (ld_, UUID event and visitor ids)
// or not (a test's, a client's event id in capitals or of another form),
// their visitors, visits, history, outbox events (live and archived) and
// stages, everything reads the same afterwards: every lead, its history,
// stages and events whole, the look-ups by id, by event id and by the
// person, the inbox's pages by key, the sync API's pages and the search
// (a message that is exactly a UUID included). On SQLite no text in
// canonical form is left in any column but the free text, the ids take 17
// bytes, and an erasure after the migration works as before.
func TestMigration0600IDsPacked(t *testing.T) {
	testIDsPacked(t, 600)
}

// TestMigration0630IDsPacked is the same on a database of the shape before
// 0630, which packs PostgreSQL's ids (SQLite's were since 0600): on
// PostgreSQL the id columns are bytea after it, a minted id takes 17
// bytes, what the migration's SQL stored is what the store binds, and no
// canonical text is left in them.
func TestMigration0630IDsPacked(t *testing.T) {
	testIDsPacked(t, 630)
}

// testIDsPacked fills a database of the shape before migration below,
// reads everything, migrates it to the latest and reads it again.
func testIDsPacked(t *testing.T, below int) {
	eachBelow(t, below, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Now().UTC().Truncate(time.Millisecond)
		testkit.AddSites(t, db, now, "a", "b")
		var g model.IDGen
		var leads []*model.Lead
		var events []string
		for i := range 24 {
			at := now.Add(-time.Duration(24-i) * time.Hour)
			site := model.SiteID("a")
			if i%6 == 5 {
				site = "b"
			}
			id := model.LeadID(g.New("ld_", at))
			event := model.NewUUIDv7(at)
			switch i % 8 {
			case 3:
				id = model.LeadID(fmt.Sprintf("ld_test%d", i)) // a test's id: text
			case 4:
				event = strings.ToUpper(model.NewUUID()) // a client's, in capitals: text
			case 6:
				event = "client-event-" + fmt.Sprint(i)
			}
			vid := model.NewUUIDv7(at)
			if err := db.VisitorUpsert(ctx, &model.Visitor{ID: vid, SiteID: site, FirstSeen: at, LastSeen: at, LastIP: "85.1.2.3"}); err != nil {
				t.Fatal(err)
			}
			forms := 1
			if err := db.VisitInsert(ctx, &model.Visit{SiteID: site, VisitorID: vid, At: at.Add(-time.Minute), EventID: event, LeadForms: &forms}); err != nil {
				t.Fatal(err)
			}
			msg := fmt.Sprintf("a message about implants number %d", i)
			if i == 7 {
				msg = model.NewUUID() // free text that is exactly a UUID
			}
			l := testkit.Lead(site, id, at, func(l *model.Lead) {
				l.EventID, l.VisitorID, l.Message = event, vid, msg
				l.Name = "Ayşe Yılmaz"
				if i == 9 {
					l.Name = string(g.New("ld_", at)) // a name that looks like an id
				}
				l.Email, l.EmailKey = fmt.Sprintf("p%d@example.com", i%5), fmt.Sprintf("p%d@example.com", i%5)
				l.Phone, l.PhoneKey = fmt.Sprintf("0532 000 00 %02d", i%4), fmt.Sprintf("9053200000%02d", i%4)
				l.Decision = model.Decision{Verdict: model.VerdictClean, DecidedBy: "rules", RulesVersion: "t"}
			})
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if err := tx.LeadInsert(ctx, l); err != nil {
					return err
				}
				if err := tx.HistoryIntakeInsert(ctx, &model.HistoryEntry{ID: g.New("h_", at), LeadID: l.ID, At: at, Kind: model.HistoryVerdict,
					Data: map[string]any{"verdict": "clean"}}, l); err != nil {
					return err
				}
				if err := tx.HistoryInsert(ctx, &model.HistoryEntry{ID: g.New("h_", at.Add(time.Minute)), LeadID: l.ID, At: at.Add(time.Minute),
					Kind: model.HistoryEvidence, Data: map[string]any{"evidence": "call", "delivery": "dl_x"}}); err != nil {
					return err
				}
				var rows []*model.Delivery
				for k, kind := range []string{model.KindLead, model.KindQualified} {
					did := g.New("dl_", at)
					ev := event
					if k == 1 {
						ev = model.NewUUIDv7(at)
					}
					sent := at.Add(2 * time.Second)
					rows = append(rows, &model.Delivery{ID: did, SiteID: site, LeadID: l.ID, Kind: kind, Destination: "meta",
						EventName: "Lead", EventID: ev, PixelID: "px1", Payload: json.RawMessage(`{"event_name":"Lead","event_id":"` + ev + `"}`),
						State: model.DeliverySent, Attempts: 1, NextAt: at, DeadlineAt: at.Add(model.MaxEventAge), Mode: "live",
						Response: json.RawMessage(`{"events_received":1}`), CreatedAt: at, UpdatedAt: sent, SentAt: &sent})
					events = append(events, did)
				}
				if _, err := tx.DeliveryInsertAll(ctx, rows); err != nil {
					return err
				}
				if i%3 == 0 {
					v := 1500.0
					if _, err := tx.LeadStageInsert(ctx, &model.LeadStage{LeadID: l.ID, SiteID: site, Stage: "won", At: at.Add(time.Hour),
						EventName: "Purchase", EventID: model.NewUUIDv7(at), Value: &v, Currency: "TRY", ActionSource: "system_generated", CreatedAt: at}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			leads = append(leads, l)
		}
		// Half the events archived (shrunk), as retention leaves them.
		for i, id := range events {
			if i%2 == 0 {
				if ok, err := db.DeliveryShrink(ctx, id, json.RawMessage(`{"event_name":"Lead"}`), now); err != nil || !ok {
					t.Fatalf("shrink %s: %v %v", id, ok, err)
				}
			}
		}
		j := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		read := func() []string {
			t.Helper()
			var out []string
			add := func(what string, v any, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				out = append(out, what+" "+j(v))
			}
			for _, l := range leads {
				got, err := db.LeadByID(ctx, l.ID)
				add("lead", got, err)
				byEvent, err := db.LeadByEventID(ctx, l.SiteID, l.EventID)
				add("by event", byEvent.ID, err)
				h, err := db.HistoryByLead(ctx, l.ID)
				add("history", h, err)
				st, err := db.LeadStagesByLead(ctx, l.ID)
				add("stages", st, err)
				ds, err := db.DeliveriesByLead(ctx, l.ID)
				add("deliveries", ds, err)
				v, err := db.VisitorByID(ctx, l.SiteID, l.VisitorID)
				add("visitor", v, err)
				vs, err := db.VisitsByVisitor(ctx, l.SiteID, l.VisitorID)
				add("visits", vs, err)
				vis, err := db.VisitByEventID(ctx, l.SiteID, l.EventID)
				add("visit by event", vis, err)
			}
			for _, id := range events {
				d, err := db.DeliveryByID(ctx, id)
				add("delivery", d, err)
			}
			for _, site := range []model.SiteID{"a", "b"} {
				// The inbox's pages by key, two leads a page.
				f := store.LeadFilter{Site: site, Limit: 2}
				var seen []model.LeadID
				for range 30 {
					page, err := db.LeadList(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					for _, l := range page {
						seen = append(seen, l.ID)
					}
					if len(page) < 2 {
						break
					}
					f.Before, f.BeforeID = page[len(page)-1].ReceivedAt, page[len(page)-1].ID
				}
				add("pages "+string(site), seen, nil)
				// The sync API's pages.
				p := store.LeadChangesParams{Site: site, Until: now.Add(time.Hour), Limit: 3}
				var synced []model.LeadID
				for range 30 {
					page, err := db.LeadChanges(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					for _, c := range page {
						synced = append(synced, c.Lead.ID)
					}
					if len(page) < 3 {
						break
					}
					p.After, p.AfterID = page[len(page)-1].ChangedAt, page[len(page)-1].Lead.ID
				}
				add("sync "+string(site), synced, nil)
				for _, q := range []string{"implants", "number 7", leads[7].Message, leads[9].Name, "Yılmaz"} {
					found, err := db.LeadList(ctx, store.LeadFilter{Site: site, Search: q, Limit: 50})
					var ids []model.LeadID
					for _, l := range found {
						ids = append(ids, l.ID)
					}
					add("search "+string(site)+" "+q, ids, err)
				}
				matching, err := db.LeadsMatching(ctx, site, store.LeadLookup{EmailKey: "p1@example.com"}, 50)
				add("matching "+string(site), matching, err)
				person, err := db.LeadsByPerson(ctx, store.PersonLookup{Site: site, EmailKey: "p2@example.com", Phone: "0532 000 00 01"})
				var ids []model.LeadID
				for _, l := range person {
					ids = append(ids, l.ID)
				}
				add("person "+string(site), ids, err)
			}
			return out
		}
		before := read()
		for _, line := range before {
			if strings.HasPrefix(line, "search a "+leads[7].Message) && !strings.Contains(line, string(leads[7].ID)) {
				t.Fatalf("the message that is a UUID is not found before the migration: %s", line)
			}
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		after := read()
		for i := range max(len(before), len(after)) {
			if i >= len(before) || i >= len(after) || before[i] != after[i] {
				t.Errorf("after the migration, line %d:\n%v\nbefore:\n%v", i, at(after, i), at(before, i))
			}
		}
		if db.Dialect() == store.Postgres {
			pgIDsPacked(t, ctx, db, leads[7])
		} else {
			sqliteIDsPacked(t, ctx, db, leads[7])
		}
		// An erasure after: the person's leads emptied, their events
		// redacted, and a lead with a minted id found by its event id.
		l := leads[1]
		if ok, err := db.LeadRedact(ctx, l.ID, nil, nil, now); err != nil || !ok {
			t.Fatalf("redact %s: %v %v", l.ID, ok, err)
		}
		got, err := db.LeadByID(ctx, l.ID)
		if err != nil || got.Email != "" || got.Message != "" || got.EventID != l.EventID {
			t.Errorf("an erased lead: %+v (%v)", got, err)
		}
		fresh := testkit.Lead("a", model.LeadID(g.New("ld_", now)), now, func(x *model.Lead) { x.EventID = model.NewUUIDv7(now); x.Message = model.NewUUID() })
		if err := db.LeadInsert(ctx, fresh); err != nil {
			t.Fatal(err)
		}
		if err := db.LeadInsert(ctx, fresh); !errors.Is(err, model.ErrConflict) {
			t.Errorf("the same event id again: %v, want a conflict", err)
		}
		found, err := db.LeadList(ctx, store.LeadFilter{Site: "a", Search: fresh.Message, Limit: 5})
		if err != nil || len(found) != 1 || found[0].ID != fresh.ID {
			t.Errorf("search for a new lead's message that is a UUID: %d leads (%v)", len(found), err)
		}
	})
}

// checkLeadQueries runs each query, its placeholder l's id (or its
// event_id, where the query compares event_id), and wants its one value.
func checkLeadQueries(t *testing.T, ctx context.Context, db *store.DB, l *model.Lead, checks []struct{ query, want string }) {
	t.Helper()
	for _, c := range checks {
		var args []any
		if strings.Contains(c.query, "?") {
			args = []any{string(l.ID)}
			if strings.Contains(c.query, "event_id = ?") {
				args = []any{l.EventID}
			}
		}
		if got, err := db.TestQueryString(ctx, c.query, args...); err != nil || got != c.want {
			t.Errorf("%s: %q (%v), want %q", c.query, got, err, c.want)
		}
	}
}

// pgIDsPacked checks PostgreSQL's stored ids after 0630: the id columns
// are bytea, a minted id takes 17 bytes and a UUID too, free text stays
// text, and no column holds an id's text where the store binds it packed.
func pgIDsPacked(t *testing.T, ctx context.Context, db *store.DB, l *model.Lead) {
	t.Helper()
	checkLeadQueries(t, ctx, db, l, []struct{ query, want string }{
		{`SELECT CAST(pg_typeof(id) AS TEXT) || length(id) || CAST(pg_typeof(event_id) AS TEXT) || length(event_id) || CAST(pg_typeof(visitor_id) AS TEXT) FROM leads WHERE id = ?`, "bytea17bytea17bytea"},
		{`SELECT CAST(pg_typeof(message) AS TEXT) || ' ' || CAST(pg_typeof(name) AS TEXT) FROM leads WHERE event_id = ?`, "text text"},
		{`SELECT CAST(COUNT(*) AS TEXT) FROM delivery_events WHERE length(id) = 17 AND length(lead_id) = 17 AND length(event_id) = 17`, "36"},
		{`SELECT CAST(COUNT(*) AS TEXT) FROM lead_history WHERE length(id) = 17 AND length(lead_id) = 17`, "42"},
	})
	cols, err := db.TestQueryAll(ctx, `SELECT table_name || '.' || column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND data_type = 'bytea' AND table_name NOT IN ('cert_items', 'deliveries') ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 20 {
		t.Errorf("%d bytea columns, want 20: %v", len(cols), cols)
	}
	for _, tc := range cols {
		table, col, _ := strings.Cut(tc, ".")
		// A value whose bytes are an id's text (valid UTF-8 that packs):
		// the store would bind that id packed and miss it.
		n, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM "`+table+`" WHERE "`+col+`" <> ''::bytea
			AND get_byte("`+col+`", 0) >= 32 AND cleanads_idpack(convert_from("`+col+`", 'UTF8')) <> "`+col+`"`)
		if err != nil || n != "0" {
			t.Errorf("%s: %s ids left as text (%v)", tc, n, err)
		}
	}
}

// sqliteIDsPacked checks SQLite's stored ids after 0600.
func sqliteIDsPacked(t *testing.T, ctx context.Context, db *store.DB, l *model.Lead) {
	t.Helper()
	// Every id stored packed, free text left as it was.
	checkLeadQueries(t, ctx, db, l, []struct{ query, want string }{
		{`SELECT typeof(id) || length(id) || typeof(event_id) || length(event_id) || typeof(visitor_id) FROM leads WHERE id = ?`, "blob17blob17blob"},
		{`SELECT typeof(message) || typeof(name) FROM leads WHERE event_id = ?`, "texttext"},
		{`SELECT CAST(COUNT(*) AS TEXT) FROM delivery_events WHERE typeof(id) = 'blob' AND typeof(lead_id) = 'blob' AND typeof(event_id) = 'blob'`, "36"},
		{`SELECT CAST(COUNT(*) AS TEXT) FROM lead_history WHERE typeof(id) = 'blob' AND typeof(lead_id) = 'blob'`, "42"},
	})
	left, err := db.TestQueryAll(ctx, `SELECT m.name || '.' || p.name FROM sqlite_schema m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.sql NOT LIKE 'CREATE VIRTUAL%' AND m.name NOT LIKE 'lead_search_%' AND upper(p.type) LIKE '%TEXT%'`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range left {
		table, col, _ := strings.Cut(tc, ".")
		if table == "schema_migrations" || (table == "leads" && slices.Contains([]string{"name", "first_name", "last_name", "email", "phone", "phone_key", "message"}, col)) {
			continue
		}
		n, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM "`+table+`" WHERE typeof("`+col+`") = 'text' AND typeof(cleanads_idpack("`+col+`")) = 'blob'`)
		if err != nil || n != "0" {
			t.Errorf("%s: %s ids left as text (%v)", tc, n, err)
		}
	}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
}
