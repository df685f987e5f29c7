package store_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// readyLead is one hand-made lead of a readiness test: when it came, its
// verdict, whether it came from an Instant Form, and what reached Meta.
type readyLead struct {
	at      time.Time
	verdict model.Verdict
	leadAds bool
	// sent is whether its lead event was accepted, and when.
	sent bool
	// qualified is whether its qualified event was accepted, queued after
	// qualifiedAfter.
	qualified      bool
	qualifiedAfter time.Duration
	// stage, when not "", is a CRM stage (event Schedule) reached after
	// stageAfter and accepted by Meta.
	stage      string
	stageAfter time.Duration
}

// addReadyLeads stores the leads of site with their Meta events (accepted
// ones marked sent at their time) and stages, in one transaction.
func addReadyLeads(t *testing.T, db *store.DB, site model.SiteID, leads []readyLead) {
	t.Helper()
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for i, r := range leads {
			id := model.LeadID(fmt.Sprintf("%s_%03d", site, i))
			l := testkit.Lead(site, id, r.at, func(l *model.Lead) {
				l.Phone = "+90532412" + fmt.Sprintf("%04d", i)
				l.Decision = model.Decision{Verdict: r.verdict, DecidedBy: model.DecidedByRules}
				if r.leadAds {
					l.LeadAdsID = fmt.Sprintf("9%014d", i)
				}
			})
			if err := tx.LeadInsert(ctx, l); err != nil {
				return err
			}
			event := func(kind, name string, at time.Time) error {
				// Stored as Meta accepted it (its time the queueing's):
				// the readiness counters count it as they count one
				// recorded sent.
				d := &model.Delivery{ID: fmt.Sprintf("d_%s_%s", id, name), SiteID: site, LeadID: id, Kind: kind, EventName: name,
					EventID: l.EventID, PixelID: "111", Payload: []byte(`{}`), State: model.DeliverySent, NextAt: at,
					DeadlineAt: at.Add(7 * 24 * time.Hour), CreatedAt: at, UpdatedAt: at}
				_, err := tx.DeliveryInsert(ctx, d)
				return err
			}
			if r.sent {
				if err := event(model.KindLead, "Lead", r.at); err != nil {
					return err
				}
			}
			if r.qualified {
				if err := event(model.KindQualified, "QualifiedLead", r.at.Add(r.qualifiedAfter)); err != nil {
					return err
				}
			}
			if r.stage != "" {
				at := r.at.Add(r.stageAfter)
				if _, err := tx.LeadStageInsert(ctx, &model.LeadStage{LeadID: id, Stage: r.stage, At: at, EventName: "Schedule",
					EventID: "st-" + string(id), CreatedAt: at}); err != nil {
					return err
				}
				if err := event(model.KindStage+":"+r.stage, "Schedule", at); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadinessFigures reads the Conversion Leads figures of two sites
// from hand-made leads with known dates, on both engines: one that meets
// every guideline of Meta's, one that misses most; and checks each
// requirement's verdict and what to do. Leads outside the period, of
// another site, and events not accepted (or for Google) count for nothing.
func TestReadinessFigures(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		to := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
		from := to.AddDate(0, 0, -model.ReadyPeriodDays)
		testkit.AddSites(t, db, from.AddDate(0, 0, -60), "ready", "short")

		// "ready": 224 leads over 28 days, 8 a day, all from Instant
		// Forms; 24 junk (never sent). Every other lead of the first 200
		// that is not junk is qualified half a day later (93 of 224, 42%:
		// too common a stage for Meta), and 40 reach a meeting, the
		// first 20 two days after the lead and the rest four days after
		// (median three days).
		var ready []readyLead
		meetings := 0
		for i := range 224 {
			r := readyLead{at: from.Add(time.Duration(i) * 3 * time.Hour), verdict: model.VerdictClean, leadAds: true, sent: true}
			switch {
			case i%28 == 27 || i%28 == 13 || i%28 == 6:
				// 24 junk of 224.
				r.verdict, r.sent = model.VerdictJunk, false
			case i%2 == 0 && i < 200:
				r.qualified, r.qualifiedAfter = true, 12*time.Hour
				if meetings < 40 && i%4 == 0 {
					r.stage, r.stageAfter = "meeting", 48*time.Hour
					if meetings >= 20 {
						r.stageAfter = 96 * time.Hour
					}
					meetings++
				}
			}
			ready = append(ready, r)
		}
		// Outside the period: counted by nothing.
		ready = append(ready, readyLead{at: from.Add(-time.Hour), verdict: model.VerdictClean, leadAds: true, sent: true,
			qualified: true, stage: "meeting", stageAfter: time.Hour})
		addReadyLeads(t, db, "ready", ready)

		// "short": 30 website leads, one every 22 hours, 10 junk; the lead
		// events of the next 12 accepted (on 11 days), no stage.
		var short []readyLead
		for i := range 30 {
			r := readyLead{at: from.Add(time.Duration(i) * 22 * time.Hour), verdict: model.VerdictReview}
			if i < 10 {
				r.verdict = model.VerdictJunk
			} else if i < 22 {
				r.sent = true
			}
			short = append(short, r)
		}
		addReadyLeads(t, db, "short", short)
		// A Google row and a dead Meta row of a short lead reach no one.
		for _, d := range []*model.Delivery{
			{ID: "g1", SiteID: "short", LeadID: "short_025", Destination: model.DestinationGoogle, Kind: model.KindQualified,
				EventName: "google_qualified", EventID: "x", Payload: []byte(`{}`), State: model.DeliverySent,
				NextAt: to, DeadlineAt: to, CreatedAt: to.Add(-time.Hour), UpdatedAt: to},
			{ID: "m1", SiteID: "short", LeadID: "short_026", Kind: model.KindLead, EventName: "Lead", EventID: "y",
				Payload: []byte(`{}`), State: model.DeliveryDead, NextAt: to, DeadlineAt: to, CreatedAt: to.Add(-time.Hour), UpdatedAt: to},
		} {
			if _, err := db.DeliveryInsert(ctx, d); err != nil {
				t.Fatal(err)
			}
		}

		f, err := db.ReadinessFigures(ctx, "ready", from, to)
		if err != nil {
			t.Fatal(err)
		}
		if f.Leads != 224 || f.NotJunk != 200 || f.LeadAds != 224 || f.Uploaded != 200 || f.UploadDays != 28 {
			t.Errorf("ready: leads %d, not junk %d, lead ads %d, uploaded %d, upload days %d; want 224, 200, 224, 200, 28",
				f.Leads, f.NotJunk, f.LeadAds, f.Uploaded, f.UploadDays)
		}
		wantStages := []model.StageFigure{
			{EventName: "Lead", Kind: model.KindLead, Leads: 200},
			{EventName: "QualifiedLead", Kind: model.KindQualified, Leads: 93, MedianDays: 0.5},
			{EventName: "Schedule", Kind: "stage:meeting", Leads: 40, MedianDays: 3},
		}
		if !reflect.DeepEqual(f.Stages, wantStages) {
			t.Errorf("ready: stages\n got %+v\nwant %+v", f.Stages, wantStages)
		}
		f.Matchable, f.Sampled = 95, 100
		for _, r := range model.CheckReadiness(f) {
			if !r.OK || r.Fix != "" {
				t.Errorf("ready: %s not met (have %v, want %v, fix %q)", r.Code, r.Have, r.Want, r.Fix)
			}
			if (r.Code == model.ReqRate || r.Code == model.ReqTiming) && r.Stage != "Schedule" {
				t.Errorf("ready: %s judged on %q, want the meeting (Schedule): the qualified event's 42%% is above Meta's 40%%", r.Code, r.Stage)
			}
		}

		f, err = db.ReadinessFigures(ctx, "short", from, to)
		if err != nil {
			t.Fatal(err)
		}
		if f.Leads != 30 || f.NotJunk != 20 || f.LeadAds != 0 || f.Uploaded != 12 || f.UploadDays != 11 ||
			len(f.Stages) != 1 || f.Stages[0].Leads != 12 {
			t.Errorf("short: figures %+v", f)
		}
		f.Matchable, f.Sampled = 5, 10
		got := map[string]string{}
		for _, r := range model.CheckReadiness(f) {
			if r.OK {
				t.Errorf("short: %s met (have %v)", r.Code, r.Have)
			}
			got[r.Code] = r.Fix
		}
		want := map[string]string{
			model.ReqInstantForms: model.FixConnectLeadAds, model.ReqVolume: model.FixMoreLeads,
			model.ReqUploaded: model.FixUploadAll, model.ReqStages: model.FixSendStages,
			model.ReqRate: model.FixSendStages, model.ReqTiming: model.FixSendStages,
			model.ReqDaily: model.FixDailyUploads, model.ReqMatchKeys: model.FixMatchKeys,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("short: what to do\n got %v\nwant %v", got, want)
		}
	})
}

// TestReadinessPlans checks on SQLite that the readiness figures read the
// period's counters by their key (one statement, whatever the leads), and
// that counting an event as it is recorded reads its row, lead, stage and
// its lead's other events by their keys: no statement scans every lead,
// event, stage or counter.
func TestReadinessPlans(t *testing.T) {
	db := storetest.SQLite(t)
	plans, err := db.TestReadinessPlans(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range plans {
		t.Logf("plan %d:\n%s", i, p)
		for _, line := range strings.Split(p, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "SCAN ") {
				t.Errorf("statement %d scans a whole table: %q", i, line)
			}
		}
	}
	if len(plans) == 2 && (!strings.Contains(plans[0], "site_counters") || strings.Contains(plans[0], "leads")) {
		t.Errorf("the figures are not read from site_counters alone:\n%s", plans[0])
	}
	if len(plans) == 2 && (!strings.Contains(plans[1], "delivery_events_lead") || !strings.Contains(plans[1], "lead_stages")) {
		t.Errorf("an event's lead's other events are not read by their lead:\n%s", plans[1])
	}
}
