package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// replayChanges replays the site's last week with the given settings and
// returns each changed lead's verdict now, by lead id.
func (f *fixture) replayChanges(site *model.Site) map[model.LeadID]app.ReplayChange {
	f.t.Helper()
	res, err := f.svc.Replay(context.Background(), site, f.clk.Now().Add(-7*24*time.Hour))
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[model.LeadID]app.ReplayChange{}
	for _, c := range res.Changes {
		out[c.Lead.ID] = c
	}
	return out
}

func fillReason(t *testing.T, d model.Decision) model.Reason {
	t.Helper()
	for _, r := range d.Reasons {
		if r.Code == qualify.CodeFillTooFast {
			return r
		}
	}
	t.Fatalf("no FILL_TOO_FAST in %+v", d.Reasons)
	return model.Reason{}
}

// TestFillByKeptAndReplayed: who measured a fill time is stored with the
// lead, and a replay weighs it as intake did: the site's server's 800 ms is
// its points (review once the site lowers them), our tracker's stays final
// junk. A lead stored before fill_by was kept is read from its judgement.
func TestFillByKeptAndReplayed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	backend := realLead()
	backend.Email, backend.Phone, backend.FillMS, backend.FromServer = "sunucu@gmail.com", "+90 535 284 61 07", i64(800), true
	fromServer := f.submit(backend)
	tracker := realLead()
	tracker.Email, tracker.Phone, tracker.FillMS = "tarayici@gmail.com", "+90 535 284 61 08", i64(800)
	fromBrowser := f.submit(tracker)
	none := realLead()
	none.Email, none.Phone, none.FillMS = "bilinmez@gmail.com", "+90 535 284 61 09", nil
	noFill := f.submit(none)

	for _, tt := range []struct {
		lead   *model.Lead
		by     string
		source string
		final  bool
	}{
		{fromServer, model.FillByBackend, qualify.FillSourceBackend, false},
		{fromBrowser, model.FillByTracker, qualify.FillSourceTracker, true},
	} {
		stored, err := f.db.LeadByID(ctx, tt.lead.ID)
		if err != nil {
			t.Fatal(err)
		}
		r := fillReason(t, stored.Decision)
		if stored.FillBy != tt.by || r.Evidence["source"] != tt.source || r.Final != tt.final || stored.Verdict != model.VerdictJunk {
			t.Errorf("%s: fill_by %q, %s, reason %+v", tt.by, stored.FillBy, stored.Verdict, r)
		}
	}
	if stored, _ := f.db.LeadByID(ctx, noFill.ID); stored.FillBy != "" {
		t.Errorf("a lead without a fill time: fill_by %q", stored.FillBy)
	}
	// A lead stored before 0190: no fill_by, its judgement names the backend.
	old := *fromServer
	old.ID, old.EventID, old.FillBy, old.EmailKey, old.PhoneKey = "ld_old_backend", "ev-old-backend", "", "", ""
	if err := f.db.LeadInsert(ctx, &old); err != nil {
		t.Fatal(err)
	}
	if got := app.LeadFillBy(&old); got != model.FillByBackend {
		t.Errorf("LeadFillBy of a lead stored before 0190: %q", got)
	}

	site := *f.site
	site.UpdatedAt = site.UpdatedAt.Add(time.Second)
	site.Settings.Qualify.Weights = map[string]int{qualify.CodeFillTooFast: 40}
	changes := f.replayChanges(&site)
	for _, id := range []model.LeadID{fromServer.ID, old.ID} {
		c, ok := changes[id]
		if !ok || c.Now.Verdict != model.VerdictReview || fillReason(t, c.Now).Evidence["source"] != qualify.FillSourceBackend {
			t.Errorf("the backend's fast fill %s replayed as %+v (present %v), want review by its 40 points", id, c.Now, ok)
		}
	}
	if c, ok := changes[fromBrowser.ID]; ok {
		t.Errorf("our tracker's fast fill changed on replay: %s -> %s", c.Was, c.Now.Verdict)
	}
}

// TestReplayJudgesAsIntake: a replay judges a Click-to-WhatsApp lead as a
// conversation (no fill time, no form, no phone needed), and finds the same
// person's earlier lead by e-mail even when a later lead has their phone.
func TestReplayJudgesAsIntake(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	chat := &model.Lead{ID: "ld_chat", SiteID: f.site.ID, EventID: "ev-chat", Source: model.SourceWhatsApp,
		Message:     "Merhaba, implant tedavisi için randevu almak istiyorum, hafta içi uygunum.",
		SubmittedAt: f.clk.Now(), ReceivedAt: f.clk.Now(),
		Decision: model.Decision{Verdict: model.VerdictClean, RulesVersion: qualify.RulesVersion, DecidedBy: model.DecidedByRules}}
	if err := f.db.LeadInsert(ctx, chat); err != nil {
		t.Fatal(err)
	}
	if err := f.db.HistoryIntakeInsert(ctx, &model.HistoryEntry{ID: "h_chat", LeadID: chat.ID, At: f.clk.Now(), Kind: model.HistoryVerdict,
		Data: map[string]any{"verdict": "clean", "decided_by": "rules"}}, chat); err != nil {
		t.Fatal(err)
	}

	first := realLead()
	first.Phone = ""
	a := f.submit(first)
	f.clk.Add(time.Minute)
	second := realLead()
	second.Phone = "+90 536 118 52 40"
	b := f.submit(second)
	f.clk.Add(time.Minute)
	third := realLead()
	third.Email = ""
	third.Phone = second.Phone
	c := f.submit(third)
	if !hasReason(b, qualify.CodeDuplicate) || !hasReason(c, qualify.CodeDuplicate) || hasReason(a, qualify.CodeDuplicate) {
		t.Fatalf("intake: %v %v %v", a.Reasons, b.Reasons, c.Reasons)
	}

	changes := f.replayChanges(f.site)
	for id, ch := range changes {
		t.Errorf("%s changed on replay with the same rules: %s -> %s %+v", id, ch.Was, ch.Now.Verdict, ch.Now.Reasons)
	}
}
