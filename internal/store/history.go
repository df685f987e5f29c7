package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// HistoryInsert adds one entry to a lead's history.
func (q Q) HistoryInsert(ctx context.Context, h *model.HistoryEntry) error {
	data, err := json.Marshal(h.Data)
	if err != nil {
		return fmt.Errorf("store: history data: %w", err)
	}
	_, err = q.exec(ctx, `/* Store.HistoryInsert */ INSERT INTO lead_history (id, lead_id, at, kind, data) VALUES (?, ?, ?, ?, ?)`,
		h.ID, string(h.LeadID), h.At.UnixMilli(), h.Kind, string(data))
	if err != nil {
		return fmt.Errorf("store: insert history: %w", err)
	}
	return nil
}

// HistoryByLead returns a lead's history, oldest first.
func (q Q) HistoryByLead(ctx context.Context, id model.LeadID) ([]model.HistoryEntry, error) {
	rows, err := q.query(ctx, `/* Store.HistoryByLead */ SELECT id, lead_id, at, kind, data FROM lead_history
		WHERE lead_id = ? ORDER BY at, id`, string(id))
	if err != nil {
		return nil, fmt.Errorf("store: history: %w", err)
	}
	defer rows.Close()
	var list []model.HistoryEntry
	for rows.Next() {
		var (
			h          model.HistoryEntry
			lead, data string
			at         int64
		)
		if err := rows.Scan(&h.ID, &lead, &at, &h.Kind, &data); err != nil {
			return nil, fmt.Errorf("store: history: %w", err)
		}
		h.LeadID, h.At = model.LeadID(lead), time.UnixMilli(at).UTC()
		if err := json.Unmarshal([]byte(data), &h.Data); err != nil {
			return nil, fmt.Errorf("store: history %s: %w", h.ID, err)
		}
		list = append(list, h)
	}
	return list, rows.Err()
}
