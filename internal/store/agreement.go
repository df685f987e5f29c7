package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// agreement is what a lead's place in the reason and agreement counters
// (model.CounterReasons*, model.CounterAgreement) depends on.
type agreement struct {
	// Codes are the codes of its reasons with points, once per reason.
	Codes                     []string
	DecidedBy, Verdict, Rules string
}

// counts are the counters a lead in this state adds (n 1) or takes away
// (n -1).
func (a agreement) counts(n int64) []model.Count {
	owner, crm := a.DecidedBy == model.DecidedByOwner, a.DecidedBy == model.DecidedByCRM
	junk, clean := a.Verdict == string(model.VerdictJunk), a.Verdict == string(model.VerdictClean)
	held := a.Rules == string(model.VerdictReview) || a.Rules == string(model.VerdictJunk)
	var cs []model.Count
	add := func(ok bool, name, dim string) {
		if ok {
			cs = append(cs, model.Count{Name: name, Dim: dim, N: n})
		}
	}
	for _, code := range a.Codes {
		add(true, model.CounterReasons, code)
		add(owner, model.CounterReasonsJudged, code)
		add(owner && junk, model.CounterReasonsJunk, code)
		add(owner && clean, model.CounterReasonsCustomers, code)
		add((owner || crm) && clean && held, model.CounterReasonsOverturned, code)
		add(crm && clean && held, model.CounterReasonsCRM, code)
	}
	add(owner, model.CounterAgreement, model.AgreementJudged)
	add(owner && junk, model.CounterAgreement, model.AgreementJunk)
	add(owner && junk && a.Rules == string(model.VerdictClean), model.CounterAgreement, model.AgreementMissed)
	add(owner && clean && held, model.CounterAgreement, model.AgreementRescued)
	add(crm && clean && held, model.CounterAgreement, model.AgreementCRMRescued)
	return cs
}

// pointCodes are the codes of the reasons with points.
func pointCodes(rs []model.Reason) []string {
	var codes []string
	for _, r := range rs {
		if r.Points > 0 {
			codes = append(codes, r.Code)
		}
	}
	return codes
}

// mergeCounts adds up the counts of the same name and dim and leaves out
// those that come to 0: one row once in CountersAdd's statement (which
// PostgreSQL's ON CONFLICT requires), none for a change that moves nothing.
func mergeCounts(cs []model.Count) []model.Count {
	type key struct{ name, dim string }
	idx := map[key]int{}
	var out []model.Count
	for _, c := range cs {
		k := key{c.Name, c.Dim}
		if i, ok := idx[k]; ok {
			out[i].N += c.N
			continue
		}
		idx[k] = len(out)
		out = append(out, c)
	}
	kept := out[:0]
	for _, c := range out {
		if c.N != 0 {
			kept = append(kept, c)
		}
	}
	return kept
}

// leadState reads what a lead's counters depend on: its site, day of
// receipt, verdict and agreement. On PostgreSQL the row is locked for the
// transaction, so that what is read stays true until the caller's update.
func (q Q) leadState(ctx context.Context, id model.LeadID) (site string, received int64, a agreement, err error) {
	lock := ""
	if q.dialect == Postgres {
		lock = " FOR UPDATE"
	}
	var reasons string
	err = q.queryRow(ctx, `/* Store.leadState */ SELECT site_id, received_at, verdict, decided_by, reasons FROM leads WHERE id = ?`+lock,
		string(id)).Scan(&site, &received, &a.Verdict, &a.DecidedBy, &reasons)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, a, fmt.Errorf("lead %s: %w", id, model.ErrNotFound)
	}
	if err != nil {
		return "", 0, a, fmt.Errorf("store: verdict of lead %s: %w", id, err)
	}
	var rs []model.Reason
	if reasons != "" {
		if err := json.Unmarshal([]byte(reasons), &rs); err != nil {
			return "", 0, a, fmt.Errorf("store: reasons of lead %s: %w", id, err)
		}
	}
	a.Codes = pointCodes(rs)
	if a.DecidedBy == model.DecidedByOwner || a.DecidedBy == model.DecidedByCRM {
		err := q.queryRow(ctx, `/* Store.leadState */ SELECT `+q.rulesVerdict()+` FROM leads l WHERE l.id = ?`,
			string(id)).Scan(&a.Rules)
		if err != nil {
			return "", 0, a, fmt.Errorf("store: rules' verdict of lead %s: %w", id, err)
		}
	}
	return site, received, a, nil
}

