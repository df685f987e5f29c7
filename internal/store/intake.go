package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cleanads/cleanads/internal/model"
)

// ErrNonceUsed is a form token's nonce that a lead already used up
// (FormTokenUse, LeadIntakeWrite).
var ErrNonceUsed = fmt.Errorf("form token nonce already used: %w", model.ErrConflict)

// LeadWrite is everything intake writes for a new lead (LeadIntakeWrite).
type LeadWrite struct {
	Lead *model.Lead
	// Nonce, when not "", is the form token's nonce the lead uses up; one
	// used already fails the call with ErrNonceUsed and writes nothing.
	Nonce string
	// Landing is the lead's landing visit for the campaign report when
	// LandingRead says the look-up read it (IntakeFound); else it is read.
	Landing     *model.Visit
	LandingRead bool
	// History is the lead's first history entry.
	History *model.HistoryEntry
	// Notify queues the owners' notifications of the lead's verdict
	// (NotifyQueue).
	Notify bool
	// Deliveries are the lead's outbox rows (webhooks and platforms'
	// events); one whose event is there already is left as it is.
	Deliveries []*model.Delivery
}

// LeadIntakeWrite stores a new lead as intake does: its form token's use,
// the lead (model.ErrConflict when the site has its event_id already), its
// history entry, its notifications, its outbox rows, and last its site's
// counters, in sorted order. On SQLite they are the statements of
// FormTokenUse, LeadInsert, HistoryInsert, NotifyQueue and
// DeliveryInsertAll, so call it in a transaction; on PostgreSQL they are
// one statement (data-modifying CTEs), atomic on its own: called outside a
// transaction (DB.Autocommit), the write is one round trip.
func (q Q) LeadIntakeWrite(ctx context.Context, w LeadWrite) error {
	l := w.Lead
	landing := w.Landing
	if !w.LandingRead {
		rl, err := q.reportLeadOf(ctx, l)
		if err != nil {
			return err
		}
		landing = rl.Landing
	}
	counts := intakeCounts(l, landing)
	if q.dialect == Postgres {
		// The one statement counts no readiness (readyCountInserted): that
		// counts events inserted already sent or built in dry run, which
		// intake never writes (the runner decides both).
		for _, d := range w.Deliveries {
			if d.State == model.DeliverySent || d.State == model.DeliveryDryRun {
				return fmt.Errorf("store: lead intake queues its events, not %s ones (event %s)", d.State, d.EventID)
			}
		}
		return q.leadIntakeCTE(ctx, w, counts)
	}
	if w.Nonce != "" {
		if err := q.FormTokenUse(ctx, l.SiteID, w.Nonce, l.ID, l.ReceivedAt); err != nil {
			return err
		}
	}
	if err := q.leadInsert(ctx, l); err != nil {
		return err
	}
	if err := q.HistoryIntakeInsert(ctx, w.History, l); err != nil {
		return err
	}
	if w.Notify {
		if err := q.NotifyQueue(ctx, l.SiteID, l.ID, l.Verdict, w.History.At); err != nil {
			return err
		}
	}
	if _, err := q.DeliveryInsertAll(ctx, w.Deliveries); err != nil {
		return err
	}
	return q.CountersAdd(ctx, l.SiteID, model.Day(l.ReceivedAt), string(l.ID), counts...)
}

// intakeCounts are the counters a new lead adds, its campaign report's
// among them, sorted by name and dim: for one lead's site, day and shard
// that is counterKey.compare's order, the one every writer of counter rows
// takes their locks in (PostgreSQL's one statement writes them as given).
func intakeCounts(l *model.Lead, landing *model.Visit) []model.Count {
	rl := &ReportLead{ID: l.ID, ReceivedAt: l.ReceivedAt, Source: leadSource(l.Source), Detail: l.SourceDetail,
		PageURL: l.PageURL, FBClid: l.FBClid, GClid: l.GClid, Decision: l.Decision, Landing: landing}
	cs := mergeCounts(append(leadCounts(l), ReportCounts(rl, 1)...))
	slices.SortFunc(cs, func(a, b model.Count) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Dim, b.Dim))
	})
	return cs
}

