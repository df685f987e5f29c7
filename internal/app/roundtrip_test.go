package app_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// statementTracer counts the statements a PostgreSQL pool sends, and keeps
// their first words (each starts with its /* Store.Method */ comment, or is
// BEGIN or COMMIT). Once a statement is prepared on its connection, each
// is one round trip.
type statementTracer struct {
	mu   sync.Mutex
	on   bool
	sent []string
}

func (tr *statementTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	tr.mu.Lock()
	if tr.on {
		name, _, _ := strings.Cut(strings.TrimSpace(d.SQL), "*/")
		tr.sent = append(tr.sent, name)
	}
	tr.mu.Unlock()
	return ctx
}

func (tr *statementTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// count runs fn and returns the statements it sent.
func (tr *statementTracer) count(fn func()) []string {
	tr.mu.Lock()
	tr.on, tr.sent = true, nil
	tr.mu.Unlock()
	fn()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.on = false
	return tr.sent
}

// TestSubmitRoundTripsPostgres counts what one new lead's intake sends to
// PostgreSQL: a clean lead with its form token and visitor, on a site live
// on Meta (the lead's row, its history entry, its counters, its two outbox
// rows, the token's use, the visitor's look-up). Each statement is a round
// trip on a network between the node and the database; intake keeps them
// to two, the look-up and one statement that writes everything (a
// data-modifying CTE), with no BEGIN or COMMIT around them.
func TestSubmitRoundTripsPostgres(t *testing.T) {
	// A subtest named postgres: the test chooses its engine itself, so
	// CI's PostgreSQL pass skips it, which the SQLite pass ran already.
	t.Run("postgres", testSubmitRoundTripsPostgres)
}

func testSubmitRoundTripsPostgres(t *testing.T) {
	ctx := context.Background()
	tr := &statementTracer{}
	db, err := store.Open(ctx, storetest.PostgresMigratedDSN(t), store.Options{Secrets: storetest.Box(t), Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx, time.Now); err != nil {
		t.Fatal(err)
	}
	clk := testkit.NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	testkit.AddSite(t, db, testkit.Site(testkit.WithMeta("123456789012345", model.ModeLive)), clk.Now())
	site, err := db.SiteByID(ctx, "dent")
	if err != nil {
		t.Fatal(err)
	}
	svc := app.New(app.Options{Store: db, Now: clk.Now, SecretKey: "round-trips-secret-key-0123456789abcdef"})
	// Three visits, each with its form token, then their leads two
	// minutes later, half a second apart (the site's webhooks and text model,
	// read at most every few seconds, stay cached between them).
	var leads []*app.LeadInput
	for _, email := range []string{"first@gmail.com", "second@gmail.com", "third@gmail.com"} {
		res, err := svc.Collect(ctx, site, &app.CollectInput{PageURL: "https://www.istanbuldis.example/implant?fbclid=IwAR1",
			ClientIP: "85.105.1.2", UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"})
		if err != nil {
			t.Fatal(err)
		}
		in := realLead()
		in.Email, in.Phone, in.VisitorID, in.FormToken = email, "", res.Visitor.ID, res.FormToken
		leads = append(leads, in)
	}
	clk.Add(2 * time.Minute)
	// The first lead prepares the statements on the pool's connections.
	for i, in := range leads {
		clk.Add(500 * time.Millisecond)
		var l *model.Lead
		sent := tr.count(func() {
			if l, _, err = svc.Submit(ctx, site, in); err != nil {
				t.Fatal(err)
			}
		})
		if l.Verdict != model.VerdictClean {
			t.Fatalf("lead %d: verdict %s %+v, want clean", i, l.Verdict, l.Reasons)
		}
		if got := len(outboxOf(db, l.ID)); got != 2 {
			t.Fatalf("lead %d: %d outbox rows, want 2", i, got)
		}
		if i > 0 && len(sent) > 2 {
			t.Errorf("lead %d: %d statements, want 2 at most:\n%s", i, len(sent), strings.Join(sent, "\n"))
		}
		if i == 2 {
			t.Logf("one lead's statements: %d", len(sent))
		}
	}
}

// outboxOf returns a lead's outbox rows.
func outboxOf(db *store.DB, id model.LeadID) []*model.Delivery {
	list, _ := db.DeliveriesByLead(context.Background(), id)
	return list
}
