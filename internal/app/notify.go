package app

import (
	"context"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// queueNotify queues, in the caller's transaction, the owners' notifications
// of the verdict a lead has just been given (a new lead, or a new verdict:
// evidence, the owner, a CRM stage, a new attempt): the users whose rules
// for the site ask for it are told once per lead and verdict, by the
// notify runner, after the commit. Nothing is queued for a change that
// rolls back, and intake never waits on a mail server.
func (s *Service) queueNotify(ctx context.Context, tx *store.Tx, lead *model.Lead, now time.Time) error {
	return tx.NotifyQueue(ctx, lead.SiteID, lead.ID, lead.Verdict, now)
}