// pgLeadRow is a lead's VALUES row on PostgreSQL, for leadColumns with
// review_expired_at NULL.
const pgLeadRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)`

// pgCounterRow is a site_counters row with the types PostgreSQL cannot
// infer in a VALUES list that is not an INSERT's own.
const pgCounterRow = `(CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS BIGINT))`

// leadIntakeCTE is LeadIntakeWrite on PostgreSQL: one statement. Each part
// is a data-modifying CTE; the counters' insert runs last, as every part
// before it is read (counted) in its one-time condition, and takes its rows
// in the order given. The token's use is a plain insert: a nonce used
// already fails the statement, and with it every part.
func (q Q) leadIntakeCTE(ctx context.Context, w LeadWrite, counts []model.Count) error {
	l := w.Lead
	var (
		b     strings.Builder
		args  []any
		parts []string
	)
	b.WriteString(`/* Store.LeadIntakeWrite */ WITH `)
	part := func(name, sql string, a ...any) {
		if len(parts) > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(name + ` AS (` + sql + `)`)
		parts = append(parts, name)
		args = append(args, a...)
	}
	if w.Nonce != "" {
		part("t", `INSERT INTO form_token_uses (site_id, nonce, lead_id, used_at) VALUES (?, ?, ?, ?) RETURNING 1`,
			string(l.SiteID), w.Nonce, string(l.ID), l.ReceivedAt.UnixMilli())
	}
	la, err := q.leadArgs(l)
	if err != nil {
		return err
	}
	part("l", `INSERT INTO leads (`+leadColumns+`) VALUES `+pgLeadRow+` RETURNING 1`, la...)
	h := w.History
	data, folds, err := historyIntakeData(h, l)
	if err != nil {
		return err
	}
	if !folds {
		part("h", `INSERT INTO lead_history (id, lead_id, at, kind, data) VALUES (?, ?, ?, ?, ?) RETURNING 1`,
			h.ID, string(h.LeadID), h.At.UnixMilli(), h.Kind, string(data))
	}
	if col := notifyColumn(l.Verdict); w.Notify && col != "" {
		at := h.At.UnixMilli()
		part("n", q.notifyInsert(col)+` RETURNING 1`, string(l.ID), string(l.Verdict), at, at, at, string(l.SiteID))
	}
	if ds := w.Deliveries; len(ds) > 0 {
		ea := make([]any, 0, 8*len(ds))
		for _, d := range ds {
			ea = eventArgs(ea, d)
		}
		part("e", `INSERT INTO delivery_events (`+eventCols+`) VALUES `+eventRow+strings.Repeat(", "+eventRow, len(ds)-1)+`
		ON CONFLICT (site_id, destination, event_name, event_id) DO NOTHING RETURNING id`, ea...)
		sa := make([]any, 0, 14*len(ds))
		for _, d := range ds {
			sa = stateArgs(sa, d)
		}
		part("s", `INSERT INTO delivery_state (`+stateCols+`)
		SELECT v.* FROM (VALUES `+q.pgStateRow()+strings.Repeat(", "+q.pgStateRow(), len(ds)-1)+`) v (`+stateCols+`)
		JOIN e ON e.id = v.id RETURNING 1`, sa...)
	}
	var done []string
	for _, p := range parts {
		done = append(done, `(SELECT COUNT(*) FROM `+p+`)`)
	}
	if len(counts) > 0 {
		ca := make([]any, 0, 6*len(counts))
		shard, day := q.shard(string(l.ID)), model.Day(l.ReceivedAt)
		for _, c := range counts {
			ca = append(ca, string(l.SiteID), day, c.Name, c.Dim, shard, c.N)
		}
		part("c", `INSERT INTO site_counters (site_id, day, name, dim, shard, n)
		SELECT * FROM (VALUES `+pgCounterRow+strings.Repeat(", "+pgCounterRow, len(counts)-1)+`) v
		WHERE `+strings.Join(done, " + ")+` >= 0
		ON CONFLICT (site_id, day, name, dim, shard) DO UPDATE SET n = site_counters.n + excluded.n RETURNING 1`, ca...)
		done = []string{`(SELECT COUNT(*) FROM c)`}
	}
	b.WriteString("\nSELECT " + strings.Join(done, " + "))
	var n int64
	err = q.w.QueryRowContext(ctx, q.rebind(b.String()), args...).Scan(&n)
	var pe *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe) && pe.Code == "23505" && pe.TableName == "form_token_uses":
		return ErrNonceUsed
	case errors.As(err, &pe) && pe.Code == "23505" && pe.TableName == "leads":
		return fmt.Errorf("lead with event_id %s: %w", l.EventID, model.ErrConflict)
	}
	return fmt.Errorf("store: insert lead: %w", unavailable(err))
}
