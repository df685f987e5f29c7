package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// checkUnavailable fails unless an answer is the 503 a client should retry:
// Retry-After and a JSON error that says what is wrong.
func checkUnavailable(t *testing.T, what string, code int, hdr map[string][]string, body string) {
	t.Helper()
	var e struct{ Error string }
	json.Unmarshal([]byte(body), &e)
	if code != 503 || len(hdr["Retry-After"]) == 0 || !strings.Contains(e.Error, "unavailable") {
		t.Errorf("%s while storage is down: %d %v %s", what, code, hdr, body)
	}
}

// TestStorageTroubleAndRecovery: while the database cannot take writes
// (SQLite: another connection holds the write lock past the busy timeout;
// PostgreSQL: the server goes away, open connections break and new ones
// are refused), a lead (JSON and form) and a visit are answered 503 with
// Retry-After and a clear JSON error, and nothing of them is kept. When the
// trouble ends the same lead, posted again as a page or server retries it,
// is accepted without a restart and stored once.
func TestStorageTroubleAndRecovery(t *testing.T) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			db, down, up := storetest.Troubled(t, d)
			e := newEnvOn(t, db)
			ok := `{"site":"dent","event_id":"before-1","email":"ayse@example.com","phone":"0532 412 87 19"}`
			if code, _, resp := e.do("POST", "/v1/leads", "application/json", ok, fromSite); code != 202 {
				t.Fatalf("before: %d %s", code, resp)
			}
			down()
			lead := `{"site":"dent","event_id":"during-1","email":"mehmet@example.com","phone":"0533 218 44 90"}`
			code, hdr, resp := e.do("POST", "/v1/leads", "application/json", lead, fromSite)
			checkUnavailable(t, "JSON lead", code, hdr, resp)
			code, hdr, resp = e.do("POST", "/v1/leads", "application/x-www-form-urlencoded",
				"site=dent&event_id=during-form&email=zeynep%40example.com", fromSite)
			checkUnavailable(t, "form lead", code, hdr, resp)
			code, hdr, resp = e.do("POST", "/v1/collect?site=dent", "text/plain",
				`{"url":"https://www.istanbuldis.example/?fbclid=IwAR1","consent":true}`, fromSite)
			checkUnavailable(t, "visit", code, hdr, resp)

			up()
			// The first requests after a PostgreSQL restart may meet a pooled
			// connection the restart broke: they too must be a 503, never a
			// 500 or a lead lost, and the pool heals by itself.
			deadline := time.Now().Add(30 * time.Second)
			for {
				code, hdr, resp := e.do("POST", "/v1/leads", "application/json", lead, fromSite)
				if code == 202 {
					break
				}
				checkUnavailable(t, "lead retried after the trouble", code, hdr, resp)
				if t.Failed() || time.Now().After(deadline) {
					t.Fatalf("no recovery: %d %s", code, resp)
				}
				time.Sleep(20 * time.Millisecond)
			}
			for i := range 5 {
				body := fmt.Sprintf(`{"site":"dent","event_id":"after-%d","email":"hasta%d@example.com"}`, i, i)
				if code, _, resp := e.do("POST", "/v1/leads", "application/json", body, fromSite); code != 202 {
					t.Errorf("after recovery: %d %s", code, resp)
				}
			}
			ctx := context.Background()
			if l, err := db.LeadByEventID(ctx, "dent", "during-1"); err != nil || l.Email != "mehmet@example.com" {
				t.Errorf("the retried lead: %v %v", l, err)
			}
			if _, err := db.LeadByEventID(ctx, "dent", "during-form"); !errors.Is(err, model.ErrNotFound) {
				t.Errorf("a lead answered 503 was kept: %v", err)
			}
			if n := e.count(); n != 7 {
				t.Errorf("%d leads stored, want 7 (1 before, the retried one, 5 after)", n)
			}
		})
	}
}

// TestStorageFull: when the disk fills (here SQLite's page cap, which fails
// writes with SQLITE_FULL as a full disk does), intake answers 503 with
// Retry-After instead of accepting what it cannot keep; every lead
// accepted before is intact; once space is freed the refused lead is
// accepted on its retry, without a restart.
func TestStorageFull(t *testing.T) {
	db := storetest.SQLite(t)
	e := newEnvOn(t, db)
	ctx := context.Background()
	msg := strings.Repeat("Implant tedavisi için randevu almak istiyorum. ", 150)
	var accepted []string
	refused := ""
	for i := 0; i < 500 && refused == ""; i++ {
		if i == 5 {
			// The disk fills: no room beyond the file's current size.
			if err := db.LimitPages(ctx, 1); err != nil {
				t.Fatal(err)
			}
		}
		id := fmt.Sprintf("full-%d", i)
		body := fmt.Sprintf(`{"site":"dent","event_id":%q,"email":"hasta%d@example.com","message":%q}`, id, i, msg)
		code, hdr, resp := e.do("POST", "/v1/leads", "application/json", body, fromSite)
		switch code {
		case 202:
			accepted = append(accepted, id)
		default:
			checkUnavailable(t, "lead on a full disk", code, hdr, resp)
			refused = body
		}
	}
	if refused == "" || len(accepted) < 5 {
		t.Fatalf("the disk never filled, or filled too soon (%d accepted)", len(accepted))
	}
	for _, id := range accepted {
		if _, err := db.LeadByEventID(ctx, "dent", id); err != nil {
			t.Errorf("lead %s accepted before the disk filled: %v", id, err)
		}
	}
	if n := e.count(); n != len(accepted) {
		t.Errorf("%d leads stored, %d accepted", n, len(accepted))
	}
	if err := db.LimitPages(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if code, _, resp := e.do("POST", "/v1/leads", "application/json", refused, fromSite); code != 202 {
		t.Fatalf("after space was freed: %d %s", code, resp)
	}
	if n := e.count(); n != len(accepted)+1 {
		t.Errorf("%d leads stored after the retry, want %d", n, len(accepted)+1)
	}
}
