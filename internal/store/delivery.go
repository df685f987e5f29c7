package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// deliveryColumns are a delivery's columns as the view deliveries (the
// two tables joined, and the archived events' rows, migration 0470) names
// them.
const deliveryColumns = `id, site_id, lead_id, kind, event_name, event_id, pixel_id, payload, state, attempts,
	next_at, deadline_at, last_error, response, mode, created_at, updated_at, sent_at, destination, shrunk_at`

// deliveryJoin reads deliveryColumns from delivery_state s (the changing
// columns) and delivery_events e (the payload), for the statements that
// name an index of s or lock its rows.
const deliveryJoin = `s.id, s.site_id, e.lead_id, s.kind, e.event_name, e.event_id, e.pixel_id, e.payload, s.state, s.attempts,
	s.next_at, s.deadline_at, s.last_error, s.response, s.mode, s.created_at, s.updated_at, s.sent_at, s.destination, s.shrunk_at`

// claimStateColumns are deliveryJoin's columns of delivery_state, with
// empty texts for those of delivery_events: SQLite's claim reads the state
// rows on the writer and the events' columns apart (claimEvents).
const claimStateColumns = `s.id, s.site_id, '', s.kind, '', '', '', '', s.state, s.attempts,
	s.next_at, s.deadline_at, s.last_error, s.response, s.mode, s.created_at, s.updated_at, s.sent_at, s.destination, s.shrunk_at`

// archivedColumns reads deliveryColumns from an archived event's
// delivery_events row (migration 0470), for the statements that read the
// two shapes apart: SQLite does not push a condition on the lead into the
// view's two parts, and would scan the outbox.
const archivedColumns = `id, site_id, lead_id, archived_kind, event_name, event_id, pixel_id, payload, archived_state,
	archived_attempts, archived_updated_at, archived_deadline_at, archived_error, archived_response, archived_mode,
	archived_created_at, archived_updated_at, archived_sent_at, destination, archived_at`

// destinationOf is a row's destination, Meta's when it names none.
func destinationOf(d *model.Delivery) string {
	if d.Destination == "" {
		return model.DestinationMeta
	}
	return d.Destination
}

// DeliveryInsert puts an event in the outbox. An event already there (same
// site, name and id) is left as it is and inserted reports false: a replay
// never queues it twice.
func (q Q) DeliveryInsert(ctx context.Context, d *model.Delivery) (inserted bool, err error) {
	got, err := q.DeliveryInsertAll(ctx, []*model.Delivery{d})
	if err != nil {
		return false, err
	}
	return got[0], nil
}

// eventRow and stateRow are the placeholders of one delivery's row in
// delivery_events and delivery_state.
const (
	eventRow = `(?, ?, ?, ?, ?, ?, ?, ?)`
	stateRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// eventCols and stateCols name them.
	eventCols = `id, site_id, destination, lead_id, event_name, event_id, pixel_id, payload`
	stateCols = `id, site_id, destination, kind, created_at, deadline_at, state, attempts, next_at, sent_at,
		updated_at, mode, last_error, response`
)

func eventArgs(args []any, d *model.Delivery) []any {
	return append(args, d.ID, string(d.SiteID), destinationOf(d), string(d.LeadID), d.EventName, d.EventID, d.PixelID,
		string(d.Payload))
}

func stateArgs(args []any, d *model.Delivery) []any {
	return append(args, d.ID, string(d.SiteID), destinationOf(d), d.Kind, d.CreatedAt.UnixMilli(), d.DeadlineAt.UnixMilli(),
		string(d.State), d.Attempts, d.NextAt.UnixMilli(), nil, d.UpdatedAt.UnixMilli(), d.Mode, d.LastError, string(d.Response))
}

// DeliveryInsertAll puts events in the outbox (their payload in
// delivery_events, their state in delivery_state) and reports for each
// whether it was inserted, as DeliveryInsert does: an event already there
// is left as it is. On SQLite that is two statements (a statement has a
// fixed cost in the driver, and a clean lead queues two events); on
// PostgreSQL one, whose first part inserts the events and whose second the
// states of those that went in, a round trip saved.
func (q Q) DeliveryInsertAll(ctx context.Context, ds []*model.Delivery) (inserted []bool, err error) {
	inserted = make([]bool, len(ds))
	if len(ds) == 0 {
		return inserted, nil
	}
	if q.dialect == Postgres {
		return q.deliveryInsertCTE(ctx, ds)
	}
	args := make([]any, 0, 8*len(ds))
	for _, d := range ds {
		args = eventArgs(args, d)
	}
	res, err := q.exec(ctx, `/* Store.DeliveryInsert */ INSERT INTO delivery_events (`+eventCols+`)
		VALUES `+eventRow+strings.Repeat(", "+eventRow, len(ds)-1)+`
		ON CONFLICT (site_id, destination, event_name, event_id) DO NOTHING`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: insert deliveries: %w", err)
	}
	n, _ := res.RowsAffected()
	if int(n) == len(ds) {
		for i := range inserted {
			inserted[i] = true
		}
	} else {
		// Some were there already (a replay): the new ids say which went in.
		for i, d := range ds {
			var one int
			err := q.queryRow(ctx, `/* Store.DeliveryInsert */ SELECT 1 FROM delivery_events WHERE id = ?`, d.ID).Scan(&one)
			switch {
			case err == nil:
				inserted[i] = true
			case err != sql.ErrNoRows:
				return nil, fmt.Errorf("store: insert deliveries: %w", err)
			}
		}
	}
	args, rows := args[:0], 0
	for i, d := range ds {
		if inserted[i] {
			args = stateArgs(args, d)
			rows++
		}
	}
	if rows == 0 {
		return inserted, nil
	}
	if _, err := q.exec(ctx, `/* Store.DeliveryInsert */ INSERT INTO delivery_state (`+stateCols+`)
		VALUES `+stateRow+strings.Repeat(", "+stateRow, rows-1), args...); err != nil {
		return nil, fmt.Errorf("store: insert deliveries: %w", err)
	}
	return inserted, q.readyCountInserted(ctx, ds, inserted)
}

// readyCountInserted counts for the readiness page (readyCount) the Meta
// events of leads inserted already sent or built in dry run, and the
// match-key coverage (coverageCount) of every Meta event so inserted.
func (q Q) readyCountInserted(ctx context.Context, ds []*model.Delivery, inserted []bool) error {
	var (
		ids  []string
		done []*model.Delivery
	)
	for i, d := range ds {
		if inserted[i] && uploaded(d) {
			done = append(done, d)
			if d.LeadID != "" {
				ids = append(ids, d.ID)
			}
		}
	}
	if err := q.coverageCount(ctx, done, false); err != nil {
		return err
	}
	return q.readyCount(ctx, ids)
}

