package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/model"
)

// TestIntakeHistoryFolded: a lead whose intake entry says only its verdict,
// score and who decided (no form token checked, no attempt window) has it
// folded into the lead (read from its columns, with the id its own id
// gives), at its reception; a lead t.js sent with its form token stores
// the entry, with the token's check.
func TestIntakeHistoryFolded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	folded := func(l *model.Lead) string { return "h_" + strings.TrimPrefix(string(l.ID), "ld_") }
	plain := f.submit(realLead())
	h, err := f.db.HistoryByLead(ctx, plain.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || h[0].ID != folded(plain) || h[0].Kind != model.HistoryVerdict ||
		h[0].Data["verdict"] != string(plain.Verdict) || !h[0].At.Equal(plain.ReceivedAt) {
		t.Errorf("history %+v of lead %s: want its intake entry folded", h, plain.ID)
	}
	tracked, _ := f.visitAndLead()
	if h, _ := f.db.HistoryByLead(ctx, tracked.ID); len(h) != 1 || h[0].ID == folded(tracked) || h[0].Data["form_token"] == nil {
		t.Errorf("history %+v of the lead with its form token: want its entry stored, with the token's check", h)
	}
}
