package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// deleteBatch bounds one delete statement: on SQLite the writer is held for
// one batch at a time, so intake is never held up for long.
const deleteBatch = 1000

// LeadsToRedact returns up to limit leads received before the time whose
// contact details are still there, oldest first.
func (q Q) LeadsToRedact(ctx context.Context, before time.Time, limit int) ([]model.LeadID, error) {
	var ids []model.LeadID
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var id string
		if err := r.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, model.LeadID(id))
		return nil
	}, `/* Store.LeadsToRedact */ SELECT id FROM leads WHERE received_at < ? AND redacted_at IS NULL
		ORDER BY received_at LIMIT ?`, before.UnixMilli(), limit)
	return ids, err
}

// PersonLookup names a person to forget: by e-mail (its normalised key and
// the address as typed) and by phone (its keys, one per site country, and
// the number as typed). Site limits it to one site when set.
type PersonLookup struct {
	Site      model.SiteID
	EmailKey  string
	Email     string
	PhoneKeys []string
	Phone     string
	// WhatsAppUser is a WhatsApp business-scoped user id: the leads of
	// the conversations and contacts kept under it, and the
	// Click-to-WhatsApp leads it started.
	WhatsAppUser string
}

// LeadsByPerson returns the not yet redacted leads of a person.
func (q Q) LeadsByPerson(ctx context.Context, p PersonLookup) ([]*model.Lead, error) {
	var conds []string
	var args []any
	if p.EmailKey != "" {
		conds, args = append(conds, "("+emailKeyIs+")"), append(args, p.EmailKey)
	}
	if p.Email != "" {
		conds, args = append(conds, "LOWER(email) = ?"), append(args, q.plain(strings.ToLower(strings.TrimSpace(p.Email))))
	}
	for _, k := range p.PhoneKeys {
		conds, args = append(conds, "(phone_key = ? AND phone_key <> '')"), append(args, k)
	}
	if p.Phone != "" {
		conds, args = append(conds, "phone = ?"), append(args, q.plain(strings.TrimSpace(p.Phone)))
	}
	// A Click-to-WhatsApp conversation is kept under the sender's phone
	// digits (the phone key) and user id, whether or not its lead has the
	// phone; a contact is a user id matched to a lead's phone.
	var senders []string
	for _, k := range p.PhoneKeys {
		senders = append(senders, "phone:"+k)
	}
	if u := strings.TrimSpace(p.WhatsAppUser); u != "" {
		senders = append(senders, "user:"+u)
		conds, args = append(conds, "id IN (SELECT lead_id FROM whatsapp_contacts WHERE user_id = ?)"), append(args, u)
		conds, args = append(conds, `(source = ? AND source_detail LIKE ? ESCAPE '\')`),
			append(args, model.SourceWhatsApp, "%"+likeEscape(detailPair(model.DetailWhatsAppUserID, u))+"%")
	}
	for _, sender := range senders {
		conds, args = append(conds, "id IN (SELECT lead_id FROM whatsapp_conversations WHERE sender = ?)"), append(args, sender)
	}
	if len(conds) == 0 {
		return nil, model.Invalid("", "name the person by e-mail, phone or WhatsApp user id")
	}
	query := `/* Store.LeadsByPerson */ SELECT ` + leadColumns + ` FROM leads WHERE redacted_at IS NULL AND (` +
		strings.Join(conds, " OR ") + `)`
	if p.Site != "" {
		query += ` AND site_id = ?`
		args = append(args, string(p.Site))
	}
	var list []*model.Lead
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		l, err := scanLead(r)
		if err != nil {
			return err
		}
		list = append(list, l)
		return nil
	}, query+` ORDER BY received_at, id`, args...)
	return list, err
}

