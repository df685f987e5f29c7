package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/cli"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// learnedSite seeds a database with 40 leads its owner judged (the
// fixture of internal/qualify) and the site's trained text model, plus
// one lead filled in 800 ms; it returns that lead.
func learnedSite(t *testing.T, db *store.DB) *model.Lead {
	t.Helper()
	ctx := context.Background()
	testkit.AddSite(t, db, testkit.Site(), time.Now())
	site, _ := db.SiteByID(ctx, "dent")
	at := time.Now().Add(-2 * time.Hour)
	svc := app.New(app.Options{Store: db, Now: func() time.Time { return at }})
	b, err := os.ReadFile("../qualify/testdata/owner_judgements.json")
	if err != nil {
		t.Fatal(err)
	}
	var js []qualify.Judgement
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	fill := int64(20000)
	for i, j := range js {
		l, _, err := svc.Submit(ctx, site, &app.LeadInput{Message: j.Message, Email: fmt.Sprintf("kisi%d@gmail.com", i),
			Phone: fmt.Sprintf("+90 532 %03d %02d %02d", 400+i*7%500, (i*13+17)%100, (i*29+41)%100), FillMS: &fill})
		if err != nil {
			t.Fatal(err)
		}
		ev := qualify.Evidence{Type: qualify.EvidenceCustomer}
		if j.Junk {
			ev.Type = qualify.EvidenceJunk
		}
		if _, err := svc.AddEvidence(ctx, site, l.ID, ev); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Minute)
	}
	if n, err := svc.RebuildTextModels(ctx); err != nil || n != 1 {
		t.Fatalf("rebuilt %d: %v", n, err)
	}
	fast := int64(800)
	l, _, err := svc.Submit(ctx, site, &app.LeadInput{Message: "Merhaba, implant için randevu almak istiyorum.",
		Email: "hizli@gmail.com", Phone: "+90 535 284 61 07", FillMS: &fast})
	if err != nil {
		t.Fatal(err)
	}
	if l.Verdict == model.VerdictClean {
		t.Fatal("an 800 ms fill was judged clean")
	}
	return l
}

