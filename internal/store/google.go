package store

import (
	"context"
	"errors"

	"github.com/cleanads/cleanads/internal/model"
)

// DestinationPauseReason returns why a share is paused, or "" when it is
// not: the google handler asks it before each share it sends.
func (q Q) DestinationPauseReason(ctx context.Context, sh model.Share) (string, error) {
	p, err := q.DestinationPauseOf(ctx, sh)
	if errors.Is(err, model.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return p.Reason, nil
}