// LeadRedact removes a lead's contact details and everything that
// identifies the person (names, message, fields, addresses, click ids, the
// keys used to find them, the Lead Ads id and the event id made from it),
// keeping what statistics need: site, times, verdict, score, reasons as
// given, who decided, and the source detail as given (the caller leaves
// out its personal keys). It returns false when the lead was already
// redacted.
func (q Q) LeadRedact(ctx context.Context, id model.LeadID, reasons []model.Reason, detail map[string]string, now time.Time) (bool, error) {
	rs, err := json.Marshal(nonNilReasons(reasons))
	if err != nil {
		return false, fmt.Errorf("store: lead reasons: %w", err)
	}
	// What erasure takes of a web lead (the page, click ids, visitor) told
	// where it came from: that is kept in its source detail (a campaign or
	// an ad names no person), so that the campaign report keeps counting the
	// lead where it did, and a recount finds it there. Should erasure still
	// change where it came from, the report's counters follow.
	rl, reportSite, err := q.reportLead(ctx, id)
	if err != nil {
		return false, err
	}
	if rl != nil && rl.Source != model.SourceLeadAds && rl.Source != model.SourceWhatsApp {
		detail = keepAttribution(detail, Attribute(rl))
	}
	sd, err := json.Marshal(nonNilMap(detail))
	if err != nil {
		return false, fmt.Errorf("store: lead source detail: %w", err)
	}
	// Erasure takes the Lead Ads id too: the lead leaves its day's
	// CounterLeadAds.
	var (
		n        int64
		site     string
		received int64
	)
	err = q.queryRow(ctx, `/* Store.LeadRedact */ SELECT site_id, received_at FROM leads
		WHERE id = ? AND lead_ads_id <> '' AND redacted_at IS NULL`, string(id)).Scan(&site, &received)
	leadAds := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("store: redact lead %s: %w", id, err)
	}
	err = q.reportMoveFrom(ctx, id, rl, reportSite, func() error {
		var err error
		n, err = q.leadRedact(ctx, id, string(sd), string(rs), now)
		return err
	})
	if err == nil && n > 0 && leadAds {
		err = q.CountersAdd(ctx, model.SiteID(site), model.Day(time.UnixMilli(received)), string(id),
			model.Count{Name: model.CounterLeadAds, N: -1})
	}
	return n > 0, err
}

