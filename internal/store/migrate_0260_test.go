package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// Migrations 0260 and 0261 on a database filled by an older binary: every
// lead already there is found by the search (name, e-mail, phone digits,
// message), and the verdict counters equal a count of the leads by site,
// day and verdict.
func TestMigration0260SearchAndVerdictsOfLeadsThere(t *testing.T) {
	eachBelow(t, 260, func(t *testing.T, ctx context.Context, db *store.DB) {
		now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
		testkit.AddSites(t, db, now, "a", "b")
		rng := rand.New(rand.NewPCG(1, 2))
		want := map[counterKey]int64{}
		const n = 400
		for i := range n {
			site := []string{"a", "b"}[rng.IntN(2)]
			at := now.Add(-time.Duration(rng.Int64N(int64(10 * 24 * time.Hour))))
			v := randomVerdict(rng)
			if err := db.TestExec(ctx, `INSERT INTO leads (id, site_id, event_id, name, email, phone, phone_key, message,
				submitted_at, received_at, verdict) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				fmt.Sprintf("ld_%03d", i), site, fmt.Sprintf("ev%d", i), fmt.Sprintf("Name%03dx Surname", i),
				fmt.Sprintf("mail%03dx@old.example", i), fmt.Sprintf("0532 111 %04d", i), fmt.Sprintf("90532111%04d", i),
				fmt.Sprintf("word%03dx in a message", i), at.UnixMilli(), at.UnixMilli(), string(v)); err != nil {
				t.Fatal(err)
			}
			want[counterKey{model.SiteID(site), model.Day(at), model.CounterVerdicts, string(v)}]++
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			id := fmt.Sprintf("ld_%03d", i)
			for _, q := range []string{fmt.Sprintf("name%03dx", i), fmt.Sprintf("mail%03dx@", i), fmt.Sprintf("532111%04d", i),
				fmt.Sprintf("word%03dx", i)} {
				list, err := db.LeadList(ctx, store.LeadFilter{Search: q})
				if err != nil {
					t.Fatal(err)
				}
				if len(list) != 1 || string(list[0].ID) != id {
					t.Errorf("search %q after the migration: %d leads, want %s", q, len(list), id)
				}
			}
		}
		got := map[counterKey]int64{}
		for _, site := range []model.SiteID{"a", "b"} {
			cs, err := db.Counters(ctx, site, model.Day(now)-11, model.Day(now))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				if c.Name == model.CounterVerdicts {
					got[counterKey{site, c.Day, c.Name, c.Dim}] += c.N
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("verdict counters after the migration:\n%v\nwant\n%v", got, want)
		}
	})
}
