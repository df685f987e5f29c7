package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// What the store keeps of the owner's word: leads decided by the owner
// (decided_by = 'owner', verdict clean for "real customer", junk for
// "junk"), the reasons the rules gave them (leads.reasons) and the verdict
// the rules gave at intake (the lead's first verdict in lead_history). The
// figures below are read from those, and from the leads a CRM stage made
// clean (decided_by = 'crm': the CRM met the person, so the rules that held
// them were wrong as surely as when the owner says so); the text model's own
// table is text_models and learns from the owner's word alone.

// CodeAgreement is how the owner's word went on the leads one reason code
// was given to, over a period.
type CodeAgreement struct {
	Code string
	// Leads is how many leads got the code with points.
	Leads int
	// Judged of them the owner judged: Junk they marked junk (the owner
	// agreed with the code), Customers real customers. Overturned are the
	// leads the rules held (review or junk at intake) that turned out real
	// customers, by the owner's word or a CRM stage: the leads the code
	// cost. CRM of them a CRM stage showed.
	Judged, Junk, Customers, Overturned, CRM int
}

// AgreementTotals is the owner's word on a site's leads over a period,
// against the rules' verdict at intake.
type AgreementTotals struct {
	// Judged is how many leads the owner judged: Junk junk, the rest real
	// customers.
	Judged, Junk int
	// Missed are leads the rules passed as clean that the owner marked junk:
	// no reason code was wrong there, one was missing.
	Missed int
	// Rescued are leads the rules held (review or junk) that the owner
	// marked real customers.
	Rescued int
	// CRMRescued are leads the rules held that a CRM stage made clean.
	CRMRescued int
}

// jsonText is the SQL for the text at key of a JSON object held in expr (a
// TEXT column or a json_each value).
func (q Q) jsonText(expr, key string) string {
	if q.dialect == Postgres {
		return "((" + expr + ")::jsonb ->> '" + key + "')"
	}
	return "json_extract(" + expr + ", '$." + key + "')"
}

// jsonInt is jsonText read as an integer.
func (q Q) jsonInt(expr, key string) string {
	if q.dialect == Postgres {
		return "((" + expr + ")::jsonb ->> '" + key + "')::integer"
	}
	return "json_extract(" + expr + ", '$." + key + "')"
}

// jsonElements is a FROM item giving one row per element of the JSON
// array in col, each as alias.value.
func (q Q) jsonElements(col, alias string) string {
	if q.dialect == Postgres {
		return "jsonb_array_elements(" + col + "::jsonb) AS " + alias + " (value)"
	}
	return "json_each(" + col + ") AS " + alias
}

// rulesVerdict is the SQL for the verdict the rules gave lead l at intake:
// its first verdict history entry, or its own verdict when that entry is
// folded into it (the lead has none stored: see history.go).
func (q Q) rulesVerdict() string {
	return `COALESCE((SELECT ` + q.jsonText("h.data", "verdict") + ` FROM lead_history h
		WHERE h.lead_id = l.id AND h.kind = 'verdict' ORDER BY h.at, h.id LIMIT 1),
		CASE WHEN EXISTS (SELECT 1 FROM lead_history h WHERE h.lead_id = l.id) THEN '' ELSE l.verdict END)`
}

// ReasonAgreement counts, per reason code given with points to the site's
// leads received since the given time's UTC day, how often the owner
// agreed and how often the owner or a CRM stage overturned it; most
// overturned first. Reasons of 0 points (evidence, a text model in
// shadow) are left out. It reads the counters (model.CounterReasons*),
// a few rows per code and day, not the leads.
func (q Q) ReasonAgreement(ctx context.Context, site model.SiteID, since time.Time) ([]CodeAgreement, error) {
	sums, err := q.agreementCounters(ctx, site, since, reasonNames...)
	if err != nil {
		return nil, fmt.Errorf("store: reason agreement: %w", err)
	}
	var out []CodeAgreement
	for k, n := range sums {
		if k[0] != model.CounterReasons || n <= 0 {
			continue
		}
		a := CodeAgreement{Code: k[1], Leads: n}
		for i, f := range []*int{&a.Judged, &a.Junk, &a.Customers, &a.Overturned, &a.CRM} {
			*f = sums[[2]string{reasonNames[i+1], k[1]}]
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b CodeAgreement) int {
		return cmp.Or(cmp.Compare(b.Overturned, a.Overturned), cmp.Compare(b.Leads, a.Leads), strings.Compare(a.Code, b.Code))
	})
	return out, nil
}

