package platform

import (
	"fmt"
	"time"

	"github.com/nyaruka/phonenumbers"

	"github.com/cleanads/cleanads/internal/model"
)

// SampleLead is a made-up lead of the site for a platform's SendTest:
// realistic (an e-mail on example.com, a valid mobile number of the
// site's country in national form, a browser's user agent, a page on the
// site), so it is normalised and hashed the way a visitor's would be. It
// is never stored.
func SampleLead(site *model.Site, now time.Time) *model.Lead {
	return &model.Lead{
		ID:          model.LeadID(model.NewID("ld_test_", now)),
		SiteID:      site.ID,
		EventID:     "cleanads-test-" + model.NewUUID(),
		Email:       "cleanads.test@example.com",
		Phone:       samplePhone(site.Settings.Country),
		FirstName:   "Test",
		LastName:    "Lead",
		ExternalID:  "cleanads-test",
		PageURL:     samplePage(site),
		FBP:         fmt.Sprintf("fb.1.%d.%d", now.UnixMilli(), now.UnixNano()%1e10),
		ClientIP:    "203.0.113.7",
		UserAgent:   "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36",
		SubmittedAt: now,
	}
}

func samplePhone(country string) string {
	if n := phonenumbers.GetExampleNumberForType(country, phonenumbers.MOBILE); n != nil {
		return phonenumbers.Format(n, phonenumbers.NATIONAL)
	}
	return "+1 202 555 0143"
}

func samplePage(site *model.Site) string {
	if len(site.Settings.Origins) > 0 {
		return site.Settings.Origins[0] + "/cleanads-test"
	}
	return "https://www.example.com/cleanads-test"
}
