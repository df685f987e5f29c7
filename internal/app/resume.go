package app

import (
	"context"

	"github.com/cleanads/cleanads/internal/model"
)

// Resume lifts a site's pause of one platform after the owner fixed what
// the platform refused in its own console (Google's customer data terms,
// enhanced conversions for leads, the account's access), where no setting
// here changes: the parked rows are due at once and the runner is woken.
// A pause that still stands at the platform comes back after one request.
// It returns how many parked rows (of every platform now free) are due.
func (s *Service) Resume(ctx context.Context, site model.SiteID, platform string) (int, error) {
	sh := model.Share{Site: site, Destination: platform}
	if _, err := s.db.DestinationPauseOf(ctx, sh); err != nil {
		return 0, err
	}
	if err := s.db.DestinationResume(ctx, sh); err != nil {
		return 0, err
	}
	_, resumed, err := s.db.DeliverySweep(ctx, s.now())
	if err != nil {
		return 0, err
	}
	s.wake()
	return resumed, nil
}

// ResumeGoogle is Resume for Google Ads.
func (s *Service) ResumeGoogle(ctx context.Context, site model.SiteID) (int, error) {
	return s.Resume(ctx, site, model.DestinationGoogle)
}
