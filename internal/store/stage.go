package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

const stageColumns = `lead_id, stage, at, event_name, event_id, value, currency, action_source, created_at`

// LeadStageInsert records that a lead reached a stage. A stage the lead
// already has is left as it is and inserted reports false: each stage is
// recorded once per lead. A stage recorded is counted in its site's
// (st.SiteID) counters of the day it happened (stages, and its value in
// stage_cents), in the same call: call it in a transaction.
func (q Q) LeadStageInsert(ctx context.Context, st *model.LeadStage) (inserted bool, err error) {
	// The campaign report counts the stage on its lead's day, under where
	// the lead came from.
	err = q.reportMove(ctx, st.LeadID, func() error {
		inserted, err = q.leadStageInsert(ctx, st)
		return err
	})
	return inserted, err
}

func (q Q) leadStageInsert(ctx context.Context, st *model.LeadStage) (inserted bool, err error) {
	var value any
	if st.Value != nil {
		value = *st.Value
	}
	res, err := q.exec(ctx, `/* Store.LeadStageInsert */ INSERT INTO lead_stages (`+stageColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (lead_id, stage) DO NOTHING`,
		string(st.LeadID), st.Stage, st.At.UnixMilli(), st.EventName, st.EventID, value, st.Currency, st.ActionSource,
		st.CreatedAt.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("store: insert stage of lead %s: %w", st.LeadID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return false, nil
	}
	return true, q.CountersAdd(ctx, st.SiteID, model.Day(st.At), string(st.LeadID)+" "+st.Stage, stageCounts(st)...)
}

// stageCounts are the counts one stage adds.
func stageCounts(st *model.LeadStage) []model.Count {
	out := []model.Count{{Name: model.CounterStages, Dim: st.Stage, N: 1}}
	if st.Value != nil && st.Currency != "" {
		out = append(out, model.Count{Name: model.CounterStageCents, Dim: model.StageCentsDim(st.Stage, st.Currency), N: model.Cents(*st.Value)})
	}
	return out
}

// LeadStagesByLead returns the stages a lead reached, in the order they
// were recorded.
func (q Q) LeadStagesByLead(ctx context.Context, id model.LeadID) ([]model.LeadStage, error) {
	rows, err := q.query(ctx, `/* Store.LeadStagesByLead */ SELECT `+stageColumns+`
		FROM lead_stages WHERE lead_id = ? ORDER BY created_at, stage`, string(id))
	if err != nil {
		return nil, fmt.Errorf("store: stages: %w", err)
	}
	return scanStages(rows)
}

// LeadStagesByLeads returns the stages of each of the leads (a page of the
// inbox), each lead's in the order they were recorded; a lead without
// stages has no entry.
func (q Q) LeadStagesByLeads(ctx context.Context, ids []model.LeadID) (map[model.LeadID][]model.LeadStage, error) {
	out := map[model.LeadID][]model.LeadStage{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = string(id)
	}
	rows, err := q.query(ctx, `/* Store.LeadStagesByLeads */ SELECT `+stageColumns+`
		FROM lead_stages WHERE lead_id IN (?`+strings.Repeat(", ?", len(ids)-1)+`) ORDER BY created_at, stage`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: stages of leads: %w", err)
	}
	list, err := scanStages(rows)
	if err != nil {
		return nil, err
	}
	for _, st := range list {
		out[st.LeadID] = append(out[st.LeadID], st)
	}
	return out, nil
}

func scanStages(rows *sql.Rows) ([]model.LeadStage, error) {
	defer rows.Close()
	var list []model.LeadStage
	for rows.Next() {
		var (
			st          model.LeadStage
			lead        string
			at, created int64
			value       sql.NullFloat64
		)
		if err := rows.Scan(&lead, &st.Stage, &at, &st.EventName, &st.EventID, &value, &st.Currency, &st.ActionSource,
			&created); err != nil {
			return nil, fmt.Errorf("store: stages: %w", err)
		}
		st.LeadID, st.At, st.CreatedAt = model.LeadID(lead), time.UnixMilli(at).UTC(), time.UnixMilli(created).UTC()
		if value.Valid {
			v := value.Float64
			st.Value = &v
		}
		list = append(list, st)
	}
	return list, rows.Err()
}
