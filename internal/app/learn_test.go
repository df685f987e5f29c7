package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// judgeFixture submits the first n leads of the owner-judgement fixture and
// gives the owner's word on each, as the admin's buttons do.
func (f *fixture) judgeFixture(n int) []*model.Lead {
	f.t.Helper()
	b, err := os.ReadFile("../qualify/testdata/owner_judgements.json")
	if err != nil {
		f.t.Fatal(err)
	}
	var js []qualify.Judgement
	if err := json.Unmarshal(b, &js); err != nil {
		f.t.Fatal(err)
	}
	var leads []*model.Lead
	for i, j := range js[:n] {
		in := realLead()
		in.Message, in.Email = j.Message, fmt.Sprintf("kisi%d@gmail.com", i)
		in.Phone = fmt.Sprintf("+90 532 %03d %02d %02d", 400+i*7%500, (i*13+17)%100, (i*29+41)%100)
		l := f.submit(in)
		ev := qualify.Evidence{Type: qualify.EvidenceCustomer}
		if j.Junk {
			ev.Type = qualify.EvidenceJunk
		}
		leads = append(leads, f.evidence(l.ID, ev))
		f.clk.Add(time.Minute)
	}
	return leads
}

func (f *fixture) rebuild() int {
	f.t.Helper()
	n, err := f.svc.RebuildTextModels(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// pitch is a vendor's message; the owner-judged fixture has several like it.
func pitch() *app.LeadInput {
	in := realLead()
	in.Email, in.Phone = "info@growthagency.example", "+90 532 777 41 29"
	in.Message = "Hello, special SEO offer for your clinic website, guest post and backlink package."
	return in
}

func textReason(t *testing.T, l *model.Lead) *model.Reason {
	t.Helper()
	r, ok := qualify.TextReason(l.Decision)
	if !ok {
		return nil
	}
	return &r
}

func TestTextModelLearnsFromTheOwner(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if n := f.rebuild(); n != 0 {
		t.Fatalf("nothing judged, %d models built", n)
	}
	if r := textReason(t, f.submit(pitch())); r != nil {
		t.Fatalf("a reason before any judgement: %+v", r)
	}

	// 20 judgements: the model is trained, and runs in shadow.
	f.judgeFixture(20)
	if n := f.rebuild(); n != 1 {
		t.Fatalf("rebuilt %d models, want 1", n)
	}
	if n := f.rebuild(); n != 0 {
		t.Errorf("nothing changed, yet %d rebuilt", n)
	}
	st, err := f.svc.TextModelStatus(ctx, f.site)
	if err != nil || st.Judged != 20 || st.Live || st.Off {
		t.Fatalf("status %+v %v", st, err)
	}
	l := f.submit(pitch())
	r := textReason(t, l)
	if r == nil || r.Points != 0 || r.Evidence["shadow"] != true || r.Evidence["toward"] != "junk" {
		t.Fatalf("shadow reason: %+v", r)
	}
	sum := 0
	for _, x := range l.Reasons {
		sum += x.Points
	}
	if l.Score != min(sum, 100) {
		t.Errorf("score %d, the reasons add up to %d", l.Score, sum)
	}
	// Stored with the lead, so the lead page shows it.
	stored, _ := f.db.LeadByID(ctx, l.ID)
	if textReason(t, stored) == nil {
		t.Error("the shadow reason was not stored")
	}

	// 40 judgements: live, and counted.
	f.judgeFixture(40) // the first 20 again as new leads, and 20 more
	if n := f.rebuild(); n != 1 {
		t.Fatalf("rebuilt %d models after new judgements", n)
	}
	l = f.submit(pitch())
	if r := textReason(t, l); r == nil || r.Points <= 0 || r.Points > qualify.DefaultTextMaxPoints || r.Evidence["shadow"] != nil {
		t.Fatalf("live reason: %+v", r)
	}
	in := realLead()
	in.Email, in.Phone = "zeynep.kaya@gmail.com", "+90 533 612 08 47"
	in.Message = "Merhaba, kanal tedavisi için randevu almak istiyorum, hafta içi uygunum."
	// Toward a real customer it takes back only what rules that read words
	// gave: here nothing.
	if r := textReason(t, f.submit(in)); r == nil || r.Points != 0 || r.Evidence["toward"] != "customer" {
		t.Errorf("a real enquiry: %+v", r)
	}

	// The owner changes their word on one lead: rebuilt.
	leads, err := f.db.LeadOwnerJudged(ctx, f.site.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	ev := qualify.Evidence{Type: qualify.EvidenceJunk}
	if leads[0].Junk {
		ev.Type = qualify.EvidenceCustomer
	}
	f.evidence(leads[0].LeadID, ev)
	if n := f.rebuild(); n != 1 {
		t.Errorf("a changed judgement rebuilt %d models", n)
	}

	// Persisted: a new process (no cache) loads the stored model.
	fresh := app.New(app.Options{Store: f.db, Now: f.clk.Now})
	p := pitch()
	p.Email = "sales@growthagency.example"
	l2, _, err := fresh.Submit(ctx, f.site, p)
	if err != nil {
		t.Fatal(err)
	}
	if r := textReason(t, l2); r == nil || r.Points <= 0 {
		t.Errorf("after a restart: %+v", r)
	}
}

func TestTextModelSwitchedOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.judgeFixture(40)
	off := false
	f.site.Settings.Qualify.TextModel.Enabled = &off
	if err := f.db.SiteUpsert(ctx, f.site, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	site, _ := f.db.SiteByID(ctx, "dent")
	f.site = site
	if n := f.rebuild(); n != 0 {
		t.Errorf("off, yet %d models built", n)
	}
	if r := textReason(t, f.submit(pitch())); r != nil {
		t.Errorf("off, yet a reason: %+v", r)
	}
	if st, err := f.svc.TextModelStatus(ctx, f.site); err != nil || !st.Off {
		t.Errorf("status %+v %v", st, err)
	}
}

func TestReplayChangesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.judgeFixture(40)
	grey := f.submit(greyLead())
	fast := realLead()
	fast.Email, fast.Phone, fast.FillMS = "hizli@gmail.com", "+90 535 284 61 07", i64(800)
	fastLead := f.submit(fast)
	if fastLead.Verdict == model.VerdictClean {
		t.Fatalf("an 800 ms fill was judged clean")
	}
	before := dbSnapshot(t, f)

	// The rules as a site changes them: the fill time counts for nothing.
	site := *f.site
	site.UpdatedAt = site.UpdatedAt.Add(time.Second) // a new rule set
	site.Settings.Qualify.Weights = map[string]int{qualify.CodeFillTooFast: 0}
	res, err := f.svc.Replay(ctx, &site, f.clk.Now().Add(-7*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if res.Leads != 42 || res.Judged != 40 || res.Model == nil || !res.Model.Live() {
		t.Fatalf("replayed %d leads, %d judged, model %v", res.Leads, res.Judged, res.Model)
	}
	var found bool
	for _, c := range res.Changes {
		if c.Lead.ID == fastLead.ID {
			found = true
			if c.Was != fastLead.Verdict || c.Now.Verdict != model.VerdictClean {
				t.Errorf("the fast lead: %s -> %s", c.Was, c.Now.Verdict)
			}
		}
		if c.Lead.ID == grey.ID {
			t.Errorf("the grey lead changed: %s -> %s", c.Was, c.Now.Verdict)
		}
	}
	if !found {
		t.Errorf("the fast lead is not among the changes: %+v", res.Changes)
	}
	if after := dbSnapshot(t, f); after != before {
		t.Errorf("replay wrote to the database:\n%s\n%s", before, after)
	}
}

// dbSnapshot sums up what the replay must not touch.
func dbSnapshot(t *testing.T, f *fixture) string {
	t.Helper()
	ctx := context.Background()
	leads, err := f.db.LeadList(ctx, store.LeadFilter{Site: f.site.ID, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	s := ""
	for _, l := range leads {
		h, _ := f.db.HistoryByLead(ctx, l.ID)
		d, _ := f.db.DeliveriesByLead(ctx, l.ID)
		s += fmt.Sprintf("%s %s %d %d %d %d|", l.ID, l.Verdict, l.Score, len(l.Reasons), len(h), len(d))
	}
	fp, _ := f.db.TextModelFingerprint(ctx, f.site.ID)
	return s + fp
}

// A person forgotten takes their words out of the model at the next
// rebuild: the model keeps nothing of a message that is gone.
func TestTextModelForgets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	in := realLead()
	in.Email, in.Phone, in.Message = "quokka@gmail.com", "+90 533 612 08 47", "Zanzibar quokka numbat"
	l := f.submit(in)
	f.evidence(l.ID, qualify.Evidence{Type: qualify.EvidenceJunk})
	f.judgeFixture(4)
	f.rebuild()
	m, err := f.svc.TrainTextModel(ctx, f.site.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j := m.Judge("zanzibar quokka", nil); j.Known == 0 {
		t.Fatal("the model does not know the words")
	}
	if _, err := f.svc.Forget(ctx, app.ForgetInput{Email: "quokka@gmail.com"}); err != nil {
		t.Fatal(err)
	}
	if n := f.rebuild(); n != 1 {
		t.Fatalf("forgetting rebuilt %d models", n)
	}
	row, err := f.db.TextModelGet(ctx, f.site.ID)
	if err != nil {
		t.Fatal(err)
	}
	var stored qualify.TextModel
	if err := json.Unmarshal(row.Data, &stored); err != nil {
		t.Fatal(err)
	}
	if j := stored.Judge("zanzibar quokka numbat", nil); j.Known != 0 {
		t.Errorf("the stored model still knows %d of the forgotten words", j.Known)
	}
}
