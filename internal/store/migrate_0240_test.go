package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// Migration 0240 counts the stages already stored, on each engine, as
// LeadStageInsert counts them from then on: by the stage's day, values in
// hundredths rounded half up (0.125 is 13, though PostgreSQL's cast rounds
// half to even), one counter per stage and currency, none for a stage
// without a value or currency, none of another site's.
func TestMigration0240CountsStages(t *testing.T) {
	eachBelow(t, 240, func(t *testing.T, ctx context.Context, db *store.DB) {
		day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
		ms := func(h int) int64 { return day.Add(time.Duration(h) * time.Hour).UnixMilli() }
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO sites (id, name, settings, created_at, updated_at) VALUES ('dent', 'Dent', '{}', 0, 0), ('hair', 'Hair', '{}', 0, 0)`, nil},
			{`INSERT INTO leads (id, site_id, event_id, submitted_at, received_at, verdict) VALUES
				('l1', 'dent', 'e1', ?, ?, 'clean'), ('l2', 'dent', 'e2', ?, ?, 'clean'), ('l3', 'hair', 'e3', ?, ?, 'clean')`,
				[]any{ms(1), ms(1), ms(2), ms(2), ms(3), ms(3)}},
			{`INSERT INTO lead_stages (lead_id, stage, at, event_name, event_id, value, currency, created_at) VALUES
				('l1', 'won', ?, 'Purchase', 's1', 6000, 'EUR', 0),
				('l1', 'meeting', ?, 'Schedule', 's2', NULL, '', 0),
				('l2', 'won', ?, 'Purchase', 's3', 0.125, 'EUR', 0),
				('l2', 'qualified', ?, 'QualifiedLead', 's4', 19.995, 'TRY', 0),
				('l3', 'won', ?, 'Purchase', 's5', 50, 'EUR', 0)`,
				[]any{ms(5), ms(4), ms(30), ms(6), ms(7)}},
		} {
			if err := db.TestExec(ctx, q.sql, q.args...); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Migrate(ctx, time.Now); err != nil {
			t.Fatal(err)
		}
		cs, err := db.Counters(ctx, "dent", model.Day(day)-1, model.Day(day)+2)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range cs {
			if c.Name == model.CounterStages || c.Name == model.CounterStageCents {
				got = append(got, fmt.Sprintf("%d %s %s %d", c.Day-model.Day(day), c.Name, c.Dim, c.N))
			}
		}
		// 19.995 is 1999.5 hundredths in floating point: the engines
		// and model.Cents agree on 2000.
		want := fmt.Sprintf("[0 stage_cents qualified TRY %d 0 stage_cents won EUR 600000 0 stages meeting 1 0 stages qualified 1 0 stages won 1 "+
			"1 stage_cents won EUR 13 1 stages won 1]", model.Cents(19.995))
		if fmt.Sprint(got) != want {
			t.Errorf("counters after migration 0240:\n%v\nwant\n%s", got, want)
		}
	})
}