// reasonNames are the counters ReasonAgreement reads, in CodeAgreement's
// order after the code.
var reasonNames = []string{model.CounterReasons, model.CounterReasonsJudged, model.CounterReasonsJunk,
	model.CounterReasonsCustomers, model.CounterReasonsOverturned, model.CounterReasonsCRM}

// agreementCounters sums a site's counters of the given names over the
// days from since's (UTC) to the last, by name and dim.
func (q Q) agreementCounters(ctx context.Context, site model.SiteID, since time.Time, names ...string) (map[[2]string]int, error) {
	args := []any{string(site), model.Day(since)}
	marks := ""
	for i, n := range names {
		if i > 0 {
			marks += ", "
		}
		marks += "?"
		args = append(args, n)
	}
	out := map[[2]string]int{}
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var name, dim string
		var n int
		if err := r.Scan(&name, &dim, &n); err != nil {
			return err
		}
		out[[2]string{name, dim}] = n
		return nil
	}, `/* Store.agreementCounters */ SELECT name, dim, CAST(SUM(n) AS BIGINT) FROM site_counters
		WHERE site_id = ? AND day >= ? AND name IN (`+marks+`) GROUP BY name, dim`, args...)
	return out, err
}

// agreementRecount is the SQL that recounts the reason and agreement
// counters of a site's leads received from ? to ? (ms, the end excluded).
func (q Q) agreementRecount() []string {
	code := q.jsonText("r.value", "code")
	reasons := func(name, cond string) string {
		return `/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT l.site_id, l.received_at / 86400000, '` + name + `', ` + code + `, 0, COUNT(*)
			FROM leads l, ` + q.jsonElements("l.reasons", "r") + `
			WHERE l.site_id = ? AND l.received_at >= ? AND l.received_at < ? AND ` + q.jsonInt("r.value", "points") + ` > 0 AND ` + cond + `
			GROUP BY l.site_id, l.received_at / 86400000, ` + code
	}
	totals := func(dim, cond string) string {
		return `/* Store.CountersRebuild */ INSERT INTO site_counters (site_id, day, name, dim, shard, n)
			SELECT l.site_id, l.received_at / 86400000, 'agreement', '` + dim + `', 0, COUNT(*) FROM leads l
			WHERE l.site_id = ? AND l.received_at >= ? AND l.received_at < ? AND ` + cond + `
			GROUP BY l.site_id, l.received_at / 86400000`
	}
	held := q.rulesVerdict() + ` IN ('review', 'junk')`
	return []string{
		reasons("reasons", "1 = 1"),
		reasons("reasons_judged", "l.decided_by = 'owner'"),
		reasons("reasons_junk", "l.decided_by = 'owner' AND l.verdict = 'junk'"),
		reasons("reasons_customers", "l.decided_by = 'owner' AND l.verdict = 'clean'"),
		reasons("reasons_overturned", "l.decided_by IN ('owner', 'crm') AND l.verdict = 'clean' AND "+held),
		reasons("reasons_crm", "l.decided_by = 'crm' AND l.verdict = 'clean' AND "+held),
		totals("judged", "l.decided_by = 'owner'"),
		totals("junk", "l.decided_by = 'owner' AND l.verdict = 'junk'"),
		totals("missed", "l.decided_by = 'owner' AND l.verdict = 'junk' AND "+q.rulesVerdict()+" = 'clean'"),
		totals("rescued", "l.decided_by = 'owner' AND l.verdict = 'clean' AND "+held),
		totals("crm_rescued", "l.decided_by = 'crm' AND l.verdict = 'clean' AND "+held),
	}
}
