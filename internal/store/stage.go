package store

import (
	"context"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// LeadStageInsert records that a lead reached a stage. A stage the lead
// already has is left as it is and inserted reports false: each stage is
// recorded once per lead.
func (q Q) LeadStageInsert(ctx context.Context, st *model.LeadStage) (inserted bool, err error) {
	res, err := q.exec(ctx, `/* Store.LeadStageInsert */ INSERT INTO lead_stages
		(lead_id, stage, at, event_name, event_id, created_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (lead_id, stage) DO NOTHING`,
		string(st.LeadID), st.Stage, st.At.UnixMilli(), st.EventName, st.EventID, st.CreatedAt.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("store: insert stage of lead %s: %w", st.LeadID, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// LeadStagesByLead returns the stages a lead reached, in the order they
// were recorded.
func (q Q) LeadStagesByLead(ctx context.Context, id model.LeadID) ([]model.LeadStage, error) {
	rows, err := q.query(ctx, `/* Store.LeadStagesByLead */ SELECT lead_id, stage, at, event_name, event_id, created_at
		FROM lead_stages WHERE lead_id = ? ORDER BY created_at, stage`, string(id))
	if err != nil {
		return nil, fmt.Errorf("store: stages: %w", err)
	}
	defer rows.Close()
	var list []model.LeadStage
	for rows.Next() {
		var (
			st          model.LeadStage
			lead        string
			at, created int64
		)
		if err := rows.Scan(&lead, &st.Stage, &at, &st.EventName, &st.EventID, &created); err != nil {
			return nil, fmt.Errorf("store: stages: %w", err)
		}
		st.LeadID, st.At, st.CreatedAt = model.LeadID(lead), time.UnixMilli(at).UTC(), time.UnixMilli(created).UTC()
		list = append(list, st)
	}
	return list, rows.Err()
}