// keepAttribution is detail with where a web lead came from (DetailClick
// and the campaign, ad set and ad keys), for Attribute to read once erasure
// has taken what told it.
func keepAttribution(detail map[string]string, a Attribution) map[string]string {
	out := maps.Clone(detail)
	if out == nil {
		out = map[string]string{}
	}
	out[model.DetailClick] = a.Click
	for k, v := range map[string]string{model.DetailCampaign: a.Campaign.ID, model.DetailCampaignName: a.Campaign.Name,
		model.DetailAdSet: a.AdSet.ID, model.DetailAdSetName: a.AdSet.Name, model.DetailAd: a.Ad.ID, model.DetailAdName: a.Ad.Name} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

func (q Q) leadRedact(ctx context.Context, id model.LeadID, sd, rs string, now time.Time) (int64, error) {
	res, err := q.exec(ctx, `/* Store.LeadRedact */ UPDATE leads SET email = '', phone = '', name = '', first_name = '',
		last_name = '', message = '', fields = '{}', honeypot = '', client_ip = '', user_agent = '', email_key = '',
		phone_key = '', external_id = '', page_url = '', referrer = '', fbc = '', fbp = '', fbclid = '', gclid = '',
		visitor_id = '', event_id = CASE WHEN lead_ads_id <> '' THEN ? ELSE event_id END,
		lead_ads_id = '', source_detail = ?, reasons = ?, redacted_at = ? WHERE id = ? AND redacted_at IS NULL`,
		"erased-"+string(id), sd, rs, now.UnixMilli(), string(id))
	if err != nil {
		return 0, fmt.Errorf("store: redact lead %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// HistorySetData replaces the data of lead's history entry id.
func (q Q) HistorySetData(ctx context.Context, lead model.LeadID, id string, data map[string]any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("store: history data: %w", err)
	}
	if _, err := q.exec(ctx, `/* Store.HistorySetData */ UPDATE lead_history SET data = ? WHERE lead_id = ? AND id = ?`, string(b),
		string(lead), id); err != nil {
		return fmt.Errorf("store: history %s: %w", id, err)
	}
	return nil
}

// DeliveriesToRedact returns up to limit finished outbox rows (sent, dead,
// expired, dry_run) whose payload still carries clear values: a lead's
// events created before leadsBefore, page views created before viewsBefore.
func (q Q) DeliveriesToRedact(ctx context.Context, leadsBefore, viewsBefore time.Time, limit int) ([]*model.Delivery, error) {
	var list []*model.Delivery
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		d, err := scanDelivery(r)
		if err != nil {
			return err
		}
		list = append(list, d)
		return nil
	}, q.deliveriesToRedactQuery(), leadsBefore.UnixMilli(), viewsBefore.UnixMilli(),
		max(leadsBefore.UnixMilli(), viewsBefore.UnixMilli()), limit)
	return list, err
}

// deliveriesToRedactQuery is DeliveriesToRedact's statement: a walk of the
// partial index of the finished rows not shrunk yet (delivery_state_unshrunk),
// oldest first up to the later of the two times (the third argument),
// which holds every row not redacted (a shrunk row is redacted), not of
// every row's time.
func (q Q) deliveriesToRedactQuery() string {
	return `/* Store.DeliveriesToRedact */ SELECT ` + deliveryJoin + ` FROM delivery_state s` +
		q.indexedBy("delivery_state_unshrunk") + ` JOIN delivery_events e ON e.id = s.id
		WHERE s.shrunk_at IS NULL AND e.redacted_at IS NULL AND s.state NOT IN ('pending', 'retry', 'paused')
		AND ((e.lead_id <> '' AND s.created_at < ?) OR (e.lead_id = '' AND s.created_at < ?)) AND s.created_at < ?
		ORDER BY s.created_at, s.id LIMIT ?`
}

// DeliveryRedact replaces an outbox row's payload with its redacted form.
// With a cancel reason, a row not sent yet (pending, retry, paused) is
// ended as dead with it: it is never sent. It reports whether it cancelled.
func (q Q) DeliveryRedact(ctx context.Context, id string, payload json.RawMessage, cancel string, now time.Time) (bool, error) {
	cancelled := false
	if cancel != "" {
		res, err := q.exec(ctx, `/* Store.DeliveryRedact */ UPDATE delivery_state SET state = ?, last_error = ?, updated_at = ?
			WHERE id = ? AND state IN (?, ?, ?)`, string(model.DeliveryDead), cancel, now.UnixMilli(), id,
			string(model.DeliveryPending), string(model.DeliveryRetry), string(model.DeliveryPaused))
		if err != nil {
			return false, fmt.Errorf("store: cancel delivery %s: %w", id, err)
		}
		n, _ := res.RowsAffected()
		cancelled = n > 0
	}
	// A Lead Ads lead's event id is its leadgen id: the row keeps its own.
	const redact = `UPDATE delivery_events SET payload = ?, redacted_at = ?,
		event_id = CASE WHEN event_id LIKE 'leadads-%' THEN ? ELSE event_id END WHERE id = ?`
	// The erased id is made here, not by SQL's ||: on SQLite the row's id
	// is packed (idpack.go).
	res, err := q.exec(ctx, `/* Store.DeliveryRedact */ `+redact+` AND archived_at IS NULL`, string(payload), now.UnixMilli(), "erased-"+id, id)
	if err != nil {
		return false, fmt.Errorf("store: redact delivery %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		// An archived event (an erasure's): its payload stays packed
		// (migration 0490). Retention's redaction never reaches one, so
		// it packs nothing.
		if _, err := q.exec(ctx, `/* Store.DeliveryRedact */ `+redact+` AND archived_at IS NOT NULL`,
			packPayload(payload), now.UnixMilli(), "erased-"+id, id); err != nil {
			return false, fmt.Errorf("store: redact delivery %s: %w", id, err)
		}
	}
	return cancelled, nil
}

// ShrinkCursor is where DeliveriesToShrink stopped: the created time and
// id of the last row it returned (zero: from the oldest).
type ShrinkCursor struct {
	CreatedAt time.Time
	ID        string
}

// shrinkResponseMax is the longest answer a shrunk row keeps: a longer
// one (a webhook receiver's page) goes with the payload.
const shrinkResponseMax = 2048

// deliveriesToShrinkQuery is DeliveriesToShrink's statement: a walk of the
// partial index of the finished rows not shrunk yet (delivery_state_unshrunk)
// from the cursor, so that a run never reads the rows it shrank before. It
// names the index's predicate as written (migration 0570), which SQLite
// needs to use the index and PostgreSQL proves at once.
func (q Q) deliveriesToShrinkQuery() string {
	return `/* Store.DeliveriesToShrink */ SELECT ` + deliveryJoin + ` FROM delivery_state s` +
		q.indexedBy("delivery_state_unshrunk") + ` JOIN delivery_events e ON e.id = s.id
		WHERE s.shrunk_at IS NULL AND s.state NOT IN ('pending', 'retry', 'paused')
		AND s.created_at < ? AND (s.created_at > ? OR (s.created_at = ? AND s.id > ?))
		AND s.deadline_at < ? AND s.state IN ('sent', 'dead', 'expired', 'dry_run')
		ORDER BY s.created_at, s.id LIMIT ?`
}

// DeliveriesToShrink returns up to limit finished outbox rows (sent, dead,
// expired, dry_run) created before the time, after the cursor, whose
// deadline has passed (nothing can send, replay or requeue them again) and
// whose payload is still whole, oldest first.
func (q Q) DeliveriesToShrink(ctx context.Context, before time.Time, after ShrinkCursor, now time.Time, limit int) ([]*model.Delivery, error) {
	from := after.CreatedAt.UnixMilli()
	if after.CreatedAt.IsZero() {
		from = -1
	}
	rows, err := q.query(ctx, q.deliveriesToShrinkQuery(), before.UnixMilli(), from, from, after.ID, now.UnixMilli(), limit)
	return scanAll(rows, err, "deliveries to shrink", scanDelivery)
}

// DeliveryShrink replaces a finished outbox row's payload with its shrunk
// form (its platform's Shrink), marks it shrunk (and redacted: the shrunk
// form keeps no clear value) and drops an answer longer than 2 KiB. A
// lead's event (not a webhook post) is archived at the same time: its
// state's columns folded into its delivery_events row and its
// delivery_state row deleted (migration 0470), a sent one's answer
// dropped, its payload packed (packPayload, migration 0490). It reports
// false, changing nothing, for a row not finished or shrunk already.
func (q Q) DeliveryShrink(ctx context.Context, id string, payload json.RawMessage, now time.Time) (bool, error) {
	// An archived row's redaction time is its archived_at unless an
	// erasure set one before: its redacted_at stays as it is (migration
	// 0581), and the view deliveries reads the two so.
	res, err := q.exec(ctx, `/* Store.DeliveryShrink */ UPDATE delivery_events SET payload = ?,
		archived_at = ?, archived_kind = s.kind, archived_state = s.state,
		archived_attempts = s.attempts, archived_created_at = s.created_at, archived_deadline_at = s.deadline_at,
		archived_updated_at = s.updated_at, archived_sent_at = s.sent_at, archived_mode = s.mode,
		archived_error = s.last_error,
		archived_response = CASE WHEN s.state = 'sent' OR LENGTH(s.response) > ? THEN '' ELSE s.response END
		FROM delivery_state s
		WHERE delivery_events.id = ? AND s.id = delivery_events.id AND s.shrunk_at IS NULL
			AND s.state IN ('sent', 'dead', 'expired', 'dry_run')
			AND delivery_events.lead_id <> '' AND delivery_events.destination <> ?`,
		packPayload(payload), now.UnixMilli(), shrinkResponseMax, id, model.DestinationWebhook)
	if err != nil {
		return false, fmt.Errorf("store: archive delivery %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		if _, err := q.exec(ctx, `/* Store.DeliveryShrink */ DELETE FROM delivery_state WHERE id = ?`, id); err != nil {
			return false, fmt.Errorf("store: archive delivery %s: %w", id, err)
		}
		return true, nil
	}
	res, err = q.exec(ctx, `/* Store.DeliveryShrink */ UPDATE delivery_state SET shrunk_at = ?,
		response = CASE WHEN LENGTH(response) > ? THEN '' ELSE response END
		WHERE id = ? AND shrunk_at IS NULL AND state IN ('sent', 'dead', 'expired', 'dry_run')`,
		now.UnixMilli(), shrinkResponseMax, id)
	if err != nil {
		return false, fmt.Errorf("store: shrink delivery %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if _, err := q.exec(ctx, `/* Store.DeliveryShrink */ UPDATE delivery_events SET payload = ?,
		redacted_at = COALESCE(redacted_at, ?) WHERE id = ?`, string(payload), now.UnixMilli(), id); err != nil {
		return false, fmt.Errorf("store: shrink delivery %s: %w", id, err)
	}
	return true, nil
}

// VisitsDeleteBefore deletes visits older than the time, in batches, and
// returns how many.
func (q Q) VisitsDeleteBefore(ctx context.Context, before time.Time) (int, error) {
	return q.deleteBatches(ctx, `/* Store.VisitsDeleteBefore */ DELETE FROM visits WHERE (site_id, event_id) IN
		(SELECT site_id, event_id FROM visits WHERE at < ? LIMIT ?)`, before.UnixMilli())
}

// VisitorsDeleteIdle deletes visitors not seen since the time that have no
// visit left, and returns how many.
func (q Q) VisitorsDeleteIdle(ctx context.Context, before time.Time) (int, error) {
	return q.deleteBatches(ctx, `/* Store.VisitorsDeleteIdle */ DELETE FROM visitors WHERE (site_id, id) IN
		(SELECT site_id, id FROM visitors v WHERE last_seen < ? AND NOT EXISTS
			(SELECT 1 FROM visits WHERE visits.site_id = v.site_id AND visits.visitor_id = v.id) LIMIT ?)`, before.UnixMilli())
}

// FormTokenUsesDeleteBefore deletes used form-token nonces recorded before
// the time (a token that old is refused as expired before its nonce is
// looked at), and returns how many.
func (q Q) FormTokenUsesDeleteBefore(ctx context.Context, before time.Time) (int, error) {
	return q.deleteBatches(ctx, `/* Store.FormTokenUsesDeleteBefore */ DELETE FROM form_token_uses WHERE (site_id, nonce) IN
		(SELECT site_id, nonce FROM form_token_uses WHERE used_at < ? LIMIT ?)`, before.UnixMilli())
}

// VisitorForget deletes one visitor and its visits, and returns the
// visits' PageView event ids (their outbox rows are the caller's to redact)
// and the counts deleted.
func (q Q) VisitorForget(ctx context.Context, site model.SiteID, visitorID string) (eventIDs []string, visits, visitors int, err error) {
	err = q.eachRow(ctx, func(r *sql.Rows) error {
		var id string
		if err := r.Scan(&id); err != nil {
			return err
		}
		eventIDs = append(eventIDs, id)
		return nil
	}, `/* Store.VisitorForget */ SELECT event_id FROM visits WHERE site_id = ? AND visitor_id = ?`, string(site), visitorID)
	if err != nil {
		return nil, 0, 0, err
	}
	res, err := q.exec(ctx, `/* Store.VisitorForget */ DELETE FROM visits WHERE site_id = ? AND visitor_id = ?`, string(site), visitorID)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("store: forget visits: %w", err)
	}
	n, _ := res.RowsAffected()
	res, err = q.exec(ctx, `/* Store.VisitorForget */ DELETE FROM visitors WHERE site_id = ? AND id = ?`, string(site), visitorID)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("store: forget visitor: %w", err)
	}
	m, _ := res.RowsAffected()
	return eventIDs, int(n), int(m), nil
}

// deleteBatches runs a DELETE ... LIMIT ? statement until it deletes less
// than a batch, each batch its own statement.
func (q Q) deleteBatches(ctx context.Context, query string, args ...any) (int, error) {
	total := 0
	for {
		res, err := q.exec(ctx, query, append(args, deleteBatch)...)
		if err != nil {
			return total, fmt.Errorf("store: %w", err)
		}
		n, _ := res.RowsAffected()
		total += int(n)
		if n < deleteBatch {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// WhatsAppContactsForget deletes the WhatsApp user ids remembered for a
// lead (each kept with the phone it was matched by, or as the sender of the
// Click-to-WhatsApp conversation it started), and returns how many.
func (q Q) WhatsAppContactsForget(ctx context.Context, lead model.LeadID) (int, error) {
	res, err := q.exec(ctx, `/* Store.WhatsAppContactsForget */ DELETE FROM whatsapp_contacts WHERE lead_id = ?`, string(lead))
	if err != nil {
		return 0, fmt.Errorf("store: forget WhatsApp contacts of %s: %w", lead, err)
	}
	n, _ := res.RowsAffected()
	conv, err := q.exec(ctx, `/* Store.WhatsAppContactsForget */ DELETE FROM whatsapp_conversations WHERE lead_id = ?`, string(lead))
	if err != nil {
		return 0, fmt.Errorf("store: forget WhatsApp conversations of %s: %w", lead, err)
	}
	m, _ := conv.RowsAffected()
	return int(n + m), nil
}

// detailPair is a key and its value as a lead's source_detail (a JSON
// object written by encoding/json, keys sorted, no spaces) holds them.
func detailPair(key, value string) string {
	k, _ := json.Marshal(key)
	v, _ := json.Marshal(value)
	return string(k) + ":" + string(v)
}

// PageViewsDeleteBefore deletes the outbox rows of page views created
// before the time that were never sent and never will be (built in dry
// run, dead or expired), in batches of a transaction each (the state and
// the event together), and returns how many. A sent page view is a count
// (pageview.go) and no row; these rows are what is left of the others.
// delivery_state_site_state_created serves the look-up, a range per site
// and state.
func (db *DB) PageViewsDeleteBefore(ctx context.Context, before time.Time) (int, error) {
	total := 0
	for {
		n := 0
		err := db.InTx(ctx, func(tx *Tx) error {
			rows, err := tx.query(ctx, `/* Store.PageViewsDeleteBefore */ SELECT id FROM delivery_state
				WHERE site_id IN (SELECT id FROM sites) AND state IN ('dry_run', 'dead', 'expired') AND created_at < ?
					AND kind = 'pageview' LIMIT ?`,
				before.UnixMilli(), deleteBatch)
			// The ids are the DELETEs' arguments.
			ids, err := scanAll(rows, err, "delete page views", func(r scanner) (any, error) {
				id, err := scanText(r)
				return id, err
			})
			if err != nil || len(ids) == 0 {
				return err
			}
			in := `(?` + strings.Repeat(", ?", len(ids)-1) + `)`
			if _, err := tx.exec(ctx, `/* Store.PageViewsDeleteBefore */ DELETE FROM delivery_state WHERE id IN `+in, ids...); err != nil {
				return fmt.Errorf("store: delete page views: %w", err)
			}
			if _, err := tx.exec(ctx, `/* Store.PageViewsDeleteBefore */ DELETE FROM delivery_events WHERE id IN `+in, ids...); err != nil {
				return fmt.Errorf("store: delete page views: %w", err)
			}
			n = len(ids)
			return nil
		})
		total += n
		if err != nil || n < deleteBatch {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
