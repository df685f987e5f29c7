package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// DestinationPause is a destination's pause of a site's rows: why, and
// since when.
type DestinationPause struct {
	Share  model.Share
	Reason string
	At     time.Time
}

// DestinationPauseSet pauses a share (a destination other than Meta's,
// whose pause is the site's) with the reason in plain words; the runner
// parks the share's rows until DestinationResume.
func (q Q) DestinationPauseSet(ctx context.Context, sh model.Share, reason string, now time.Time) error {
	_, err := q.exec(ctx, `/* Store.DestinationPauseSet */ INSERT INTO destination_pauses (site_id, destination, reason, paused_at)
		VALUES (?, ?, ?, ?) ON CONFLICT (site_id, destination) DO UPDATE SET reason = excluded.reason`,
		string(sh.Site), sh.Destination, reason, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: pause %s for site %s: %w", sh.Destination, sh.Site, err)
	}
	return nil
}

// DestinationResume lifts a share's pause; the next sweep makes its parked
// rows due again.
func (q Q) DestinationResume(ctx context.Context, sh model.Share) error {
	_, err := q.exec(ctx, `/* Store.DestinationResume */ DELETE FROM destination_pauses WHERE site_id = ? AND destination = ?`,
		string(sh.Site), sh.Destination)
	if err != nil {
		return fmt.Errorf("store: resume %s for site %s: %w", sh.Destination, sh.Site, err)
	}
	return nil
}

// DestinationPauseOf returns a share's pause, or model.ErrNotFound when it
// is not paused.
func (q Q) DestinationPauseOf(ctx context.Context, sh model.Share) (*DestinationPause, error) {
	p := DestinationPause{Share: sh}
	var at int64
	err := q.queryRow(ctx, `/* Store.DestinationPauseOf */ SELECT reason, paused_at FROM destination_pauses
		WHERE site_id = ? AND destination = ?`, string(sh.Site), sh.Destination).Scan(&p.Reason, &at)
	if err != nil {
		return nil, notFound(err, "pause of "+sh.Destination+" for site "+string(sh.Site))
	}
	p.At = time.UnixMilli(at).UTC()
	return &p, nil
}

// DestinationPauses returns every destination pause of a site (every
// site's when site is empty), by site and destination.
func (q Q) DestinationPauses(ctx context.Context, site model.SiteID) ([]DestinationPause, error) {
	var list []DestinationPause
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var p DestinationPause
		var id string
		var at int64
		if err := r.Scan(&id, &p.Share.Destination, &p.Reason, &at); err != nil {
			return err
		}
		p.Share.Site, p.At = model.SiteID(id), time.UnixMilli(at).UTC()
		list = append(list, p)
		return nil
	}, `/* Store.DestinationPauses */ SELECT site_id, destination, reason, paused_at FROM destination_pauses
		WHERE site_id = ? OR ? = '' ORDER BY site_id, destination`, string(site), string(site))
	if err != nil {
		return nil, fmt.Errorf("store: destination pauses: %w", err)
	}
	return list, nil
}
