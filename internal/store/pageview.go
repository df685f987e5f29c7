package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// The PageView queue. A PageView is sent once and nobody looks at it
// again, so it does not wait in deliveries (a row with seven B-trees,
// rewritten by the claim and again by the outcome) but in pageview_queue:
// a narrow table keyed by (site_id, event_id), so in time order (the ids
// are time first), with one insert at intake and one delete once Meta took
// it. Any other outcome (retry, dead, expired, paused, dry_run) moves the
// event into deliveries, where those already work. A site's queue is
// leased as a whole, so one node at a time sends it; DeliveryClaim and
// DeliveryRecord handle queued PageViews alongside outbox rows, marked
// model.Delivery.Queued.

// PageViewEnqueue puts a PageView (d.Kind is KindPageView) in the queue. An
// event already there is left alone and inserted reports false.
func (q Q) PageViewEnqueue(ctx context.Context, d *model.Delivery) (inserted bool, err error) {
	res, err := q.exec(ctx, `/* Store.PageViewEnqueue */ INSERT INTO pageview_queue (site_id, event_id, pixel_id, payload, created_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (site_id, event_id) DO NOTHING`,
		string(d.SiteID), d.EventID, d.PixelID, string(d.Payload), d.CreatedAt.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("store: queue PageView: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// queuedPageView returns a queued PageView as a pending delivery.
func (q Q) queuedPageView(ctx context.Context, site model.SiteID, eventID string) (*model.Delivery, error) {
	d, err := scanQueued(q.queryRow(ctx, `/* Store.VisitPageView */ SELECT site_id, event_id, pixel_id, payload, created_at
		FROM pageview_queue WHERE site_id = ? AND event_id = ?`, string(site), eventID))
	if err != nil {
		return nil, notFound(err, "PageView "+eventID)
	}
	return d, nil
}

func scanQueued(r scanner) (*model.Delivery, error) {
	var (
		site, payload string
		created       int64
		d             = model.Delivery{Kind: model.KindPageView, EventName: model.PageViewEvent, State: model.DeliveryPending, Queued: true}
	)
	if err := r.Scan(&site, &d.EventID, &d.PixelID, &payload, &created); err != nil {
		return nil, err
	}
	d.SiteID, d.Payload = model.SiteID(site), []byte(payload)
	d.CreatedAt = time.UnixMilli(created).UTC()
	d.UpdatedAt, d.NextAt, d.DeadlineAt = d.CreatedAt, d.CreatedAt, d.CreatedAt.Add(model.MaxEventAge)
	return &d, nil
}

// PageViewForget deletes a site's queued PageViews by event id (a visitor
// being erased), and returns how many.
func (q Q) PageViewForget(ctx context.Context, site model.SiteID, eventIDs []string) (int, error) {
	n := 0
	for i := 0; i < len(eventIDs); i += writeSlice {
		part := eventIDs[i:min(i+writeSlice, len(eventIDs))]
		args := []any{string(site)}
		for _, id := range part {
			args = append(args, id)
		}
		res, err := q.exec(ctx, `/* Store.PageViewForget */ DELETE FROM pageview_queue WHERE site_id = ? AND event_id IN `+sliceIDs,
			padSlice(args, len(part))...)
		if err != nil {
			return n, fmt.Errorf("store: forget queued PageViews: %w", err)
		}
		k, _ := res.RowsAffected()
		n += int(k)
	}
	return n, nil
}

// PageViewStats returns how many of a site's PageViews (every site's when
// site is empty) wait in the queue, and how many went from it to Meta on
// the UTC days since the given time's.
func (q Q) PageViewStats(ctx context.Context, site model.SiteID, since time.Time) (queued, sent int, err error) {
	err = q.queryRow(ctx, `/* Store.PageViewStats */ SELECT
		(SELECT COUNT(*) FROM pageview_queue WHERE site_id = ? OR ? = ''),
		(SELECT COALESCE(SUM(sent), 0) FROM pageview_counts WHERE (site_id = ? OR ? = '') AND day >= ?)`,
		string(site), string(site), string(site), string(site), day(since)).Scan(&queued, &sent)
	if err != nil {
		return 0, 0, fmt.Errorf("store: PageView counts: %w", err)
	}
	return queued, sent, nil
}

// day numbers UTC days since 1970.
func day(t time.Time) int64 { return t.UnixMilli() / (24 * time.Hour).Milliseconds() }

// claimPageViews leases the queues of the sites with PageViews waiting
// (leaving out skip, and sites whose queue another node holds) and returns
// up to limit of their PageViews, each site's oldest first. A site's lease
// runs through the last PageView claimed (see recordPageViews); one that
// ran out (a node died) lets another node take over.
func (db *DB) claimPageViews(ctx context.Context, owner string, now, leaseUntil time.Time, limit int, skip []model.SiteID) ([]*model.Delivery, error) {
	var sites []model.SiteID
	err := db.eachRow(ctx, func(r *sql.Rows) error {
		var id string
		if err := r.Scan(&id); err != nil {
			return err
		}
		sites = append(sites, model.SiteID(id))
		return nil
	}, `/* Store.DeliveryClaim */ SELECT s.id FROM sites s
		WHERE EXISTS (SELECT 1 FROM pageview_queue q WHERE q.site_id = s.id)
		AND NOT EXISTS (SELECT 1 FROM pageview_leases l WHERE l.site_id = s.id AND l.owner <> ? AND l.until > ?)
		ORDER BY s.id`, owner, now.UnixMilli())
	if err != nil {
		return nil, err
	}
	var list []*model.Delivery
	for _, site := range sites {
		if len(list) >= limit {
			break
		}
		if slices.Contains(skip, site) {
			continue
		}
		lease := func(tx *Tx, last *model.Delivery) (bool, error) {
			return tx.pageViewLease(ctx, site, owner, now, leaseUntil, last.EventID)
		}
		got, err := db.claimSite(ctx, limit-len(list), lease, func(tx *Tx, n int, after *model.Delivery) ([]*model.Delivery, error) {
			cursor := ""
			if after != nil {
				cursor = after.EventID
			}
			rows, err := tx.query(ctx, `/* Store.DeliveryClaim */ SELECT site_id, event_id, pixel_id, payload, created_at
				FROM pageview_queue WHERE site_id = ? AND event_id > ? ORDER BY event_id LIMIT ?`, string(site), cursor, n)
			return scanAll(rows, err, "claim PageViews", scanQueued)
		})
		list = append(list, got...)
		if err != nil {
			if len(list) > 0 {
				return list, nil
			}
			return nil, err
		}
	}
	return list, nil
}

// pageViewLease takes or renews owner's lease on a site's queue through
// the given event (the last claimed), and reports false when another node
// holds it.
func (q Q) pageViewLease(ctx context.Context, site model.SiteID, owner string, now, until time.Time, through string) (bool, error) {
	res, err := q.exec(ctx, `/* Store.DeliveryClaim */ INSERT INTO pageview_leases (site_id, owner, until, through) VALUES (?, ?, ?, ?)
		ON CONFLICT (site_id) DO UPDATE SET owner = excluded.owner, until = excluded.until, through = excluded.through
		WHERE pageview_leases.owner = excluded.owner OR pageview_leases.until <= ?`,
		string(site), owner, until.UnixMilli(), through, now.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("store: lease PageView queue of %s: %w", site, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// recordPageViews settles owner's claimed PageViews: the sent ones leave
// the queue and are counted; one that was given back unchanged (pending)
// stays; any other outcome moves the event into deliveries with it. Slices
// of one site and outcome, as many to a transaction as run before others
// wait. The outcome of the last PageView a claim took ends owner's lease on
// the site's queue, so another node (or this one after a restart) can
// claim it at once.
func (db *DB) recordPageViews(ctx context.Context, owner string, ds []*model.Delivery, now time.Time) error {
	type key struct {
		site model.SiteID
		sent bool
	}
	type slice struct {
		key
		ds []*model.Delivery
	}
	var work []slice
	groups := map[key][]*model.Delivery{}
	var order []key
	bySite := map[model.SiteID][]*model.Delivery{}
	for _, d := range ds {
		bySite[d.SiteID] = append(bySite[d.SiteID], d)
		if d.State == model.DeliveryPending {
			continue
		}
		k := key{d.SiteID, d.State == model.DeliverySent}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], d)
	}
	for _, k := range order {
		g := groups[k]
		for i := 0; i < len(g); i += writeSlice {
			work = append(work, slice{k, g[i:min(i+writeSlice, len(g))]})
		}
	}
	if _, err := db.inSlices(ctx, len(work), func(tx *Tx, i int) error {
		return tx.settlePageViews(ctx, work[i].site, work[i].sent, work[i].ds, now)
	}); err != nil {
		return err
	}
	return db.inTxRetry(ctx, func(tx *Tx) error {
		for site, ds := range bySite {
			if err := tx.releasePageViewLease(ctx, site, owner, ds); err != nil {
				return err
			}
		}
		return nil
	})
}

// releasePageViewLease ends owner's lease on a site's queue when ds holds
// the last PageView it claimed.
func (q Q) releasePageViewLease(ctx context.Context, site model.SiteID, owner string, ds []*model.Delivery) error {
	var through string
	err := q.queryRow(ctx, `/* Store.DeliveryRecord */ SELECT through FROM pageview_leases WHERE site_id = ? AND owner = ?`,
		string(site), owner).Scan(&through)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !slices.ContainsFunc(ds, func(d *model.Delivery) bool { return d.EventID == through }) {
		return nil
	}
	if err == nil {
		_, err = q.exec(ctx, `/* Store.DeliveryRecord */ DELETE FROM pageview_leases WHERE site_id = ? AND owner = ?`, string(site), owner)
	}
	if err != nil {
		return fmt.Errorf("store: end PageView lease of %s: %w", site, err)
	}
	return nil
}

// settlePageViews takes a slice of one site's settled PageViews out of the
// queue; the sent ones are counted, the others go into deliveries with
// their outcome. One erased meanwhile (no longer queued) is left out.
func (q Q) settlePageViews(ctx context.Context, site model.SiteID, sent bool, ds []*model.Delivery, now time.Time) error {
	args := []any{string(site)}
	for _, d := range ds {
		args = append(args, d.EventID)
	}
	rows, err := q.query(ctx, `/* Store.DeliveryRecord */ DELETE FROM pageview_queue WHERE site_id = ? AND event_id IN `+sliceIDs+`
		RETURNING event_id`, padSlice(args, len(ds))...)
	taken, err := scanAll(rows, err, "record PageViews", scanText)
	if err != nil {
		return err
	}
	if sent {
		if len(taken) == 0 {
			return nil
		}
		t := q.tally
		if t == nil {
			t = &counterTally{}
		}
		t.addPageViews(site, day(now), int64(len(taken)))
		if q.tally == nil {
			return t.flush(ctx, q)
		}
		return nil
	}
	for _, d := range ds {
		if !slices.Contains(taken, d.EventID) {
			continue
		}
		row := *d
		row.ID, row.Queued, row.UpdatedAt = model.NewID("dl_", now), false, now
		if _, err := q.DeliveryInsert(ctx, &row); err != nil {
			return err
		}
	}
	return nil
}
