package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMigration0551ContactKeysPartial: on a database of the shape before
// migration 0551, with leads that have both contact keys, a phone only or
// an e-mail only, the contact-key indexes afterwards hold only the leads
// with a key, and every look-up by a key finds the same leads as before.
func TestMigration0551ContactKeysPartial(t *testing.T) {
	eachBelow(t, 551, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Now().UTC().Truncate(time.Millisecond)
		testkit.AddSites(t, db, now, "a")
		for i := range 12 {
			id := model.LeadID(fmt.Sprintf("ld_%03d", i))
			l := testkit.Lead("a", id, now.Add(-time.Duration(i)*time.Hour), func(l *model.Lead) {
				l.Verdict = model.VerdictClean
				if i%3 != 1 {
					l.Email, l.EmailKey = fmt.Sprintf("p%d@example.com", i%4), fmt.Sprintf("p%d@example.com", i%4)
				}
				if i%3 != 2 {
					l.Phone, l.PhoneKey = fmt.Sprintf("0532 000 00 %02d", i%5), fmt.Sprintf("9053200000%02d", i%5)
				}
			})
			if err := db.LeadInsert(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		type answer struct {
			find, prev string
		}
		look := func() map[string]answer {
			t.Helper()
			out := map[string]answer{}
			for i := range 5 {
				for _, k := range []store.LeadLookup{{EmailKey: fmt.Sprintf("p%d@example.com", i)}, {PhoneKey: fmt.Sprintf("9053200000%02d", i)}} {
					var a answer
					if l, err := db.LeadFind(ctx, "a", k); err == nil {
						a.find = string(l.ID)
					}
					if id, _, match, err := db.LeadPrevious(ctx, "a", k.EmailKey, k.PhoneKey, now.Add(-24*time.Hour), "ld_000"); err == nil {
						a.prev = string(id) + " " + match
					}
					out[k.EmailKey+k.PhoneKey] = a
				}
			}
			return out
		}
		before := look()
		found := 0
		for _, a := range before {
			if a.find != "" && a.prev != "" {
				found++
			}
		}
		if found < 8 {
			t.Fatalf("only %d of the look-ups find a lead before the migration: %v", found, before)
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		if after := look(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("look-ups after the migration\n%v\nbefore\n%v", after, before)
		}
		for _, index := range []string{"leads_email_recent", "leads_phone_recent"} {
			q := `SELECT sql FROM sqlite_master WHERE name = ?`
			if db.Dialect() == store.Postgres {
				q = `SELECT indexdef FROM pg_indexes WHERE indexname = ? AND schemaname = current_schema()`
			}
			ddl, err := db.TestQueryString(ctx, q, index)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(ddl, "WHERE") || !strings.Contains(ddl, "<> ''") {
				t.Errorf("%s after the migration: %s; want it partial", index, ddl)
			}
		}
	})
}
