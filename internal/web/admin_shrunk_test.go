package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// TestAdminShrunkDeliveries: an event retention shrank still lists and
// shows on the deliveries page and the lead's story, saying plainly that
// its detail was cleared and after how many days, with what is kept (no
// broken or empty JSON), and offers no replay; a replay posted anyway is
// refused.
func TestAdminShrunkDeliveries(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	now := time.Now()
	queued := now.Add(-40 * 24 * time.Hour)
	lead := e.leads["clean"].ID
	d := &model.Delivery{ID: "dl_shrunk", SiteID: "dent", LeadID: lead, Kind: model.KindQualified,
		EventName: "QualifiedLead", EventID: "shrunk-event-1", PixelID: "123",
		Payload: json.RawMessage(`{"event_name":"QualifiedLead","user_data":{"em":["` + strings.Repeat("a", 64) + `"]}}`),
		State:   model.DeliveryDead, LastError: "refused", NextAt: queued, DeadlineAt: queued.Add(7 * 24 * time.Hour),
		CreatedAt: queued, UpdatedAt: queued}
	if _, err := e.db.DeliveryInsert(ctx, d); err != nil {
		t.Fatal(err)
	}
	kept := `{"event_name":"QualifiedLead","event_time":1,"match_keys":["em"]}`
	if ok, err := e.db.DeliveryShrink(ctx, d.ID, json.RawMessage(kept), now); err != nil || !ok {
		t.Fatalf("shrink: %v %v", ok, err)
	}
	c := e.login()
	for _, path := range []string{"/admin/deliveries?state=dead", "/admin/deliveries", "/admin/leads/" + string(lead)} {
		p := c.get(path)
		if !strings.Contains(p.body, "Detail cleared 40 days after it was queued") ||
			!strings.Contains(p.body, "What is kept of the event") || !strings.Contains(p.body, "&#34;match_keys&#34;") {
			t.Errorf("%s lacks the shrunk event's words or what is kept:\n%s", path, p.body)
		}
		if strings.Contains(p.body, "/admin/deliveries/dl_shrunk/replay") || strings.Contains(p.body, strings.Repeat("a", 64)) {
			t.Errorf("%s offers a replay or shows the cleared keys", path)
		}
	}
	if p := c.post("/admin/deliveries/dl_shrunk/replay", url.Values{"back": {"/admin/deliveries"}}); p.code != http.StatusConflict {
		t.Errorf("replay of a shrunk event: %d", p.code)
	}
}
