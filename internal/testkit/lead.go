package testkit

import (
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// Lead returns lead id of site, submitted and received at at, with event
// id "ev-" + id, changed by each edit in turn: the row a store test
// inserts. It says nothing of the person; edits add what the test is about.
func Lead(site model.SiteID, id model.LeadID, at time.Time, edits ...func(*model.Lead)) *model.Lead {
	l := &model.Lead{ID: id, SiteID: site, EventID: "ev-" + string(id), SubmittedAt: at, ReceivedAt: at}
	for _, edit := range edits {
		edit(l)
	}
	return l
}