// uploaded tells whether d is a Meta event that reached Meta or was built
// in dry run: what the readiness and coverage counters count.
func uploaded(d *model.Delivery) bool {
	return destinationOf(d) == model.DestinationMeta && (d.State == model.DeliverySent || d.State == model.DeliveryDryRun)
}

// coverageCount adds the match-key coverage counters
// (model.CoverageCounts) of events just recorded sent or built, from
// their payloads at hand, on their upload day as the rows say it (a
// recount reads it there): when sent, or when built. Recorded (recorded
// true), a row's sent time is the event's SentAt; inserted, it has none
// (an event inserted already sent counts on its creation's day).
func (q Q) coverageCount(ctx context.Context, ds []*model.Delivery, recorded bool) error {
	var byDay dayCounts
	for _, d := range ds {
		cs := model.CoverageCounts(d.Payload)
		if cs == nil {
			continue
		}
		when := d.CreatedAt
		if recorded && d.SentAt != nil {
			when = *d.SentAt
		}
		byDay.add(d.SiteID, model.Day(when), d.ID, cs...)
	}
	return byDay.flush(ctx, q)
}

// pgStateRow is stateRow with the types PostgreSQL cannot infer in a
// VALUES list.
func (q Q) pgStateRow() string {
	return `(` + q.idParam() + `, ?, ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT), ?, CAST(? AS INTEGER), CAST(? AS BIGINT),
	CAST(? AS BIGINT), CAST(? AS BIGINT), ?, ?, ?)`
}

// deliveryInsertCTE is DeliveryInsertAll on PostgreSQL: one statement
// whose data-modifying CTE inserts the events and whose outer insert adds
// the states of those it returned.
func (q Q) deliveryInsertCTE(ctx context.Context, ds []*model.Delivery) ([]bool, error) {
	args := make([]any, 0, 22*len(ds))
	for _, d := range ds {
		args = eventArgs(args, d)
	}
	for _, d := range ds {
		args = stateArgs(args, d)
	}
	rows, err := q.w.QueryContext(ctx, q.rebind(`/* Store.DeliveryInsert */ WITH e AS (
		INSERT INTO delivery_events (`+eventCols+`) VALUES `+eventRow+strings.Repeat(", "+eventRow, len(ds)-1)+`
		ON CONFLICT (site_id, destination, event_name, event_id) DO NOTHING RETURNING id)
		INSERT INTO delivery_state (`+stateCols+`)
		SELECT v.* FROM (VALUES `+q.pgStateRow()+strings.Repeat(", "+q.pgStateRow(), len(ds)-1)+`) v (`+stateCols+`)
		JOIN e ON e.id = v.id RETURNING id`), args...)
	if err != nil {
		return nil, fmt.Errorf("store: insert deliveries: %w", unavailable(err))
	}
	defer rows.Close()
	went := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: insert deliveries: %w", err)
		}
		went[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: insert deliveries: %w", unavailable(err))
	}
	inserted := make([]bool, len(ds))
	for i, d := range ds {
		inserted[i] = went[d.ID]
	}
	return inserted, q.readyCountInserted(ctx, ds, inserted)
}

// DeliveriesByLead returns every event of a lead, oldest first, archived
// ones (migration 0470) included. The condition on a non-empty lead id lets
// the partial index delivery_events_lead serve both parts.
func (q Q) DeliveriesByLead(ctx context.Context, id model.LeadID) ([]*model.Delivery, error) {
	rows, err := q.query(ctx, `/* Store.DeliveriesByLead */ SELECT `+deliveryJoin+` FROM delivery_events e
		JOIN delivery_state s ON s.id = e.id WHERE e.lead_id = ? AND e.lead_id <> ''
		UNION ALL SELECT `+archivedColumns+` FROM delivery_events
		WHERE lead_id = ? AND lead_id <> '' AND archived_at IS NOT NULL
		ORDER BY created_at, id`, string(id), string(id))
	return scanAll(rows, err, "deliveries", scanDelivery)
}

func scanDelivery(r scanner) (*model.Delivery, error) {
	var (
		d                          model.Delivery
		site, lead, payload, state string
		response                   string
		next, deadline, created    int64
		updated                    int64
		sent, shrunk               sql.NullInt64
	)
	if err := r.Scan(&d.ID, &site, &lead, &d.Kind, &d.EventName, &d.EventID, &d.PixelID, &payload, &state,
		&d.Attempts, &next, &deadline, &d.LastError, &response, &d.Mode, &created, &updated, &sent, &d.Destination,
		&shrunk); err != nil {
		return nil, err
	}
	d.SiteID, d.LeadID, d.State = model.SiteID(site), model.LeadID(lead), model.DeliveryState(state)
	d.Payload = unpackPayload(payload)
	if response != "" {
		d.Response = []byte(response)
	}
	d.NextAt, d.DeadlineAt = time.UnixMilli(next).UTC(), time.UnixMilli(deadline).UTC()
	d.CreatedAt, d.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	if sent.Valid {
		t := time.UnixMilli(sent.Int64).UTC()
		d.SentAt = &t
	}
	if shrunk.Valid {
		t := time.UnixMilli(shrunk.Int64).UTC()
		d.ShrunkAt = &t
	}
	return &d, nil
}

