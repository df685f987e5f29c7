package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// migrateTwice migrates an empty database, writes to it, and opens it again:
// nothing left to do, data intact.
func migrateTwice(t *testing.T, ctx context.Context, dsn string) {
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CheckSchema(ctx); err == nil || !strings.Contains(err.Error(), "cleanads migrate") {
		t.Errorf("an empty database passed the schema check: %v", err)
	}
	applied, err := db.Migrate(ctx, time.Now)
	if err != nil || len(applied) == 0 || applied[len(applied)-1] != store.LatestVersion() {
		t.Fatalf("migrate empty: %v %v", applied, err)
	}
	testkit.AddSite(t, db, &model.Site{ID: "s", Name: "S"}, time.Now())
	db.Close()

	db, err = store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	applied, err = db.Migrate(ctx, time.Now)
	if err != nil || len(applied) != 0 {
		t.Fatalf("migrate current: %v %v", applied, err)
	}
	if _, err := db.SiteByID(ctx, "s"); err != nil {
		t.Errorf("data lost: %v", err)
	}
	if err := db.CheckSchema(ctx); err != nil {
		t.Error(err)
	}
}

func TestRefuseNewerSchema(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.TestExec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'future', 0)`)
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Migrate(ctx, time.Now); err == nil || !strings.Contains(err.Error(), "newer than this binary") {
			t.Errorf("migrate on a newer schema: %v", err)
		}
		if err := db.CheckSchema(ctx); err == nil || !strings.Contains(err.Error(), "upgrade cleanads") {
			t.Errorf("check on a newer schema: %v", err)
		}
	})
}

func TestSiteUpsertLiftsPauseOnNewToken(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now()
		s := &model.Site{ID: "dent", Name: "D", AccessToken: "old", Settings: model.SiteSettings{Country: "TR", Origins: []string{"https://a.example"}}}
		if err := db.SiteUpsert(ctx, s, now); err != nil {
			t.Fatal(err)
		}
		if err := db.SitePause(ctx, "dent", "token expired", now); err != nil {
			t.Fatal(err)
		}
		s.Name = "Dental"
		db.SiteUpsert(ctx, s, now)
		got, _ := db.SiteByID(ctx, "dent")
		if got.PausedReason != "token expired" || got.Name != "Dental" {
			t.Errorf("same token: %+v", got)
		}
		s.AccessToken = "new"
		db.SiteUpsert(ctx, s, now)
		got, _ = db.SiteByID(ctx, "dent")
		if got.PausedReason != "" || !got.PausedAt.IsZero() || got.Settings.Origins[0] != "https://a.example" {
			t.Errorf("new token: %+v", got)
		}
		if _, err := db.SiteByID(ctx, "nope"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("missing site: %v", err)
		}
	})
}

func TestLeadRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Millisecond)
		db.SiteUpsert(ctx, &model.Site{ID: "dent"}, now)
		yes, fill := true, int64(4200)
		ru := now.Add(time.Hour)
		l := &model.Lead{ID: "ld_1", SiteID: "dent", EventID: "e1", Email: "A@x.com", EmailKey: "a@x.com",
			PhoneKey: "905324128719", Fields: map[string]string{"k": "v"}, Consent: &yes, FillMS: &fill,
			SubmittedAt: now, ReceivedAt: now, ReviewUntil: &ru,
			Decision: model.Decision{Verdict: model.VerdictReview, Score: 40,
				Reasons: []model.Reason{{Code: "PRICE_ONLY", Points: 40}}, RulesVersion: "v1", DecidedBy: "rules"}}
		if err := db.LeadInsert(ctx, l); err != nil {
			t.Fatal(err)
		}
		dup := *l
		dup.ID = "ld_2"
		if err := db.LeadInsert(ctx, &dup); !errors.Is(err, model.ErrConflict) {
			t.Errorf("same event id: %v", err)
		}
		got, err := db.LeadByID(ctx, "ld_1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Email != "A@x.com" || *got.Consent != true || *got.FillMS != 4200 || got.Fields["k"] != "v" ||
			got.Reasons[0].Code != "PRICE_ONLY" || !got.ReviewUntil.Equal(ru) || !got.SubmittedAt.Equal(now) {
			t.Errorf("round trip: %+v", got)
		}
		if got.Source != model.SourceWeb || got.SourceDetail != nil {
			t.Errorf("a lead that names no source: source %q, detail %v; want web and none", got.Source, got.SourceDetail)
		}
		ads := &model.Lead{ID: "ld_ads", SiteID: "dent", EventID: "e-ads", SubmittedAt: now, ReceivedAt: now,
			Source: model.SourceLeadAds, SourceDetail: map[string]string{"form_id": "1234567890123456789", "ad_name": "Implant – İstanbul"},
			Decision: model.Decision{Verdict: model.VerdictReview, DecidedBy: "rules"}}
		if err := db.LeadInsert(ctx, ads); err != nil {
			t.Fatal(err)
		}
		if got, err := db.LeadByID(ctx, "ld_ads"); err != nil || got.Source != model.SourceLeadAds ||
			got.SourceDetail["form_id"] != "1234567890123456789" || got.SourceDetail["ad_name"] != "Implant – İstanbul" {
			t.Errorf("source round trip: %+v, %v", got, err)
		}
		for _, k := range []store.LeadLookup{{ID: "ld_1"}, {EventID: "e1"}, {EmailKey: "a@x.com"}, {PhoneKey: "905324128719"}} {
			if f, err := db.LeadFind(ctx, "dent", k); err != nil || f.ID != "ld_1" {
				t.Errorf("find %+v: %v", k, err)
			}
		}
		prev, at, match, err := db.LeadPrevious(ctx, "dent", "a@x.com", "", now.Add(-time.Hour), "ld_new")
		if err != nil || prev != "ld_1" || !at.Equal(now) || match != "email" {
			t.Errorf("previous: %v %v %v %v", prev, at, match, err)
		}
		if _, _, _, err := db.LeadPrevious(ctx, "dent", "a@x.com", "", now.Add(time.Hour), "ld_new"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("previous outside window: %v", err)
		}
		if err := db.LeadSetDecision(ctx, "ld_1", model.Decision{Verdict: model.VerdictClean, DecidedBy: "owner"}, nil); err != nil {
			t.Fatal(err)
		}
		got, _ = db.LeadByID(ctx, "ld_1")
		if got.Verdict != model.VerdictClean || got.ReviewUntil != nil || got.DecidedBy != "owner" {
			t.Errorf("decision: %+v", got)
		}
	})
}

// TestDeliveryListReadsTheSitesRows checks on SQLite that the deliveries
// page of one site and state walks that site's rows of the state, not
// every site's, and reads the payloads of the page's rows alone.
func TestDeliveryListReadsTheSitesRows(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	plan, err := db.TestDeliveryListPlan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "delivery_state_site_state_created (site_id=? AND state=? AND created_at") {
		t.Errorf("deliveries list plan:\n%s\nwant a walk of the site's rows of the state", plan)
	}
}

// TestWebhookDeliveriesReadTheNewest checks on SQLite that a site's
// webhook posts are read from its newest through their partial index, not
// by sorting every delivery of the site (the site's page showed it: 141-305
// ms at 100,000 leads).
func TestWebhookDeliveriesReadTheNewest(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	plan, err := db.TestWebhookDeliveriesPlan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "delivery_state_webhook_recent") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("webhook deliveries plan:\n%s\nwant a walk of delivery_state_webhook_recent, no sort", plan)
	}
}

// TestDeliveryClaimReadsInClaimOrder checks SQLite's plans for the claim.
// A site's events: a walk of delivery_state_claimable from the site's first
// entry, already in (deadline_at, id) order, with no sort; a plan with a
// sort reads every due event to return the first thousand, on the writer,
// which a backlog of a million events turns into seconds of intake held up
// per claim. A slice after the first starts in the index where the one
// before stopped. The shares with due events: one seek per site and
// destination into the same index, not a scan of it.
func TestDeliveryClaimReadsInClaimOrder(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	for _, cursor := range []bool{false, true} {
		plan, err := db.TestClaimPlan(context.Background(), cursor)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "delivery_state_claimable (site_id=? AND destination=?") || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("claim plan (cursor %v):\n%s\nwant a walk of delivery_state_claimable from the site with no sort", cursor, plan)
		}
		if cursor && !strings.Contains(plan, "(deadline_at,id)>") {
			t.Errorf("claim plan of a later slice:\n%s\nwant the walk to start past the cursor", plan)
		}
	}
	plan, err := db.TestClaimSitesPlan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "delivery_state_claimable (site_id=? AND destination=?)") {
		t.Errorf("claimable sites plan:\n%s\nwant a seek per site and destination into delivery_state_claimable", plan)
	}
}

// The look-ups by external id and Lead Ads id, and the expiry of reviews,
// use the partial indexes that hold only the leads with a value, in the
// order they want (a look-up walking every lead of the site is what the
// planner picked before).
func TestPartialLeadIndexesServeTheirLookUps(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	for col, index := range map[string]string{"external_id": "leads_external_id", "lead_ads_id": "leads_lead_ads_id",
		"email_key": "leads_email_recent", "phone_key": "leads_phone_recent"} {
		plan, err := db.TestLeadFindPlan(ctx, col)
		// Ties of received_at are put in id order: that sort is of the
		// lead's own rows, not of the site's.
		if err != nil || !strings.Contains(plan, index+" (site_id=? AND "+planTerm(col)+"=?") || strings.Contains(plan, "TEMP B-TREE FOR ORDER BY") {
			t.Errorf("LeadFind by %s:\n%s %v\nwant a seek in %s", col, plan, err, index)
		}
	}
	if plan, err := db.TestExpireReviewsPlan(ctx); err != nil || !strings.Contains(plan, "leads_review_until") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("review expiry:\n%s %v\nwant leads_review_until, no sort", plan, err)
	}
}

// planTerm is how SQLite's plan names a look-up's column: the e-mail key is
// read through an expression, which leads_email_recent indexes (migration
// 0580).
func planTerm(col string) string {
	if col == "email_key" {
		return "<expr>"
	}
	return col
}

// The contact-key indexes hold only the leads with a key (migration 0551):
// every look-up by a key still seeks in its index, none reads the site's
// leads.
func TestContactKeyIndexesServeTheirLookUps(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	for col, index := range map[string]string{"email_key": "leads_email_recent", "phone_key": "leads_phone_recent"} {
		plans, err := db.TestContactKeyPlans(ctx, col)
		if err != nil {
			t.Fatal(err)
		}
		for i, plan := range plans {
			if !strings.Contains(plan, index+" (site_id=? AND "+planTerm(col)+"=?") {
				t.Errorf("look-up %d by %s:\n%s\nwant a seek in %s", i, col, plan, index)
			}
		}
	}
}

// A binary records itself with the migrations it applies; an older one that
// meets the schema names that version and writes nothing.
func TestNewerSchemaNamesTheVersionToRun(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.TestExec(ctx, `INSERT INTO schema_migrations (version, name, applied_at, binary_version) VALUES (9999, 'future', 0, 'v9.9.9')`)
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.Migrate(ctx, time.Now)
		var newer *store.NewerSchemaError
		if !errors.As(err, &newer) || newer.Need != "v9.9.9" || newer.Schema != 9999 || newer.Known != store.LatestVersion() {
			t.Fatalf("migrate on a newer schema: %v", err)
		}
		if !strings.Contains(err.Error(), "upgrade cleanads to v9.9.9 or newer") {
			t.Errorf("the refusal does not say which version to run: %v", err)
		}
		if err := db.CheckSchema(ctx); !errors.As(err, &newer) || newer.Need != "v9.9.9" {
			t.Errorf("check on a newer schema: %v", err)
		}
	})
}

// The version given in Options is what Migrate records.
func TestMigrateRecordsTheBinaryVersion(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": storetest.SQLiteDSN, "postgres": storetest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db, err := store.Open(ctx, dsn(t), store.Options{Version: "v1.2.3"})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Migrate(ctx, time.Now); err != nil {
				t.Fatal(err)
			}
			got, err := db.TestQueryString(ctx, `SELECT binary_version FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)`)
			if err != nil {
				t.Fatal(err)
			}
			if got != "v1.2.3" {
				t.Errorf("the newest migration was recorded as applied by %q, want v1.2.3", got)
			}
		})
	}
}

// TestDeliveriesToShrinkReadOnlyRowsNotShrunk checks on SQLite that
// retention's shrinking walks the partial index of the rows not shrunk
// yet from its cursor, in its order: a run never reads the rows shrunk
// before (at a million leads, nearly all of them).
func TestDeliveriesToShrinkReadOnlyRowsNotShrunk(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	plan, err := db.TestDeliveriesToShrinkPlan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "delivery_state_unshrunk (created_at") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("shrink plan:\n%s\nwant a walk of delivery_state_unshrunk from the cursor, no sort", plan)
	}
}

// TestDeliveriesToRedactReadOnlyRowsNotShrunk checks on SQLite that
// retention's walk of the rows whose clear values may be left reads the
// partial index of the rows not shrunk yet (a shrunk row is redacted), not
// every row from the oldest: since migration 0410 there is no index of
// every row's time, and the rows shrunk before are nearly all of them.
func TestDeliveriesToRedactReadOnlyRowsNotShrunk(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	plan, err := db.TestDeliveriesToRedactPlan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "delivery_state_unshrunk (created_at<?)") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("redact plan:\n%s\nwant a walk of delivery_state_unshrunk, no sort", plan)
	}
}

// SQLite's intake look-up reads the landing visit in the same statement:
// the visitor's visits on their index, newest first, and the one found by
// its key; no scan of the site's visits.
func TestLeadIntakeLandingPlan(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	plan, err := db.TestLeadIntakeLandingPlan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"visits_visitor (site_id=? AND visitor_id=? AND at>? AND at<?)", "PRIMARY KEY (site_id=? AND event_id=?)"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan:\n%s\nwant %s", plan, want)
		}
	}
	lines := strings.Split(plan, "\n")
	for i, l := range lines {
		sorted := strings.HasPrefix(l, "SEARCH w ") && i+1 < len(lines) && strings.Contains(lines[i+1], "TEMP B-TREE")
		if sorted || strings.HasPrefix(l, "SCAN g") || strings.HasPrefix(l, "SCAN w") {
			t.Errorf("plan:\n%s\nwant no scan of visits and no sort of them", plan)
		}
	}
}
