package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// hookContext binds an endpoint's sealed secret to its site and id: a
// value copied to another row does not open.
func hookContext(site model.SiteID, id string) string {
	return "webhook secret:" + string(site) + ":" + id
}

const hookColumns = `id, site_id, url, events, sealed, created_at`

// WebhookEndpointInsert stores a site's new outgoing webhook, its secret
// sealed with secret_key.
func (q Q) WebhookEndpointInsert(ctx context.Context, e *model.WebhookEndpoint) error {
	if q.box == nil {
		return fmt.Errorf("store: site %s: no key to encrypt the webhook's secret: set secret_key (or, on SQLite, let cleanads keep a key file)", e.SiteID)
	}
	if _, err := q.exec(ctx, `/* Store.WebhookEndpointInsert */ INSERT INTO webhook_endpoints (`+hookColumns+`)
		VALUES (?, ?, ?, ?, ?, ?)`, e.ID, string(e.SiteID), e.URL, strings.Join(e.Events, ","),
		q.box.Seal(hookContext(e.SiteID, e.ID), e.Secret), e.CreatedAt.UnixMilli()); err != nil {
		return fmt.Errorf("store: site %s webhook: %w", e.SiteID, err)
	}
	return nil
}

// WebhookEndpointDelete removes a site's webhook; its rows not sent yet
// are ended by the runner, which finds it gone.
func (q Q) WebhookEndpointDelete(ctx context.Context, site model.SiteID, id string) error {
	res, err := q.exec(ctx, `/* Store.WebhookEndpointDelete */ DELETE FROM webhook_endpoints WHERE site_id = ? AND id = ?`,
		string(site), id)
	if err != nil {
		return fmt.Errorf("store: delete webhook %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("webhook %s: %w", id, model.ErrNotFound)
	}
	return nil
}

// WebhookEndpoints returns a site's webhooks, oldest first, their secrets
// in clear when withSecret (a secret that no longer opens fails then).
func (q Q) WebhookEndpoints(ctx context.Context, site model.SiteID, withSecret bool) ([]*model.WebhookEndpoint, error) {
	var out []*model.WebhookEndpoint
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		e, err := q.scanHook(r, withSecret)
		if err == nil {
			out = append(out, e)
		}
		return err
	}, `/* Store.WebhookEndpoints */ SELECT `+hookColumns+` FROM webhook_endpoints WHERE site_id = ? ORDER BY created_at, id`,
		string(site))
	if err != nil {
		return nil, fmt.Errorf("site %s webhooks: %w", site, err)
	}
	return out, nil
}

// WebhookEndpointByID returns one webhook with its secret in clear.
func (q Q) WebhookEndpointByID(ctx context.Context, id string) (*model.WebhookEndpoint, error) {
	e, err := q.scanHook(q.queryRow(ctx, `/* Store.WebhookEndpointByID */ SELECT `+hookColumns+`
		FROM webhook_endpoints WHERE id = ?`, id), true)
	if err != nil {
		return nil, notFound(err, "webhook "+id)
	}
	return e, nil
}

func (q Q) scanHook(r scanner, withSecret bool) (*model.WebhookEndpoint, error) {
	var (
		e                    model.WebhookEndpoint
		site, events, sealed string
		created              int64
	)
	if err := r.Scan(&e.ID, &site, &e.URL, &events, &sealed, &created); err != nil {
		return nil, err
	}
	e.SiteID, e.CreatedAt = model.SiteID(site), time.UnixMilli(created).UTC()
	if events != "" {
		e.Events = strings.Split(events, ",")
	}
	if withSecret {
		if q.box == nil {
			return nil, fmt.Errorf("webhook %s: its secret is encrypted and no secret_key is set", e.ID)
		}
		v, err := q.box.Open(hookContext(e.SiteID, e.ID), sealed)
		if err != nil {
			return nil, fmt.Errorf("webhook %s secret: %w", e.ID, err)
		}
		e.Secret = v
	}
	return &e, nil
}

// WebhookBlocker returns the oldest row of the same endpoint and lead as d
// that was queued before it and is not settled (pending, retry or paused),
// or model.ErrNotFound: a lead's events reach an endpoint in the order they
// happened, so d waits for it.
func (q Q) WebhookBlocker(ctx context.Context, d *model.Delivery) (*model.Delivery, error) {
	// A post not settled has its state row: never archived.
	got, err := scanDelivery(q.queryRow(ctx, `/* Store.WebhookBlocker */ SELECT `+deliveryJoin+` FROM delivery_events e
		JOIN delivery_state s ON s.id = e.id
		WHERE e.lead_id = ? AND s.destination = ? AND e.pixel_id = ? AND s.state IN (?, ?, ?)
			AND (s.created_at < ? OR (s.created_at = ? AND s.id < ?))
		ORDER BY s.created_at, s.id LIMIT 1`, string(d.LeadID), model.DestinationWebhook, d.PixelID,
		string(model.DeliveryPending), string(model.DeliveryRetry), string(model.DeliveryPaused),
		d.CreatedAt.UnixMilli(), d.CreatedAt.UnixMilli(), d.ID))
	if err != nil {
		return nil, notFound(err, "webhook delivery before "+d.ID)
	}
	return got, nil
}

// WebhookDeliveries returns a site's latest webhook posts, newest first.
// webhookDeliveriesQuery reads a site's newest webhook posts. The
// destination is written out, not a parameter, so that SQLite and
// PostgreSQL walk the partial index delivery_state_webhook_recent (migration
// 0380) from the site's newest post: without it the site's page read every
// delivery of the site to keep twenty.
// A webhook post is never archived (migration 0470): its rows are all in
// delivery_state.
const webhookDeliveriesQuery = `/* Store.WebhookDeliveries */ SELECT ` + deliveryJoin + ` FROM delivery_state s
		JOIN delivery_events e ON e.id = s.id
		WHERE s.site_id = ? AND s.destination = '` + model.DestinationWebhook + `' ORDER BY s.created_at DESC, s.id DESC LIMIT ?`

func (q Q) WebhookDeliveries(ctx context.Context, site model.SiteID, limit int) ([]*model.Delivery, error) {
	rows, err := q.query(ctx, webhookDeliveriesQuery, string(site), limit)
	return scanAll(rows, err, "webhook deliveries", scanDelivery)
}