// DeliveryCancelByLead ends a lead's events that have not been sent
// (pending, retry, paused) as dead with the reason, and returns how many.
// The outgoing webhooks' posts are not ended: they tell the owner's own
// systems what happened, the junk verdict included.
func (q Q) DeliveryCancelByLead(ctx context.Context, id model.LeadID, reason string, now time.Time) (int, error) {
	res, err := q.exec(ctx, `/* Store.DeliveryCancelByLead */ UPDATE delivery_state SET state = ?, last_error = ?, updated_at = ?
		WHERE id IN (SELECT id FROM delivery_events WHERE lead_id = ? AND lead_id <> '')
			AND destination <> ? AND state IN (?, ?, ?)`,
		string(model.DeliveryDead), reason, now.UnixMilli(), string(id), model.DestinationWebhook,
		string(model.DeliveryPending), string(model.DeliveryRetry), string(model.DeliveryPaused))
	if err != nil {
		return 0, fmt.Errorf("store: cancel deliveries of %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// writeSlice is how many events one statement of DeliveryClaim or
// DeliveryRecord takes. Between two slices a job that has held SQLite's
// writer for a while with other calls queued ends its transaction
// (Tx.ShouldYield) and goes on in the next one, so a request waits for a
// slice of a claim of 5,000 events, not for all of it. Each statement
// names writeSlice ids (the last repeated when fewer), so it is prepared
// once.
const writeSlice = 128

// pgSlice is how many events one statement of DeliveryClaim or
// DeliveryRecord takes on PostgreSQL, where the ids go as one array
// parameter (the statement's text, and so its prepared plan, is the same
// whatever their number) and transactions run side by side: a round trip,
// a plan and the counters' upserts per 1,000 events, not per 128.
const pgSlice = 1000

// slice is how many events one statement of a claim or an outcome takes on
// the store's engine.
func (q Q) slice() int {
	if q.dialect == Postgres {
		return pgSlice
	}
	return writeSlice
}

// sliceIDs is the id list of a writeSlice statement.
var sliceIDs = "(?" + strings.Repeat(", ?", writeSlice-1) + ")"

// padSlice fills args up to n ids after the leading fixed ones by repeating
// the last id.
func padSlice(args []any, n int) []any {
	for last := args[len(args)-1]; n < writeSlice; n++ {
		args = append(args, last)
	}
	return args
}

// inSlices runs step(tx, i) for i from 0 to n-1, as many to a transaction
// as run before other calls wait for the writer (Tx.ShouldYield), and
// returns how many ran in transactions that committed.
func (db *DB) inSlices(ctx context.Context, n int, step func(tx *Tx, i int) error) (int, error) {
	done := 0
	for done < n {
		end := done
		err := db.inTxRetry(ctx, func(tx *Tx) error {
			for end = done; end < n; {
				if err := step(tx, end); err != nil {
					return err
				}
				end++
				if tx.ShouldYield() {
					break
				}
			}
			return nil
		})
		if err != nil {
			return done, err
		}
		done = end
	}
	return done, nil
}

// DeliveryClaim leases up to limit due events of Meta's destination (see
// DeliveryClaimFor), leaving out the sites in skip.
func (db *DB) DeliveryClaim(ctx context.Context, owner string, now, leaseUntil time.Time, limit int, skip []model.SiteID) ([]*model.Delivery, error) {
	shares := make([]model.Share, len(skip))
	for i, s := range skip {
		shares[i] = model.Share{Site: s}
	}
	return db.DeliveryClaimFor(ctx, model.ClaimParams{Owner: owner, Now: now, LeaseUntil: leaseUntil, Limit: limit,
		Destinations: []string{model.DestinationMeta}, Skip: shares})
}

// DeliveryClaimFor leases up to p.Limit due events (state pending or
// retry, next_at reached, no lease) of p.Destinations to p.Owner until
// p.LeaseUntil, leaving out the shares in p.Skip; when the outbox has
// fewer and Meta's destination is claimed, queued PageViews fill the claim
// (see pageview.go). It claims share by share (a site's rows of one
// destination), each share's oldest event (earliest deadline) first and the
// share whose oldest due event is oldest first, so a share left out or with
// nothing due costs one index seek, not a walk past its backlog. A node
// that dies holding a lease loses it at LeaseUntil: a claim takes an
// expired lease for none (unleased), and its events are claimed again. Each share is
// claimed in slices, each past the last event of the one before; a failure
// after the first slice ends the claim with the events it holds (the next
// claim meets the failure again). On PostgreSQL concurrent claimers skip
// each other's rows.
func (db *DB) DeliveryClaimFor(ctx context.Context, p model.ClaimParams) ([]*model.Delivery, error) {
	shares, err := db.claimableShares(ctx, p.Now, p.Destinations, p.Skip)
	if err != nil {
		return nil, err
	}
	var list []*model.Delivery
	for _, sh := range shares {
		if len(list) >= p.Limit {
			break
		}
		got, err := db.claimSite(ctx, p.Limit-len(list), nil, func(tx *Tx, n int, after *model.Delivery) ([]*model.Delivery, error) {
			return tx.claimSlice(ctx, p.Owner, p.Now, p.LeaseUntil, n, sh, after)
		})
		if db.dialect == SQLite && len(got) > 0 {
			// The leases are committed: the events' fixed part is read
			// on a reader (claimEvents), off the one writer.
			var ferr error
			if got, ferr = db.claimEvents(ctx, got); ferr != nil && err == nil {
				err = ferr
			}
		}
		list = append(list, got...)
		if err != nil {
			if len(list) > 0 {
				return list, nil
			}
			return nil, err
		}
	}
	if len(list) < p.Limit && slices.Contains(p.Destinations, model.DestinationMeta) {
		var skip []model.SiteID
		for _, sh := range p.Skip {
			if sh.Destination == "" || sh.Destination == model.DestinationMeta {
				skip = append(skip, sh.Site)
			}
		}
		pvs, err := db.claimPageViews(ctx, p.Owner, p.Now, p.LeaseUntil, p.Limit-len(list), skip)
		if err != nil && len(list) == 0 {
			return nil, err
		}
		list = append(list, pvs...)
	}
	return list, nil
}

// claimSite claims up to limit events of one site with slice, in slices of
// at most writeSlice, each given the last event of the one before, as many
// to a transaction as run before other calls wait for the writer (see
// Tx.ShouldYield). finish, when not nil, ends each transaction that
// claimed some, given its last event, and may refuse the site: what that
// transaction read is then dropped and the claim of the site ends. A
// failure returns what earlier transactions claimed with the error.
func (db *DB) claimSite(ctx context.Context, limit int, finish func(tx *Tx, last *model.Delivery) (bool, error),
	slice func(tx *Tx, n int, after *model.Delivery) ([]*model.Delivery, error)) ([]*model.Delivery, error) {
	var list []*model.Delivery
	for more := true; more && len(list) < limit; {
		var got []*model.Delivery
		err := db.InTx(ctx, func(tx *Tx) error {
			got, more = nil, true
			var after *model.Delivery
			if len(list) > 0 {
				after = list[len(list)-1]
			}
			for more && len(list)+len(got) < limit {
				n := min(tx.slice(), limit-len(list)-len(got))
				part, err := slice(tx, n, after)
				if err != nil {
					return err
				}
				got = append(got, part...)
				if more = len(part) == n; more {
					after = part[n-1]
				}
				if tx.ShouldYield() {
					break
				}
			}
			if finish != nil && len(got) > 0 {
				ok, err := finish(tx, got[len(got)-1])
				if err != nil || !ok {
					got, more = nil, false
					return err
				}
			}
			return nil
		})
		if err != nil {
			return list, err
		}
		list = append(list, got...)
	}
	return list, nil
}

// claimEvents fills in the claimed events' fixed part (delivery_events:
// lead, event name and id, pixel, payload) on SQLite, where the claim's
// look-up on the writer reads their state rows alone (claimQuery): the
// two look-ups an event of that table's key and the payload's bytes were
// half of the claim's time on the writer, which the drain waits for, and a
// reader runs beside it. The events are leased, so nothing but an erasure
// changes them meanwhile (its redaction is read; an event it deleted is
// left out, its state row gone with it). On a failure the events not read
// are left out and keep their lease until it runs out, then are claimed
// again.
func (db *DB) claimEvents(ctx context.Context, list []*model.Delivery) ([]*model.Delivery, error) {
	// The events not read yet.
	byID := make(map[string]*model.Delivery, len(list))
	for _, d := range list {
		byID[d.ID] = d
	}
	var err error
	for i := 0; i < len(list) && err == nil; i += writeSlice {
		part := list[i:min(i+writeSlice, len(list))]
		args := make([]any, 0, writeSlice)
		for _, d := range part {
			args = append(args, d.ID)
		}
		err = db.eachRow(ctx, func(r *sql.Rows) error {
			var id, lead, payload string
			var e model.Delivery
			if err := r.Scan(&id, &lead, &e.EventName, &e.EventID, &e.PixelID, &payload); err != nil {
				return err
			}
			if d := byID[id]; d != nil {
				d.LeadID, d.EventName, d.EventID, d.PixelID = model.LeadID(lead), e.EventName, e.EventID, e.PixelID
				d.Payload = unpackPayload(payload)
				delete(byID, id)
			}
			return nil
		}, `/* Store.DeliveryClaim */ SELECT id, lead_id, event_name, event_id, pixel_id, payload FROM delivery_events
			WHERE id IN `+sliceIDs, padSlice(args, len(part))...)
	}
	return slices.DeleteFunc(list, func(d *model.Delivery) bool { return byID[d.ID] != nil }), err
}

// claimableShares returns the shares of dests with due unleased events,
// leaving out skip, the one whose oldest due event is oldest first. Each
// share costs a seek into delivery_state_claimable (and a walk past its events
// not due yet, retries waiting for their time).
func (db *DB) claimableShares(ctx context.Context, now time.Time, dests []string, skip []model.Share) ([]model.Share, error) {
	type due struct {
		share  model.Share
		oldest int64
	}
	var list []due
	if len(dests) == 0 {
		return nil, nil
	}
	query, args := db.claimableSitesQuery(now, dests, skip)
	err := db.eachRow(ctx, func(r *sql.Rows) error {
		var id, dest string
		var oldest sql.NullInt64
		if err := r.Scan(&id, &dest, &oldest); err != nil {
			return err
		}
		if oldest.Valid {
			list = append(list, due{model.Share{Site: model.SiteID(id), Destination: dest}, oldest.Int64})
		}
		return nil
	}, query, args...)
	slices.SortStableFunc(list, func(a, b due) int { return cmp.Compare(a.oldest, b.oldest) })
	shares := make([]model.Share, len(list))
	for i, d := range list {
		shares[i] = d.share
	}
	return shares, err
}

// claimableSitesQuery reads the oldest due event's deadline of each share
// of dests (NULL when none is due), sites in id order, leaving out skip.
func (q Q) claimableSitesQuery(now time.Time, dests []string, skip []model.Share) (string, []any) {
	args := q.unleasedArgs([]any{now.UnixMilli()}, now)
	query := `/* Store.DeliveryClaim */ SELECT s.id, x.name,
			(SELECT d.deadline_at FROM delivery_state d` + q.claimIndex() + ` WHERE d.site_id = s.id AND d.destination = x.name
				AND d.state IN ('pending', 'retry') AND d.next_at <= ? AND ` + q.unleased("d") + `
				ORDER BY d.deadline_at, d.id LIMIT 1)
		FROM sites s, (SELECT ? AS name` + strings.Repeat(` UNION ALL SELECT ?`, len(dests)-1) + `) x`
	for _, d := range dests {
		args = append(args, d)
	}
	var sites, pairs []string
	for _, sh := range skip {
		if sh.Destination == "" {
			sites = append(sites, "?")
			args = append(args, string(sh.Site))
		}
	}
	for _, sh := range skip {
		if sh.Destination != "" {
			pairs = append(pairs, "(s.id = ? AND x.name = ?)")
			args = append(args, string(sh.Site), sh.Destination)
		}
	}
	var where []string
	if len(sites) > 0 {
		where = append(where, `s.id NOT IN (`+strings.Join(sites, ", ")+`)`)
	}
	if len(pairs) > 0 {
		where = append(where, `NOT (`+strings.Join(pairs, " OR ")+`)`)
	}
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	return query + ` ORDER BY s.id, x.name`, args
}

// claimSlice leases up to n due events of a share past after (nil: from
// the oldest).
func (q Q) claimSlice(ctx context.Context, owner string, now, leaseUntil time.Time, n int, sh model.Share, after *model.Delivery) ([]*model.Delivery, error) {
	args := q.unleasedArgs([]any{string(sh.Site), sh.Destination, now.UnixMilli()}, now)
	if after != nil {
		args = append(args, after.DeadlineAt.UnixMilli(), after.ID)
	}
	args = append(args, n)
	if q.dialect == Postgres {
		return q.claimSlicePG(ctx, owner, now, leaseUntil, after != nil, args)
	}
	rows, err := q.query(ctx, q.claimQuery(after != nil), args...)
	list, err := scanAll(rows, err, "claim deliveries", scanDelivery)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	// On SQLite the lease is two columns of the state row that no index
	// names (migration 0620): writing it rewrites that row alone. The
	// look-up ran in this transaction on the one writer, so every event it
	// found is still free.
	args = []any{leaseUntil.UnixMilli(), owner}
	for _, d := range list {
		args = append(args, d.ID)
	}
	res, err := q.exec(ctx, `/* Store.DeliveryClaim */ UPDATE delivery_state SET lease_until = ?, lease_owner = ?
		WHERE id IN `+sliceIDs, padSlice(args, len(list))...)
	if err != nil {
		return nil, fmt.Errorf("store: lease deliveries: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || int(n) != len(list) {
		return nil, fmt.Errorf("store: lease deliveries: %d of %d leased (%v)", n, len(list), err)
	}
	return list, nil
}

// unleased is the condition that the state row named s has no live lease
// at now (its placeholder: unleasedArgs). On SQLite the lease is two
// columns of the state row (migration 0620); on PostgreSQL a row of
// delivery_leases (0520), which the claim's insert takes over once it ran
// out (0640). Either way a lease that ran out is free as it stands:
// nothing gives it back first.
func (q Q) unleased(s string) string {
	if q.dialect == SQLite {
		return `(` + s + `.lease_until IS NULL OR ` + s + `.lease_until <= ?)`
	}
	return `NOT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.id = ` + s + `.id AND l.until > ?)`
}

// unleasedArgs appends unleased's argument, now, to args.
func (q Q) unleasedArgs(args []any, now time.Time) []any {
	return append(args, now.UnixMilli())
}

// claimSlicePG is claimSlice on PostgreSQL: one statement looks the events
// up (claimQuery, which locks their state rows), leases them and returns
// them with the number of leases that went in. The look-up is a CTE that
// the leases' insert reads; the rows returned are the look-up's (a row the
// lock found updated since the statement's snapshot, and still due, comes
// back as the lock saw it). Nothing joins the look-up to the leases: with
// the estimates of a young or unanalysed table (one row a CTE) PostgreSQL
// made that a nested loop of 1,000 by 1,000 rows, 200-600 ms a claim. An
// event whose lease another node took after the look-up's snapshot is left
// out of the insert (ON CONFLICT); when the count says some were, a second
// statement reads which of the leases are this claim's. A lease that ran
// out (its node died, or stalled past it) counts as none in the look-up,
// and the insert takes it over (migration 0640: no index of the leases'
// times, and no statement before the claim to give them back).
func (q Q) claimSlicePG(ctx context.Context, owner string, now, leaseUntil time.Time, cursor bool, args []any) ([]*model.Delivery, error) {
	var leased int
	rows, err := q.query(ctx, `/* Store.DeliveryClaim */ WITH c AS (`+q.claimQuery(cursor)+`),
		l AS (INSERT INTO delivery_leases (id, until, owner) SELECT id, CAST(? AS BIGINT), CAST(? AS TEXT) FROM c
			ON CONFLICT (id) DO UPDATE SET until = EXCLUDED.until, owner = EXCLUDED.owner
			WHERE delivery_leases.until <= CAST(? AS BIGINT) RETURNING id)
		SELECT c.*, (SELECT COUNT(*) FROM l) FROM c ORDER BY c.deadline_at, c.id`,
		append(args, leaseUntil.UnixMilli(), owner, now.UnixMilli())...)
	list, err := scanAll(rows, err, "claim deliveries", func(r scanner) (*model.Delivery, error) {
		return scanDelivery(withExtra{r, []any{&leased}})
	})
	if err != nil || leased == len(list) {
		return list, err
	}
	ids := make([]string, len(list))
	for i, d := range list {
		ids[i] = d.ID
	}
	rows, err = q.query(ctx, `/* Store.DeliveryClaim */ SELECT l.id FROM delivery_leases l JOIN unnest(CAST(? AS `+q.pgIDType()+`[])) x (id)
		ON l.id = x.id WHERE l.owner = ? AND l.until = ?`, ids, owner, leaseUntil.UnixMilli())
	mine, err := scanAll(rows, err, "lease deliveries", scanText)
	if err != nil {
		return nil, err
	}
	ours := map[string]bool{}
	for _, id := range mine {
		ours[id] = true
	}
	return slices.DeleteFunc(list, func(d *model.Delivery) bool { return !ours[d.ID] }), nil
}

// claimQuery is DeliveryClaim's look-up of one share's events, with cursor
// past a given (deadline_at, id). Oldest event first (the nearest
// deadline): after an outage a site's backlog reaches Meta in order of age,
// and what has least time left goes before what can wait.
// delivery_state_claimable is by share in that order, so the claim reads
// index entries until it has its limit, with no sort, and a cursor starts
// it where the slice before stopped. The index holds the events being sent
// too, each left out by one probe of delivery_leases' key (PostgreSQL) or
// by its state row's lease (SQLite, the row the look-up reads anyway); the
// runner does not claim a share it is sending, so the claim meets them only
// when another node sends the same share.
func (q Q) claimQuery(cursor bool) string {
	from := deliveryJoin + ` FROM delivery_state s` + q.claimIndex() + `
			JOIN delivery_events e ON e.id = s.id`
	if q.dialect == SQLite {
		// The state rows alone: claimEvents reads the rest on a reader.
		from = claimStateColumns + ` FROM delivery_state s` + q.claimIndex()
	}
	query := `/* Store.DeliveryClaim */ SELECT ` + from + `
			WHERE s.site_id = ? AND s.destination = ? AND s.state IN ('pending', 'retry') AND s.next_at <= ?
				AND ` + q.unleased("s")
	if cursor {
		query += ` AND (s.deadline_at, s.id) > (?, ?)`
	}
	query += ` ORDER BY s.deadline_at, s.id LIMIT ?`
	if q.dialect == Postgres {
		// Only the state row is locked, and not written: the lease is a
		// row of delivery_leases. The lock keeps a concurrent claimer from
		// taking the event between this look-up and the lease, and an
		// event recorded meanwhile (its state row updated) is left out.
		query += ` FOR UPDATE OF s SKIP LOCKED`
	}
	return query
}

// claimIndex names the index DeliveryClaim walks. Without statistics
// SQLite's planner may prefer another index and then sort every due event
// to return the first few thousand; the partial delivery_state_claimable
// index is already in claim order. PostgreSQL plans from its statistics.
func (q Q) claimIndex() string { return q.indexedBy("delivery_state_claimable") }

// indexedBy tells SQLite's planner which index a statement must use; empty
// on PostgreSQL.
func (q Q) indexedBy(index string) string {
	if q.dialect == SQLite {
		return " INDEXED BY " + index
	}
	return ""
}

// DeliveryRecord writes what became of leased events (State, Attempts,
// NextAt, LastError, Response, Mode, SentAt) and releases their lease
// (queued PageViews: see recordPageViews), in
// slices of writeSlice events, as many to a transaction as run before other
// calls wait for the writer. An event whose lease owner lost it (it expired
// and another node claimed the event) is left alone and counted in lost.
// On an error the events not recorded yet keep their lease until it runs
// out, and are claimed and sent again (with the same event_id).
func (db *DB) DeliveryRecord(ctx context.Context, owner string, ds []*model.Delivery, now time.Time) (lost int, err error) {
	var queued, rows []*model.Delivery
	for _, d := range ds {
		if d.Queued {
			queued = append(queued, d)
		} else {
			rows = append(rows, d)
		}
	}
	if len(queued) > 0 {
		if err := db.recordPageViews(ctx, owner, queued, now); err != nil {
			return 0, err
		}
	}
	// Events of one request mostly share their outcome: one statement per
	// distinct outcome and slice, not per event, keeps a batch of 1000 cheap.
	type outcome struct {
		state, lastError, response, mode string
		attempts                         int
		next                             int64
		sent                             sql.NullInt64
	}
	var order []outcome
	groups := map[outcome][]any{}
	for _, d := range rows {
		o := outcome{state: string(d.State), lastError: d.LastError, response: string(d.Response), mode: d.Mode,
			attempts: d.Attempts, next: d.NextAt.UnixMilli()}
		if d.SentAt != nil {
			o.sent = sql.NullInt64{Int64: d.SentAt.UnixMilli(), Valid: true}
		}
		if _, ok := groups[o]; !ok {
			order = append(order, o)
		}
		groups[o] = append(groups[o], d.ID)
	}
	type slice struct {
		o   outcome
		ids []any
	}
	var work []slice
	size := db.slice()
	for _, o := range order {
		ids := groups[o]
		for i := 0; i < len(ids); i += size {
			work = append(work, slice{o, ids[i:min(i+size, len(ids))]})
		}
	}
	// A Meta event that reaches Meta (or is built in dry run) is counted
	// for the match-key coverage (coverageCount) and, a lead's, for the
	// readiness page (readyCount) in its slice's transaction: those
	// slices learn which rows they updated.
	counted := map[string]*model.Delivery{}
	for _, d := range rows {
		if uploaded(d) {
			counted[d.ID] = d
		}
	}
	// covered is the events of ids that counted updated.
	covered := func(ids []string) []*model.Delivery {
		var ds []*model.Delivery
		for _, id := range ids {
			if d := counted[id]; d != nil {
				ds = append(ds, d)
			}
		}
		return ds
	}
	missed := make([]int, len(work))
	done, err := db.inSlices(ctx, len(work), func(tx *Tx, i int) error {
		w := work[i]
		if tx.dialect == Postgres {
			ids, list, err := tx.recordSlice(ctx, owner, w.o.state, w.o.attempts, w.o.next, w.o.lastError, w.o.response,
				w.o.mode, now.UnixMilli(), w.o.sent, w.ids, counted)
			if err != nil {
				return err
			}
			missed[i] = len(w.ids) - len(ids)
			if err := tx.coverageCount(ctx, covered(ids), true); err != nil {
				return err
			}
			return tx.readyAdd(ctx, list, true)
		}
		// Only the events owner still holds are recorded (one whose lease
		// ran out may be another node's now): on SQLite the lease is in the
		// state row (migration 0620), so one statement checks and clears it
		// with the outcome, and reads which rows it recorded.
		args := []any{w.o.state, w.o.attempts, w.o.next, w.o.lastError, w.o.response, w.o.mode, now.UnixMilli(), w.o.sent, owner}
		args = padSlice(append(args, w.ids...), len(w.ids))
		rows, err := tx.query(ctx, `/* Store.DeliveryRecord */ UPDATE delivery_state SET state = ?, attempts = ?,
			next_at = ?, last_error = ?, response = ?, mode = ?, updated_at = ?, sent_at = ?, lease_until = NULL, lease_owner = NULL
			WHERE lease_owner = ? AND id IN `+sliceIDs+` RETURNING id`, args...)
		ids, err := scanAll(rows, err, "record deliveries", scanText)
		if err != nil {
			return err
		}
		missed[i] = len(w.ids) - len(ids)
		ids = slices.DeleteFunc(ids, func(id string) bool { return counted[id] == nil })
		if err := tx.coverageCount(ctx, covered(ids), true); err != nil {
			return err
		}
		return tx.readyCount(ctx, slices.DeleteFunc(ids, func(id string) bool { return counted[id].LeadID == "" }))
	})
	for _, m := range missed[:done] {
		lost += m
	}
	return lost, err
}

// recordSlice is a slice of DeliveryRecord on PostgreSQL (up to pgSlice
// events of one outcome), in one statement: the leases owner still holds
// of ids are deleted and those events' state rows updated. It returns the
// ids it updated (an event whose lease is gone, or whose row is, is not
// among them) and, when the slice has events counted (uploaded Meta
// events), what readyAdd counts of those of leads.
func (q Q) recordSlice(ctx context.Context, owner, state string, attempts int, next int64, lastError, response, mode string,
	now int64, sent sql.NullInt64, ids []any, counted map[string]*model.Delivery) ([]string, []readyRow, error) {
	arr := make([]string, len(ids))
	for i, id := range ids {
		arr[i] = id.(string)
	}
	// The leases by a join to the array's rows, not "id = ANY(array)":
	// with a generic plan PostgreSQL tested each lease against the whole
	// array (a scan of a table of a few thousand rows, times 1,000). The
	// state rows by "id = ANY" of the deleted leases' ids, which is an
	// index condition (one descent an id); a join to them may hash the
	// whole table.
	leases := `/* Store.DeliveryRecord */ WITH held AS (DELETE FROM delivery_leases l
			USING unnest(CAST(? AS ` + q.pgIDType() + `[])) x (id) WHERE l.id = x.id AND l.owner = ? RETURNING l.id), `
	const update = `UPDATE delivery_state SET state = ?, attempts = ?,
			next_at = ?, last_error = ?, response = ?, mode = ?, updated_at = ?, sent_at = ?
			WHERE id = ANY(ARRAY(SELECT id FROM held))`
	args := []any{arr, owner, state, attempts, next, lastError, response, mode, now, sent}
	if !slices.ContainsFunc(arr, func(id string) bool { return counted[id] != nil }) {
		rows, err := q.query(ctx, leases+`d AS (`+update+` RETURNING id) SELECT id FROM d`, args...)
		got, err := scanAll(rows, err, "record deliveries", scanText)
		return got, nil, err
	}
	var (
		list []readyRow
		got  []string
	)
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var (
			x    readyRow
			id   string
			lead bool
		)
		if err := r.Scan(&id, &lead, &x.site, &x.kind, &x.name, &x.lead, &x.day, &x.bucket, &x.upload, &x.all); err != nil {
			return err
		}
		got = append(got, id)
		if lead && counted[id] != nil {
			list = append(list, x)
		}
		return nil
	}, leases+readyRecordSQL(update), args...)
	if err != nil {
		return nil, nil, fmt.Errorf("store: record deliveries: %w", err)
	}
	return got, list, nil
}

// DeliverySweep expires every unsent event past its deadline (pending,
// retry or paused: Meta would refuse it now) and makes the paused events of
// sites that are no longer paused due again. Leased events are left to
// their owner. Unleased events are found through delivery_state_claimable, a
// range per site of just the expired ones, so a backlog of a million
// events (an outage) is not read on the writer at every sweep.
func (db *DB) DeliverySweep(ctx context.Context, now time.Time) (expired, resumed int, err error) {
	err = db.InTx(ctx, func(tx *Tx) error {
		expired = 0
		for _, st := range tx.sweepQueries(now) {
			res, err := tx.exec(ctx, st.query, st.args...)
			if err != nil {
				return fmt.Errorf("store: expire deliveries: %w", err)
			}
			n, _ := res.RowsAffected()
			expired += int(n)
		}
		// A pause of any platform is in destination_pauses.
		res, err := tx.exec(ctx, `/* Store.DeliverySweep */ UPDATE delivery_state SET state = 'pending', next_at = ?, updated_at = ?
			WHERE site_id IN (SELECT id FROM sites) AND state = 'paused' AND NOT EXISTS (SELECT 1 FROM destination_pauses p
				WHERE p.site_id = delivery_state.site_id AND p.destination = delivery_state.destination)`,
			now.UnixMilli(), now.UnixMilli())
		if err != nil {
			return fmt.Errorf("store: resume deliveries: %w", err)
		}
		n, _ := res.RowsAffected()
		resumed = int(n)
		if tx.dialect == Postgres {
			// No claim gives leases back on PostgreSQL (a claim takes a
			// lease that ran out over, migration 0640): one left by a node
			// that died holding an event finished or erased since would
			// stay. A scan of the leases in flight.
			if _, err := tx.exec(ctx, `/* Store.DeliverySweep */ DELETE FROM delivery_leases WHERE until <= ?`,
				now.UnixMilli()); err != nil {
				return fmt.Errorf("store: end expired leases: %w", err)
			}
		}
		return nil
	})
	return expired, resumed, err
}

// sweep is one statement and its arguments.
type sweep struct {
	query string
	args  []any
}

// sweepQueries expire pending and retry events with no lease or one that
// ran out (through the claim's index, per share) and paused ones (through
// delivery_state_site_state_created, per site).
func (q Q) sweepQueries(now time.Time) []sweep {
	// An event under a live lease is left to its owner. On SQLite the lease
	// is in the row (migration 0620): one that ran out goes with the
	// event's expiry.
	clearLease := ""
	if q.dialect == SQLite {
		clearLease = ", lease_until = NULL, lease_owner = NULL"
	}
	set := `/* Store.DeliverySweep */ UPDATE delivery_state%s SET state = 'expired',
		last_error = CASE WHEN last_error = '' THEN 'deadline passed before it could be sent' ELSE last_error END,
		updated_at = ?` + clearLease + ` WHERE deadline_at <= ? AND `
	ms := now.UnixMilli()
	dests := model.Destinations()
	perShare := []any{ms, ms}
	for _, d := range dests {
		perShare = append(perShare, d)
	}
	return []sweep{
		{fmt.Sprintf(set, q.indexedBy("delivery_state_claimable")) + `site_id IN (SELECT id FROM sites) AND destination IN (?` +
			strings.Repeat(", ?", len(dests)-1) + `) AND state IN ('pending', 'retry')
			AND ` + q.unleased("delivery_state"), append(perShare, ms)},
		{fmt.Sprintf(set, "") + `site_id IN (SELECT id FROM sites) AND state = 'paused'`, []any{ms, ms}},
	}
}

// DeliveryNextDue returns when the earliest unleased pending or retry event
// is due (now when PageViews are queued), and false when there is none.
// (Events of an expired lease count at once, see unleased.)
func (q Q) DeliveryNextDue(ctx context.Context, now time.Time) (time.Time, bool, error) {
	var next sql.NullInt64
	var queued bool
	// On SQLite delivery_state_claimable holds next_at: a scan of the index
	// (and a read of each entry's row for its lease), not of every unsent row
	// (what the planner picks on its own). On PostgreSQL delivery_state_due
	// (by next_at) answers with a descent and a walk past the leased events
	// due first.
	err := q.queryRow(ctx, q.nextDueQuery(), q.unleasedArgs(nil, now)...).Scan(&next, &queued)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: next due delivery: %w", err)
	}
	if queued && (!next.Valid || next.Int64 > now.UnixMilli()) {
		return now, true, nil
	}
	return fromMS(next), next.Valid, nil
}

// nextDueQuery is DeliveryNextDue's statement (it takes now, see
// unleasedArgs).
func (q Q) nextDueQuery() string {
	// The earliest first and LIMIT 1, not MIN: PostgreSQL reads MIN from
	// an index alone only for a statement on one table, and the lease's
	// probe is a join.
	return `/* Store.DeliveryNextDue */ SELECT (SELECT s.next_at FROM delivery_state s` + q.claimIndex() + `
		WHERE s.state IN ('pending', 'retry') AND ` + q.unleased("s") + `
		ORDER BY s.next_at LIMIT 1),
		EXISTS (SELECT 1 FROM pageview_queue)`
}

// DeliveryCounts returns the number of events per state, for a site or for
// all sites when site is empty, queued PageViews (pending) and those sent
// from the queue included.
func (q Q) DeliveryCounts(ctx context.Context, site model.SiteID) (map[model.DeliveryState]int, error) {
	rows, err := q.query(ctx, `/* Store.DeliveryCounts */ SELECT state, COUNT(*) FROM delivery_state
		WHERE site_id = ? OR ? = '' GROUP BY state
		UNION ALL SELECT archived_state, COUNT(*) FROM delivery_events
		WHERE archived_at IS NOT NULL AND (site_id = ? OR ? = '') GROUP BY archived_state`,
		string(site), string(site), string(site), string(site))
	if err != nil {
		return nil, fmt.Errorf("store: delivery counts: %w", err)
	}
	defer rows.Close()
	out := map[model.DeliveryState]int{}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return nil, fmt.Errorf("store: delivery counts: %w", err)
		}
		out[model.DeliveryState(state)] += n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: delivery counts: %w", err)
	}
	queued, sent, err := q.PageViewStats(ctx, site, time.Time{})
	if err != nil {
		return nil, err
	}
	if queued > 0 {
		out[model.DeliveryPending] += queued
	}
	if sent > 0 {
		out[model.DeliverySent] += sent
	}
	return out, nil
}

