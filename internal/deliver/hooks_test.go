package deliver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// hooked is a platform that says what is its own through platform's
// optional interfaces (a check per row, a mode), as Meta does, with no
// code of its own in the runner.
type hooked struct {
	mu   sync.Mutex
	mode string
	sent []string
}

func (*hooked) Label() string             { return "Hooked" }
func (*hooked) On(*model.Site) bool       { return true }
func (*hooked) BatchSize() int            { return 10 }
func (h *hooked) Mode(*model.Site) string { h.mu.Lock(); defer h.mu.Unlock(); return h.mode }

func (*hooked) Check(_ *model.Site, d *model.Delivery, _ time.Time) error {
	switch {
	case strings.HasSuffix(d.EventID, "-1"):
		return fmt.Errorf("older than Hooked takes: %w", platform.ErrTooOld)
	case strings.HasSuffix(d.EventID, "-2"):
		return &platform.Failure{Class: platform.Refused, Words: "Hooked would refuse it", Response: json.RawMessage(`{"rule":"r"}`)}
	}
	return nil
}

func (h *hooked) Send(_ context.Context, _ *model.Site, rows []*model.Delivery) ([]platform.Outcome, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]platform.Outcome, len(rows))
	for i, d := range rows {
		h.sent = append(h.sent, d.EventID)
		out[i] = platform.Outcome{Accepted: true, Mode: h.mode}
	}
	return out, nil
}

// TestPlatformHooks: PlatformHandler asks any platform that has them for
// its check of each row (too old expires, anything else is dead with the
// platform's response) and its mode (marked on the rows; in dry run they
// are kept and never sent).
func TestPlatformHooks(t *testing.T) {
	t.Parallel()
	f := newFixture(t, model.ModeLive)
	p := &hooked{mode: model.ModeLive}
	r := deliver.New(deliver.Options{Store: f.db, Now: f.clk.Now, Node: "node-a",
		Handlers: map[string]deliver.Handler{"hooked": deliver.NewPlatformHandler(p, f.db)}})
	batch := func(tag string) []*model.Delivery {
		return f.queue(t, f.site, 4, func(i int, d *model.Delivery, e *capi.Event) {
			d.Destination, d.LeadID = "hooked", model.LeadID(fmt.Sprintf("ld_%s_%d", tag, i))
			d.EventID = fmt.Sprintf("%s-%d", tag, i)
		})
	}
	ds := batch("a")
	st, err := r.RunOnce(f.ctx)
	if err != nil || st.Sent != 2 || st.Expired != 1 || st.Dead != 1 || st.Requests != 1 {
		t.Fatalf("%+v %v", st, err)
	}
	got := f.reload(t, ds)
	want := []model.DeliveryState{model.DeliverySent, model.DeliveryExpired, model.DeliveryDead, model.DeliverySent}
	for i, d := range got {
		if d.State != want[i] || d.Mode != model.ModeLive {
			t.Errorf("row %d: %s mode %q %q", i, d.State, d.Mode, d.LastError)
		}
	}
	if !strings.Contains(got[1].LastError, "older than Hooked") || string(got[2].Response) != `{"rule":"r"}` ||
		got[2].LastError != "Hooked would refuse it" {
		t.Errorf("expired %q; dead %q %s", got[1].LastError, got[2].LastError, got[2].Response)
	}

	p.mu.Lock()
	p.mode = model.ModeDryRun
	p.mu.Unlock()
	ds = batch("b")
	if st, err := r.RunOnce(f.ctx); err != nil || st.DryRun != 2 || st.Requests != 0 {
		t.Fatalf("dry run: %+v %v", st, err)
	}
	for i, d := range f.reload(t, ds) {
		if (i == 0 || i == 3) && (d.State != model.DeliveryDryRun || d.Mode != model.ModeDryRun || d.SentAt != nil) {
			t.Errorf("dry run row %d: %+v", i, d)
		}
	}
	if len(p.sent) != 2 {
		t.Errorf("sent %v", p.sent)
	}
}
