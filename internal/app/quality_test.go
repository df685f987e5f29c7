package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/testkit"
)

// TestMetaQuality reads Meta's figures of a site's dataset through the
// Graph client, keeps them a while, reads again for a new token, says why
// it does not read (no client, no token, dry run) and gives Meta's refusal
// with its message.
func TestMetaQuality(t *testing.T) {
	g := graphtest.New(t)
	g.SetDatasetQuality("111", graphtest.QualityEvent{EventName: "Lead", Score: 7.5,
		Keys: map[string]float64{"email": 90}, EventIDShare: 100})
	clk := testkit.NewClock(time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC))
	svc := app.New(app.Options{Now: clk.Now, Graph: capi.NewClient(capi.ClientOptions{BaseURL: g.URL})})
	ctx := context.Background()
	site := testkit.Site(testkit.WithMeta("111", model.ModeLive), func(s *model.Site) { s.AccessToken = graphtest.Token })

	q := svc.MetaQuality(ctx, site)
	if q.Reason != "" || q.Quality == nil || len(q.Quality.Web) != 1 || q.Quality.Web[0].EventName != "Lead" {
		t.Fatalf("read: %+v", q)
	}
	clk.Add(5 * time.Minute)
	if q = svc.MetaQuality(ctx, site); q.Quality == nil || g.QualityReads() != 1 {
		t.Errorf("within ten minutes Meta was read again (%d reads): %+v", g.QualityReads(), q)
	}
	clk.Add(6 * time.Minute)
	if q = svc.MetaQuality(ctx, site); q.Quality == nil || g.QualityReads() != 2 {
		t.Errorf("after ten minutes: %d reads, %+v", g.QualityReads(), q)
	}

	refused := *site
	refused.AccessToken = "expired-token"
	q = svc.MetaQuality(ctx, &refused)
	var ae *capi.APIError
	if q.Reason != app.QualityError || !errors.As(q.Err, &ae) || ae.Code != 190 || ae.Message == "" {
		t.Errorf("a refused token: %+v", q)
	}

	for name, tc := range map[string]struct {
		svc  *app.Service
		site *model.Site
		want string
	}{
		"no client": {app.New(app.Options{Now: clk.Now}), site, app.QualityNoGraph},
		"no token":  {svc, testkit.Site(testkit.WithMeta("111", model.ModeLive)), app.QualityNoToken},
		"no pixel":  {svc, testkit.Site(func(s *model.Site) { s.AccessToken = graphtest.Token }), app.QualityNoPixel},
		"dry run": {svc, testkit.Site(testkit.WithMeta("111", model.ModeDryRun), func(s *model.Site) { s.AccessToken = graphtest.Token }),
			app.QualityDryRun},
	} {
		if q := tc.svc.MetaQuality(ctx, tc.site); q.Reason != tc.want || q.Quality != nil {
			t.Errorf("%s: %+v, want reason %s", name, q, tc.want)
		}
	}
	if g.QualityReads() != 2 {
		t.Errorf("reads = %d, want 2: nothing is asked of Meta when it cannot answer", g.QualityReads())
	}
}