// DeliveryByID returns one delivery.
func (q Q) DeliveryByID(ctx context.Context, id string) (*model.Delivery, error) {
	d, err := scanDelivery(q.queryRow(ctx, `/* Store.DeliveryByID */ SELECT `+deliveryColumns+` FROM deliveries WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "delivery "+id)
	}
	return d, nil
}

// DeliveryFilter selects deliveries for a list; zero fields match all.
type DeliveryFilter struct {
	Site model.SiteID
	// Only, when not nil, keeps these sites' deliveries alone.
	Only  []model.SiteID
	State model.DeliveryState
	// Before pages back: only rows created before this time (and id).
	Before   time.Time
	BeforeID string
	Limit    int
}

// DeliveryList returns deliveries newest first.
func (q Q) DeliveryList(ctx context.Context, f DeliveryFilter) ([]*model.Delivery, error) {
	sites := f.Only
	switch {
	case f.Site != "" && f.Only != nil && !slices.Contains(f.Only, f.Site):
		return nil, nil
	case f.Site != "":
		sites = []model.SiteID{f.Site}
	case f.Only == nil:
		rows, err := q.query(ctx, `/* Store.DeliveryList */ SELECT id FROM sites ORDER BY id`)
		ids, err := scanAll(rows, err, "deliveries", scanText)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			sites = append(sites, model.SiteID(id))
		}
	}
	states := deliveryStates
	if f.State != "" {
		states = []model.DeliveryState{f.State}
	}
	limit := f.Limit
	if limit <= 0 || limit > 500 {
		limit = 50
	}
	// Each site's newest rows of each state, merged: delivery_state holds
	// no index of every site's rows in time order (migration 0410). Once
	// the page is full, a site's walks stop at its oldest row's time.
	var page []listed
	for _, site := range sites {
		from := int64(math.MinInt64)
		if len(page) == limit {
			from = page[limit-1].at
		}
		query, args := q.deliveryListSiteQuery(site, states, from, f.Before, f.BeforeID, limit)
		rows, err := q.query(ctx, query, args...)
		got, err := scanAll(rows, err, "deliveries", func(r scanner) (listed, error) {
			var l listed
			return l, r.Scan(&l.at, &l.id)
		})
		if err != nil {
			return nil, err
		}
		page = append(page, got...)
		slices.SortFunc(page, func(a, b listed) int { return cmp.Or(cmp.Compare(b.at, a.at), cmp.Compare(b.id, a.id)) })
		page = page[:min(len(page), limit)]
	}
	if len(page) == 0 {
		return nil, nil
	}
	args := make([]any, len(page))
	for i, l := range page {
		args[i] = l.id
	}
	rows, err := q.query(ctx, `/* Store.DeliveryList */ SELECT `+deliveryColumns+` FROM deliveries
		WHERE id IN (?`+strings.Repeat(", ?", len(page)-1)+`) ORDER BY created_at DESC, id DESC`, args...)
	return scanAll(rows, err, "deliveries", scanDelivery)
}

// listed is a row of a DeliveryList page: its created time and id.
type listed struct {
	at int64
	id string
}

// deliveryListSiteQuery reads the created time and id of a site's newest
// rows of the states (at most limit of each) created at from or later,
// older than the cursor when there is one: one newest-first walk of
// delivery_state_site_state_created per state, each stopping at limit
// rows. (SQLite's planner, without statistics, would otherwise walk every
// site's rows of the state newest first for the order.)
func (q Q) deliveryListSiteQuery(site model.SiteID, states []model.DeliveryState, from int64, before time.Time, beforeID string, limit int) (string, []any) {
	var args []any
	var parts []string
	for i, st := range states {
		where, a := newestFirst("site_id = ? AND state = ? AND created_at >= ?", []any{string(site), string(st), from},
			"created_at", before, beforeID, limit)
		parts = append(parts, fmt.Sprintf(`SELECT created_at, id FROM (SELECT created_at, id FROM delivery_state%s WHERE %s) s%d`,
			q.indexedBy("delivery_state_site_state_created"), where, i))
		args = append(args, a...)
		if !archivedStates[st] {
			continue
		}
		// The state's archived rows (migration 0470), through
		// delivery_events_archived the same way.
		where, a = newestFirst("site_id = ? AND archived_state = ? AND archived_created_at >= ? AND archived_at IS NOT NULL",
			[]any{string(site), string(st), from}, "archived_created_at", before, beforeID, limit)
		parts = append(parts, fmt.Sprintf(`SELECT archived_created_at, id FROM (SELECT archived_created_at, id FROM delivery_events%s WHERE %s) a%d`,
			q.indexedBy("delivery_events_archived"), where, i))
		args = append(args, a...)
	}
	return `/* Store.DeliveryList */ ` + strings.Join(parts, " UNION ALL "), args
}

// archivedStates are the states an archived event can have: those of a
// finished event (DeliveryShrink).
var archivedStates = map[model.DeliveryState]bool{model.DeliverySent: true, model.DeliveryDead: true,
	model.DeliveryExpired: true, model.DeliveryDryRun: true}

// CountCap is how far the delivery counts count: a count above it
// (CountCap+1) says "more than CountCap", so that a count reads at most
// CountCap+1 rows a state, however many the period holds.
const CountCap = 10000

// deliveryStates are the states DeliveryStats counts.
var deliveryStates = []model.DeliveryState{model.DeliveryPending, model.DeliveryRetry, model.DeliverySent,
	model.DeliveryDead, model.DeliveryExpired, model.DeliveryPaused, model.DeliveryDryRun}

// DeliveryStats counts a site's deliveries (every site's when site is
// empty) of a kind (every kind when empty) by state, created since the given
// time (all when zero), each up to CountCap+1: a read of the index
// delivery_state_site_state_created alone (for every site, a range of each
// site in turn), at most CountCap+1 entries a state.
func (q Q) DeliveryStats(ctx context.Context, site model.SiteID, kind string, since time.Time) (map[model.DeliveryState]int, error) {
	where, args := " AND site_id IN (SELECT id FROM sites)", []any{}
	if site != "" {
		where, args = " AND site_id = ?", append(args, string(site))
	}
	archived := where
	if kind != "" {
		where += " AND kind = ?"
		archived += " AND archived_kind = ?"
		args = append(args, kind)
	}
	var parts []string
	var all []any
	for i, st := range deliveryStates {
		parts = append(parts, fmt.Sprintf(`SELECT ?, COUNT(*) FROM (SELECT 1 FROM delivery_state WHERE state = ? AND created_at >= ?%s LIMIT %d) s%d`,
			where, CountCap+1, i))
		all = append(append(all, string(st), string(st), since.UnixMilli()), args...)
		if archivedStates[st] {
			// The state's archived rows (migration 0470), through
			// delivery_events_archived alone.
			parts = append(parts, fmt.Sprintf(`SELECT ?, COUNT(*) FROM (SELECT 1 FROM delivery_events
				WHERE archived_state = ? AND archived_created_at >= ? AND archived_at IS NOT NULL%s LIMIT %d) a%d`,
				archived, CountCap+1, i))
			all = append(append(all, string(st), string(st), since.UnixMilli()), args...)
		}
	}
	rows, err := q.query(ctx, `/* Store.DeliveryStats */ `+strings.Join(parts, " UNION ALL "), all...)
	if err != nil {
		return nil, fmt.Errorf("store: delivery counts: %w", err)
	}
	defer rows.Close()
	counts := map[model.DeliveryState]int{}
	for rows.Next() {
		var (
			state string
			n     int
		)
		if err := rows.Scan(&state, &n); err != nil {
			return nil, fmt.Errorf("store: delivery counts: %w", err)
		}
		if n > 0 {
			counts[model.DeliveryState(state)] = min(counts[model.DeliveryState(state)]+n, CountCap+1)
		}
	}
	return counts, rows.Err()
}

// DeliveryReplay puts a dead letter back in the queue after a fix: state
// pending, due now, attempts kept, and the replay noted in last_error with
// the error it had. Only a dead delivery whose deadline has not passed can be
// replayed (each destination's row has its own deadline: Meta's 7 days,
// Google's 90); anything else fails with model.ErrConflict.
func (q Q) DeliveryReplay(ctx context.Context, id, note string, now time.Time) error {
	res, err := q.exec(ctx, `/* Store.DeliveryReplay */ UPDATE delivery_state
		SET state = ?, next_at = ?, updated_at = ?,
			last_error = CASE WHEN last_error = '' THEN ? ELSE ? || '; before: ' || last_error END
		WHERE id = ? AND state = ? AND deadline_at > ? AND shrunk_at IS NULL`,
		string(model.DeliveryPending), now.UnixMilli(), now.UnixMilli(), note, note,
		id, string(model.DeliveryDead), now.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: replay delivery %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	d, err := q.DeliveryByID(ctx, id)
	if err != nil {
		return err
	}
	if d.ShrunkAt != nil {
		return fmt.Errorf("delivery %s cannot be sent again: %s: %w", id, d.ShrunkWords(), model.ErrConflict)
	}
	if d.State != model.DeliveryDead {
		return fmt.Errorf("delivery %s is %s, not dead: %w", id, d.State, model.ErrConflict)
	}
	return fmt.Errorf("delivery %s is past %s: %w", id, model.DeadlineWords(d.Destination), model.ErrConflict)
}
