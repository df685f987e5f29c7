package app_test

import (
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
)

// StageTimeLimit is the longest window of the platforms a site has on,
// less the hour kept for delivery.
func TestStageTimeLimit(t *testing.T) {
	meta := &model.Site{}
	google := &model.Site{Settings: model.SiteSettings{Google: &model.GoogleSettings{OperatingAccountID: "1", Stages: map[string]string{"won": "123"}}}}
	qualifiedOnly := &model.Site{Settings: model.SiteSettings{Google: &model.GoogleSettings{OperatingAccountID: "1", QualifiedConversionAction: "9"}}}
	svc := app.New(app.Options{})
	for _, c := range []struct {
		site *model.Site
		want time.Duration
	}{
		{meta, 7*24*time.Hour - time.Hour},
		{google, 90*24*time.Hour - time.Hour},
		{qualifiedOnly, 90*24*time.Hour - time.Hour},
	} {
		if got := svc.StageTimeLimit(c.site); got != c.want {
			t.Errorf("%+v: %s, want %s", c.site.Settings.Google, got, c.want)
		}
	}
}