// snapshot sums up every lead's decision, history and events.
func snapshot(t *testing.T, db *store.DB) string {
	t.Helper()
	ctx := context.Background()
	leads, err := db.LeadList(ctx, store.LeadFilter{Site: "dent", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range leads {
		h, _ := db.HistoryByLead(ctx, l.ID)
		d, _ := db.DeliveriesByLead(ctx, l.ID)
		fmt.Fprintf(&b, "%s %s %d %s %d %d %d\n", l.ID, l.Verdict, l.Score, l.DecidedBy, len(l.Reasons), len(h), len(d))
	}
	m, err := db.TextModelGet(ctx, "dent")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "model %s %d", m.Fingerprint, m.TrainedAt.UnixMilli())
	return b.String()
}

func TestReplayCommand(t *testing.T) {
	dsn := storetest.MigratedDSN(t)
	db := storetest.Open(t, dsn)
	fast := learnedSite(t, db)
	before := snapshot(t, db)

	// The site's rules as the owner would change them: no points for a
	// fast fill.
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte(testConfig(dsn)+"    qualify: {weights: {FILL_TOO_FAST: 0}}\n"), 0o600)
	getenv := func(k string) string { return map[string]string{"DENT_KEY": dentKey}[k] }
	var out, errOut bytes.Buffer
	code := cli.Run(context.Background(), []string{"cleanads", "replay", "--config", cfg, "--site", "dent", "--days", "7"},
		getenv, nil, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got := out.String()
	for _, want := range []string{"Site dent: 41 leads received since ", "the text model trained now on 40 leads you judged (counted)",
		fmt.Sprintf("\n%s  ", fast.ID), fmt.Sprintf("  %s -> clean  score ", fast.Verdict), "  was: FILL_TOO_FAST +",
		"Of the 40 you judged: ", "Nothing was stored, queued or sent."} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !strings.Contains(got, " leads would change verdict.") || strings.Contains(got, "\n0 of 41") {
		t.Errorf("no change counted:\n%s", got)
	}
	if after := snapshot(t, db); after != before {
		t.Errorf("replay wrote to the database:\n%s\n---\n%s", before, after)
	}

	for _, bad := range [][]string{{"--days", "0"}, {"--days", "400"}, {}} {
		args := append([]string{"cleanads", "replay", "--config", cfg}, bad...)
		if len(bad) > 0 {
			args = append(args, "--site", "dent")
		}
		if code := cli.Run(context.Background(), args, getenv, nil, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d", bad, code)
		}
	}
	if code := cli.Run(context.Background(), []string{"cleanads", "replay", "--config", cfg, "--site", "nope"}, getenv, nil, &out, &errOut); code != 1 {
		t.Errorf("unknown site: exit %d", code)
	}
}

func TestScoreShowsTheTextModel(t *testing.T) {
	dsn := storetest.MigratedDSN(t)
	db := storetest.Open(t, dsn)
	learnedSite(t, db)
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte(testConfig(dsn)), 0o600)
	getenv := func(k string) string { return map[string]string{"DENT_KEY": dentKey}[k] }
	score := func() (string, string, *model.Reason) {
		t.Helper()
		var out, errOut bytes.Buffer
		lead := `{"email":"info@growth.example","phone":"+90 532 777 41 29","fill_ms":20000,` +
			`"message":"Hello, special SEO offer for your clinic website, guest post and backlink package."}`
		if code := cli.Run(context.Background(), []string{"cleanads", "score", "--config", cfg, "--site", "dent"},
			getenv, strings.NewReader(lead), &out, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		var res struct {
			Verdict   string `json:"verdict"`
			TextModel struct {
				State  string        `json:"state"`
				Judged int           `json:"judged"`
				Reason *model.Reason `json:"reason"`
			} `json:"text_model"`
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		if res.TextModel.Judged != 40 {
			t.Errorf("judged %d", res.TextModel.Judged)
		}
		return res.TextModel.State, out.String(), res.TextModel.Reason
	}
	state, out, r := score()
	if state != "live" || r == nil || r.Points <= 0 || !strings.Contains(r.Message, "leads you marked junk") {
		t.Errorf("state %q, reason %+v:\n%s", state, r, out)
	}
	// The switch: off in the config, no reason.
	os.WriteFile(cfg, []byte(testConfig(dsn)+"    qualify: {text_model: {enabled: false}}\n"), 0o600)
	if state, out, r := score(); state != "off" || r != nil {
		t.Errorf("off: state %q, reason %+v:\n%s", state, r, out)
	}
}

// TestReplayShowsTheNewJudgement: leads judged by the rules before the
// built-in model, "clean only on evidence" and the Spanish pitch phrases
// (emulated by a site whose weights turn them off) are judged again with
// today's rules: the pitch that passed is junk, the lead nothing
// understands waits, the real request stays clean.
func TestReplayShowsTheNewJudgement(t *testing.T) {
	dsn := storetest.MigratedDSN(t)
	db := storetest.Open(t, dsn)
	ctx := context.Background()
	old := model.Qualify{Weights: map[string]int{qualify.CodeModelOffer: 0, qualify.CodeModelJob: 0,
		qualify.CodeModelNonsense: 0, qualify.CodeNoEvidence: 0, qualify.CodeVendorPitch: 0}}
	site := &model.Site{ID: "dent", Name: "Dent", Settings: model.SiteSettings{Origins: []string{"https://www.istanbuldis.example"},
		Country: "TR", Qualify: old}}
	if err := db.SiteUpsert(ctx, site, time.Now()); err != nil {
		t.Fatal(err)
	}
	site, _ = db.SiteByID(ctx, "dent")
	svc := app.New(app.Options{Store: db, Now: func() time.Time { return time.Now().Add(-time.Hour) }})
	fill := int64(25000)
	ids := map[string]model.LeadID{}
	for name, in := range map[string]app.LeadInput{
		"pitch": {Phone: "+34 612 48 37 90", Message: "Hola, somos una agencia de marketing digital y conseguimos 40 pacientes nuevos al mes " +
			"para clínicas dentales como la suya. ¿Le llamamos esta semana?"},
		"unread":  {Phone: "+90 532 418 27 63", Message: "Hyvää päivää, haluaisin tietää lisää teidän palveluistanne."},
		"request": {Phone: "+90 541 736 90 12", Message: "Merhaba, alt çenemde iki implant için muayene randevusu almak istiyorum, hafta içi öğleden sonra uygunum."},
	} {
		in.FillMS = &fill
		l, _, err := svc.Submit(ctx, site, &in)
		if err != nil {
			t.Fatal(err)
		}
		if l.Verdict != model.VerdictClean {
			t.Fatalf("%s: under the old rules %s %v", name, l.Verdict, l.Reasons)
		}
		ids[name] = l.ID
	}
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte(testConfig(dsn)), 0o600)
	getenv := func(k string) string { return map[string]string{"DENT_KEY": dentKey}[k] }
	var out, errOut bytes.Buffer
	if code := cli.Run(ctx, []string{"cleanads", "replay", "--config", cfg, "--site", "dent", "--days", "2"},
		getenv, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got := out.String()
	for _, want := range []string{
		fmt.Sprintf("\n%s  ", ids["pitch"]), "clean -> junk", "now: VENDOR_PITCH +75, MODEL_OFFER +70 (Reads like an offer to the business",
		fmt.Sprintf("\n%s  ", ids["unread"]), "clean -> review", "NO_REQUEST_EVIDENCE +0 (Nothing shows a concrete request",
		"2 of 3 leads would change verdict.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, string(ids["request"])) {
		t.Errorf("the real request changed:\n%s", got)
	}
}
