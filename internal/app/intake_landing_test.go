package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// A web lead's campaign report counters name the campaign of its landing
// visit, which intake reads with its look-up: the last tagged visit of the
// visitor its visitor_id names, or else of the visitor its form token
// names; a lead whose visitor has no tagged visit names none. A recount
// finds the same counters.
func TestIntakeCountsTheLandingVisit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	visit := func(visitor, url string) *app.CollectResult {
		t.Helper()
		res, err := f.svc.Collect(ctx, f.site, &app.CollectInput{VisitorID: visitor, PageURL: url,
			ClientIP: "85.105.1.2", UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"})
		if err != nil || res.Visitor == nil {
			t.Fatalf("collect: %v %+v", err, res)
		}
		return res
	}
	a := visit("", "https://www.istanbuldis.example/?utm_source=facebook&utm_campaign=Spring&fbclid=fbA")
	f.clk.Add(time.Minute)
	visit(a.Visitor.ID, "https://www.istanbuldis.example/implant") // untagged: not the landing
	b := visit("", "https://www.istanbuldis.example/?utm_source=google&utm_campaign=Autumn&gclid=gB")
	c := visit("", "https://www.istanbuldis.example/")
	f.clk.Add(time.Minute)

	byVisitor := realLead()
	byVisitor.VisitorID, byVisitor.FormToken = a.Visitor.ID, a.FormToken
	byToken := greyLead()
	byToken.FormToken = b.FormToken
	untagged := realLead()
	untagged.Email, untagged.Phone, untagged.VisitorID = "zeynep.kaya@gmail.com", "0541 555 12 34", c.Visitor.ID
	for _, in := range []*app.LeadInput{byVisitor, byToken, untagged} {
		f.submit(in)
	}

	day := model.Day(f.clk.Now())
	read := func() (map[string]int64, model.Counters) {
		t.Helper()
		cs, err := f.db.ReportCounters(ctx, f.site.ID, day, day)
		if err != nil {
			t.Fatal(err)
		}
		campaigns := map[string]int64{}
		for _, c := range cs {
			if _, a, ok := store.ParseReportDim(c.Dim); ok && c.Name == model.CounterReportVerdicts {
				campaigns[a.Campaign.Name] += c.N
			}
		}
		return campaigns, cs
	}
	campaigns, before := read()
	if got := fmt.Sprint(campaigns); got != "map[:1 Autumn:1 Spring:1]" {
		t.Errorf("leads by campaign %s, want map[:1 Autumn:1 Spring:1]", got)
	}
	if err := f.db.InTx(ctx, func(tx *store.Tx) error { return tx.CountersRebuild(ctx, f.site.ID, day, day) }); err != nil {
		t.Fatal(err)
	}
	if _, after := read(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("counters at intake:\n%v\nrecounted:\n%v", before, after)
	}
}