// AgreementTotals sums up the owner's word on the site's leads received
// since the given time's UTC day, against the rules' verdicts at intake,
// and the leads the rules held that a CRM stage made clean: from the
// counters (model.CounterAgreement).
func (q Q) AgreementTotals(ctx context.Context, site model.SiteID, since time.Time) (AgreementTotals, error) {
	var t AgreementTotals
	sums, err := q.agreementCounters(ctx, site, since, model.CounterAgreement)
	if err != nil {
		return t, fmt.Errorf("store: agreement totals: %w", err)
	}
	get := func(dim string) int { return sums[[2]string{model.CounterAgreement, dim}] }
	t.Judged, t.Junk, t.Missed = get(model.AgreementJudged), get(model.AgreementJunk), get(model.AgreementMissed)
	t.Rescued, t.CRMRescued = get(model.AgreementRescued), get(model.AgreementCRMRescued)
	return t, nil
}

// OwnerJudgement is one lead the owner judged, as the text model learns
// from it.
type OwnerJudgement struct {
	LeadID  model.LeadID
	Message string
	Junk    bool
}

// LeadOwnerJudged returns up to limit of the site's owner-judged leads,
// newest first.
func (q Q) LeadOwnerJudged(ctx context.Context, site model.SiteID, limit int) ([]OwnerJudgement, error) {
	rows, err := q.query(ctx, `/* Store.LeadOwnerJudged */ SELECT id, message, verdict FROM leads
		WHERE site_id = ? AND decided_by = 'owner' ORDER BY received_at DESC, id DESC LIMIT ?`, string(site), limit)
	return scanAll(rows, err, "owner-judged leads", func(r scanner) (OwnerJudgement, error) {
		var (
			j       OwnerJudgement
			id, ver string
		)
		err := r.Scan(&id, &j.Message, &ver)
		j.LeadID, j.Junk = model.LeadID(id), ver == string(model.VerdictJunk)
		return j, err
	})
}

// LeadOwnerFingerprint sums up the site's owner-judged leads in a string
// that changes when one is judged, judged the other way, forgotten,
// erased or deleted: how many, how many junk, when the junk ones came, and
// the length of their messages.
func (q Q) LeadOwnerFingerprint(ctx context.Context, site model.SiteID) (judged int, fingerprint string, err error) {
	var junk, junkAt, length int64
	err = q.queryRow(ctx, `/* Store.LeadOwnerFingerprint */ SELECT COUNT(*),
		COALESCE(SUM(CASE WHEN verdict = 'junk' THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN verdict = 'junk' THEN received_at ELSE 0 END), 0),
		COALESCE(SUM(LENGTH(message)), 0)
		FROM leads WHERE site_id = ? AND decided_by = 'owner'`, string(site)).Scan(&judged, &junk, &junkAt, &length)
	if err != nil {
		return 0, "", fmt.Errorf("store: owner fingerprint: %w", err)
	}
	return judged, fmt.Sprintf("%d/%d/%d/%d", judged, junk, junkAt, length), nil
}

// TextModelRow is a site's stored text model.
type TextModelRow struct {
	Site        model.SiteID
	TrainedAt   time.Time
	Judged      int
	Fingerprint string
	// Data is the model as qualify.TextModel encodes it (JSON).
	Data []byte
}

// TextModelGet returns the site's stored text model.
func (q Q) TextModelGet(ctx context.Context, site model.SiteID) (*TextModelRow, error) {
	var (
		m    = TextModelRow{Site: site}
		at   int64
		data string
	)
	err := q.queryRow(ctx, `/* Store.TextModelGet */ SELECT trained_at, judged, fingerprint, data FROM text_models WHERE site_id = ?`,
		string(site)).Scan(&at, &m.Judged, &m.Fingerprint, &data)
	if err != nil {
		return nil, notFound(err, "text model of site "+string(site))
	}
	m.TrainedAt, m.Data = time.UnixMilli(at).UTC(), []byte(data)
	return &m, nil
}

// TextModelPut stores a site's text model in place of the one before.
func (q Q) TextModelPut(ctx context.Context, m *TextModelRow) error {
	_, err := q.exec(ctx, `/* Store.TextModelPut */ INSERT INTO text_models (site_id, trained_at, judged, fingerprint, data)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (site_id) DO UPDATE SET trained_at = excluded.trained_at,
		judged = excluded.judged, fingerprint = excluded.fingerprint, data = excluded.data`,
		string(m.Site), m.TrainedAt.UnixMilli(), m.Judged, m.Fingerprint, string(m.Data))
	if err != nil {
		return fmt.Errorf("store: put text model of %s: %w", m.Site, err)
	}
	return nil
}

// TextModelFingerprint returns the fingerprint the site's stored model was
// trained on, or "" when it has none.
func (q Q) TextModelFingerprint(ctx context.Context, site model.SiteID) (string, error) {
	var f string
	err := q.queryRow(ctx, `/* Store.TextModelFingerprint */ SELECT fingerprint FROM text_models WHERE site_id = ?`, string(site)).Scan(&f)
	if err == sql.ErrNoRows {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: text model fingerprint: %w", err)
	}
	return f, nil
}
