package tiktok_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/tiktok/tiktoktest"
)

// BenchmarkBuild is one website lead's event: a phone parse and three
// SHA-256.
func BenchmarkBuild(b *testing.B) {
	srv := tiktoktest.New(b)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	site := tiktokSite(b, full())
	l := webLead("L1")
	in := platform.Input{Site: site, Lead: l, Kind: model.KindLead, Clicks: model.ClickIDs{TTClid: "E.C.P.x"},
		Cookies: map[string]string{"_ttp": "cookie"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Build(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendBatch is one full request of MaxBatch web events to the
// local stand-in (which checks every event): the cost of a batch here and
// there, without TikTok's own latency.
func BenchmarkSendBatch(b *testing.B) {
	srv := tiktoktest.New(b)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	site := tiktokSite(b, full())
	rows := make([]*model.Delivery, p.BatchSize())
	for i := range rows {
		l := webLead(model.LeadID(fmt.Sprintf("L%04d", i)))
		rows[i] = row(site, l, model.KindLead, build(b, p, platform.Input{Site: site, Lead: l, Kind: model.KindLead}))
	}
	b.ReportAllocs()
	for b.Loop() {
		out, err := p.Send(context.Background(), site, rows)
		if err != nil || !out[len(out)-1].Accepted {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(rows)*b.N)/b.Elapsed().Seconds(), "events/s")
}
