package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// A lead's first history entry, the verdict the rules gave it at intake,
// is most often just the lead's own verdict, score and who decided, at the
// time it was received: then it is folded into the lead (migration 0550),
// not stored, and HistoryByLead reads it from the lead's columns while the
// lead has no stored entry. Before anything changes those columns
// (leadVerdictSet) or adds a later entry (HistoryInsert), historyUnfold
// stores it, so the history reads the same before and after. An intake
// entry with more (the form token's check, an attempt window) is stored as
// it was. Every lead gets its intake entry in the transaction that inserts
// it, so a lead without a stored entry is one whose entry is folded.

// intakeHistoryID is the id of a lead's folded intake entry: the lead's
// own id's time and random part, so it sorts with the lead.
func intakeHistoryID(id model.LeadID) string {
	return "h_" + strings.TrimPrefix(string(id), "ld_")
}

// intakeEntry is the intake entry folded into a lead with these columns,
// its data as a stored entry's reads back from JSON.
func intakeEntry(id model.LeadID, received int64, verdict string, score int, decidedBy string) model.HistoryEntry {
	return model.HistoryEntry{ID: intakeHistoryID(id), LeadID: id, At: time.UnixMilli(received).UTC(), Kind: model.HistoryVerdict,
		Data: map[string]any{"verdict": verdict, "score": float64(score), "decided_by": decidedBy}}
}

// historyIntakeData is h's data as stored, and whether h, the intake entry
// of the new lead l, is folded into it: a verdict entry at the lead's
// reception holding its verdict, score and who decided, and nothing else.
// The caller stores it only when it is not. The data is encoded once, for
// the comparison and the entry.
func historyIntakeData(h *model.HistoryEntry, l *model.Lead) (data []byte, folds bool, err error) {
	data, err = json.Marshal(h.Data)
	if err != nil {
		return nil, false, fmt.Errorf("store: history data: %w", err)
	}
	// The folded entry's data has three keys: an entry with another number
	// of them (a form token's check, an attempt window) is not it.
	if h.Kind != model.HistoryVerdict || h.LeadID != l.ID || h.At.UnixMilli() != l.ReceivedAt.UnixMilli() || len(h.Data) != 3 {
		return data, false, nil
	}
	want, _ := json.Marshal(intakeEntry(l.ID, l.ReceivedAt.UnixMilli(), string(l.Verdict), l.Score, l.DecidedBy).Data)
	return data, string(data) == string(want), nil
}

// HistoryIntakeInsert stores h, the intake entry of the lead l just
// inserted, unless it is folded into the lead (historyIntakeData).
func (q Q) HistoryIntakeInsert(ctx context.Context, h *model.HistoryEntry, l *model.Lead) error {
	data, folds, err := historyIntakeData(h, l)
	if err != nil || folds {
		return err
	}
	return q.historyInsertData(ctx, h, data)
}

// HistoryInsert adds one entry to a lead's history, after the lead's
// folded intake entry, if it has one (historyUnfold).
func (q Q) HistoryInsert(ctx context.Context, h *model.HistoryEntry) error {
	if err := q.historyUnfold(ctx, h.LeadID); err != nil {
		return err
	}
	return q.historyInsert(ctx, h)
}

func (q Q) historyInsert(ctx context.Context, h *model.HistoryEntry) error {
	data, err := json.Marshal(h.Data)
	if err != nil {
		return fmt.Errorf("store: history data: %w", err)
	}
	return q.historyInsertData(ctx, h, data)
}

// historyInsertData is historyInsert with h's data encoded already.
func (q Q) historyInsertData(ctx context.Context, h *model.HistoryEntry, data []byte) error {
	_, err := q.exec(ctx, `/* Store.HistoryInsert */ INSERT INTO lead_history (id, lead_id, at, kind, data) VALUES (?, ?, ?, ?, ?)`,
		h.ID, string(h.LeadID), h.At.UnixMilli(), h.Kind, string(data))
	if err != nil {
		return fmt.Errorf("store: insert history: %w", err)
	}
	return nil
}

// historyUnfold stores the lead's folded intake entry, read from its
// columns, when it has no stored entry; it does nothing otherwise (nor for
// a lead that is not there).
func (q Q) historyUnfold(ctx context.Context, id model.LeadID) error {
	h, err := q.historyFolded(ctx, id)
	if err != nil || h == nil {
		return err
	}
	// Two transactions may unfold the same lead at once (PostgreSQL): the
	// entry is the same, the second finds it there.
	data, err := json.Marshal(h.Data)
	if err != nil {
		return fmt.Errorf("store: history data: %w", err)
	}
	_, err = q.exec(ctx, `/* Store.historyUnfold */ INSERT INTO lead_history (id, lead_id, at, kind, data) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, h.ID, string(h.LeadID), h.At.UnixMilli(), h.Kind, string(data))
	if err != nil {
		return fmt.Errorf("store: unfold the history of lead %s: %w", id, err)
	}
	return nil
}

// historyFolded is the lead's folded intake entry, nil when the lead has a
// stored entry or is not there.
func (q Q) historyFolded(ctx context.Context, id model.LeadID) (*model.HistoryEntry, error) {
	var (
		received         int64
		verdict, decided string
		score            int
	)
	err := q.queryRow(ctx, `/* Store.historyFolded */ SELECT received_at, verdict, score, decided_by FROM leads l
		WHERE id = ? AND NOT EXISTS (SELECT 1 FROM lead_history h WHERE h.lead_id = l.id)`, string(id)).
		Scan(&received, &verdict, &score, &decided)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: folded history of lead %s: %w", id, err)
	}
	h := intakeEntry(id, received, verdict, score, decided)
	return &h, nil
}

// HistoryByLead returns a lead's history, oldest first, its folded intake
// entry among it.
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
	if err := rows.Err(); err != nil || len(list) > 0 {
		return list, err
	}
	rows.Close()
	h, err := q.historyFolded(ctx, id)
	if err != nil || h == nil {
		return nil, err
	}
	return []model.HistoryEntry{*h}, nil
}
