package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

const visitColumns = `site_id, visitor_id, fbclid, gclid, wbraid, gbraid, ttclid, msclkid,
	utm_source, utm_medium, utm_campaign, utm_term, utm_content, at, event_id, lead_forms`

// visitSelect reads visitColumns back; the optional texts are stored NULL
// when empty (see VisitInsert).
const visitSelect = `site_id, visitor_id, COALESCE(fbclid, ''),
	COALESCE(gclid, ''), COALESCE(wbraid, ''), COALESCE(gbraid, ''), COALESCE(ttclid, ''), COALESCE(msclkid, ''),
	COALESCE(utm_source, ''), COALESCE(utm_medium, ''), COALESCE(utm_campaign, ''), COALESCE(utm_term, ''),
	COALESCE(utm_content, ''), at, event_id, lead_forms`

// VisitInsert stores a visit; its visitor must exist. Its optional texts,
// most of them empty (click ids, UTM tags), go in as NULL when empty:
// SQLite's driver copies every text argument into C memory and frees it
// after the statement, and a NULL costs it nothing (migration 0200).
// The site's counters of the visit's day are added to in the same call
// (one upsert), so call it in a transaction, and last in it: on
// PostgreSQL the counter's row stays locked until the commit.
func (q Q) VisitInsert(ctx context.Context, v *model.Visit) error {
	var forms any
	if v.LeadForms != nil {
		forms = *v.LeadForms
	}
	_, err := q.exec(ctx, `/* Store.VisitInsert */ INSERT INTO visits (`+visitColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(v.SiteID), v.VisitorID, orNull(v.FBClid), orNull(v.GClid),
		orNull(v.WBraid), orNull(v.GBraid), orNull(v.TTClid), orNull(v.MSClkid), orNull(v.Source), orNull(v.Medium),
		orNull(v.Campaign), orNull(v.Term), orNull(v.Content), v.At.UnixMilli(), v.EventID, forms)
	if isUniqueViolation(err) {
		return fmt.Errorf("visit with event_id %s: %w", v.EventID, model.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: insert visit: %w", err)
	}
	return q.visitCount(ctx, v)
}

// The statements that count a visit, with its counters' names written in:
// SQLite's driver copies every text argument into C memory, so a visit
// binds its site's id alone (once per counter).
const (
	visitCountSQL = `/* Store.VisitInsert */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
		VALUES (?, ?, 'visits', '', ?, 1)
		ON CONFLICT (site_id, day, name, dim, shard) DO UPDATE SET n = site_counters.n + excluded.n`
	formVisitCountSQL = `/* Store.VisitInsert */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
		VALUES (?, ?, 'form_visits', '', ?, 1), (?, ?, 'visits', '', ?, 1)
		ON CONFLICT (site_id, day, name, dim, shard) DO UPDATE SET n = site_counters.n + excluded.n`
)

// visitCount adds a visit to its site's counters of its day (visits, and
// form_visits when t.js found a lead form on the page): the one upsert a
// visit costs (counterTally.upsert writes it with the statements above).
func (q Q) visitCount(ctx context.Context, v *model.Visit) error {
	day := model.Day(v.At)
	if v.LeadForms != nil && *v.LeadForms > 0 {
		return q.CountersAdd(ctx, v.SiteID, day, v.EventID, model.Count{Name: model.CounterVisits, N: 1},
			model.Count{Name: model.CounterFormVisits, N: 1})
	}
	return q.CountersAdd(ctx, v.SiteID, day, v.EventID, model.Count{Name: model.CounterVisits, N: 1})
}

// VisitByEventID returns the site's visit whose PageView had the event_id.
func (q Q) VisitByEventID(ctx context.Context, site model.SiteID, eventID string) (*model.Visit, error) {
	row := q.queryRow(ctx, `/* Store.VisitByEventID */ SELECT `+visitSelect+` FROM visits WHERE site_id = ? AND event_id = ?`,
		string(site), eventID)
	v, err := scanVisit(row)
	if err != nil {
		return nil, notFound(err, "visit with event_id "+eventID)
	}
	return v, nil
}

// VisitsByVisitor returns a visitor's visits, oldest first.
func (q Q) VisitsByVisitor(ctx context.Context, site model.SiteID, visitorID string) ([]*model.Visit, error) {
	rows, err := q.query(ctx, `/* Store.VisitsByVisitor */ SELECT `+visitSelect+` FROM visits
		WHERE site_id = ? AND visitor_id = ? ORDER BY at, event_id`, string(site), visitorID)
	return scanAll(rows, err, "visits", scanVisit)
}

// VisitPageView returns the PageView a visit caused (named by its
// event_id): queued, or its outbox row. One sent from the queue is gone.
func (q Q) VisitPageView(ctx context.Context, site model.SiteID, eventID string) (*model.Delivery, error) {
	if d, err := q.queuedPageView(ctx, site, eventID); err == nil || !errors.Is(err, model.ErrNotFound) {
		return d, err
	}
	row := q.queryRow(ctx, `/* Store.VisitPageView */ SELECT `+deliveryJoin+` FROM delivery_events e
		JOIN delivery_state s ON s.id = e.id
		WHERE e.site_id = ? AND s.kind = ? AND e.event_id = ?`, string(site), model.KindPageView, eventID)
	d, err := scanDelivery(row)
	if err != nil {
		return nil, notFound(err, "PageView "+eventID)
	}
	return d, nil
}

func scanVisit(r scanner) (*model.Visit, error) {
	var (
		v     model.Visit
		site  string
		at    int64
		forms sql.NullInt64
	)
	if err := r.Scan(&site, &v.VisitorID, &v.FBClid, &v.GClid, &v.WBraid, &v.GBraid,
		&v.TTClid, &v.MSClkid, &v.Source, &v.Medium, &v.Campaign, &v.Term, &v.Content,
		&at, &v.EventID, &forms); err != nil {
		return nil, err
	}
	if forms.Valid {
		n := int(forms.Int64)
		v.LeadForms = &n
	}
	v.SiteID = model.SiteID(site)
	v.At = time.UnixMilli(at).UTC()
	return &v, nil
}

// orNull is s, or NULL for the empty string, for columns that store
// nothing as NULL.
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}
