package app_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// TestRetentionKeepsTheCounts: the dashboard's, the readiness page's and
// the campaign report's counts are of what happened. Retention clearing old
// leads' details, deleting old visits and shrinking old events, and a
// person forgotten, change none of them; no counter names the person; and
// a recount of the days whose visits are all still kept gives them again.
func TestRetentionKeepsTheCounts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.withStages()
	ctx := context.Background()
	first := model.Day(f.clk.Now())
	rng := rand.New(rand.NewPCG(33, 1))
	yes := true
	var leads []*model.Lead
	for day := range 80 { // 400 days, every fifth
		for k := range 1 + rng.IntN(3) {
			page := "https://www.istanbuldis.example/implant"
			if rng.IntN(3) == 0 {
				page += fmt.Sprintf("?fbclid=IwAR_%d_%d&utm_source=facebook&utm_campaign=implant-%d", day, k, rng.IntN(3))
			}
			v, err := f.svc.Collect(ctx, f.site, &app.CollectInput{PageURL: page, Consent: &yes, ClientIP: "85.105.1.2",
				UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"})
			if err != nil {
				t.Fatal(err)
			}
			if rng.IntN(2) == 0 {
				continue
			}
			in := realLead()
			in.VisitorID, in.FormToken = v.Visitor.ID, v.FormToken
			in.Email = fmt.Sprintf("kisi%d.%d@gmail.com", day, k)
			in.Phone = fmt.Sprintf("0532 4%02d %02d %02d", day, k, 10+rng.IntN(80))
			switch rng.IntN(4) {
			case 0:
				in.Honeypot = "http://spam.example"
			case 1:
				in.Message = "fiyat?"
			}
			l := f.submit(in)
			leads = append(leads, l)
			switch {
			case l.Verdict == model.VerdictReview && rng.IntN(2) == 0:
				f.evidence(l.ID, qualify.Evidence{Type: qualify.EvidenceCustomer})
			case l.Verdict == model.VerdictClean && rng.IntN(2) == 0:
				f.mustStage(l.ID, app.LeadEventInput{Stage: "won", Value: f64(float64(1000 + rng.IntN(9000)))})
			}
		}
		f.clk.Add(5 * 24 * time.Hour)
	}
	last := model.Day(f.clk.Now())
	counts := func() model.Counters {
		t.Helper()
		cs, err := f.db.Counters(ctx, f.site.ID, first, last)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := f.db.ReportCounters(ctx, f.site.ID, first, last)
		if err != nil {
			t.Fatal(err)
		}
		return append(cs, rs...)
	}
	before := counts()
	for _, name := range []string{model.CounterVisits, model.CounterLeads, model.CounterStages} {
		if before.Sum(name, "*", first, last) == 0 {
			t.Fatalf("no %s counted: the test would prove nothing", name)
		}
	}

	res, err := f.svc.Retain(ctx, app.RetentionPolicy{LeadDays: 365, VisitDays: 90, EventDays: 30})
	if err != nil {
		t.Fatal(err)
	}
	if res.Leads == 0 || res.Visits == 0 || res.Shrunk == 0 {
		t.Fatalf("retention removed too little to prove anything: %+v", res)
	}
	if after := counts(); !slices.Equal(before, after) {
		t.Errorf("retention changed the counts:\n%s", counterDiff(before, after))
	}

	// The days whose visits are all kept, recounted, give the same counts.
	kept := last - 89
	if err := f.db.InTx(ctx, func(tx *store.Tx) error { return tx.CountersRebuild(ctx, f.site.ID, kept, last) }); err != nil {
		t.Fatal(err)
	}
	if rebuilt := counts(); !slices.Equal(before, rebuilt) {
		t.Errorf("a recount of the kept days differs:\n%s", counterDiff(before, rebuilt))
	}

	// A person forgotten: their lead and visits go, their counts stay, and
	// no counter names them.
	gone := leads[len(leads)-1]
	if res, err := f.svc.Forget(ctx, app.ForgetInput{Email: gone.Email, Site: f.site.ID}); err != nil || res.Leads != 1 || res.Visits == 0 {
		t.Fatalf("forget: %+v %v", res, err)
	}
	after := counts()
	if !slices.Equal(before, after) {
		t.Errorf("erasure changed the counts:\n%s", counterDiff(before, after))
	}
	for _, c := range after {
		for _, p := range []string{gone.Email, gone.Phone, gone.PhoneKey, string(gone.ID), string(gone.VisitorID), "kisi"} {
			if p != "" && strings.Contains(c.Dim, p) {
				t.Errorf("a counter names the person: %+v", c)
			}
		}
	}
}

// counterDiff lists the counters that differ between a and b.
func counterDiff(a, b model.Counters) string {
	type key struct {
		day       int64
		name, dim string
	}
	m := map[key][2]int64{}
	for _, c := range a {
		v := m[key{c.Day, c.Name, c.Dim}]
		v[0] += c.N
		m[key{c.Day, c.Name, c.Dim}] = v
	}
	for _, c := range b {
		v := m[key{c.Day, c.Name, c.Dim}]
		v[1] += c.N
		m[key{c.Day, c.Name, c.Dim}] = v
	}
	var out []string
	for k, v := range m {
		if v[0] != v[1] {
			out = append(out, fmt.Sprintf("day %d %s %q: %d -> %d", k.day, k.name, k.dim, v[0], v[1]))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}
