package web_test

import (
	"encoding/json"
	"testing"
)

// TestFillTimeSource: a fill under two seconds is final junk when the
// visitor's browser posted it (our tracker measured it) and junk by its
// points, saying so, when the site's server posted it with its API key. The
// body cannot claim to be either.
func TestFillTimeSource(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct {
		name   string
		phone  string
		hdr    map[string]string
		source string
		final  bool
	}{
		{"browser", "0532 418 27 63", fromSite, "tracker", true},
		{"site's server", "0541 736 90 12", map[string]string{"Authorization": "Bearer " + apiKey}, "backend", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Another person each time: a duplicate would be junk anyway.
			body := `{"site":"dent","phone":"` + tt.phone + `","name":"Ayşe Yılmaz","fill_ms":900,
			  "message":"İmplant için muayene randevusu almak istiyorum, hafta içi uygunum."}`
			code, _, resp := e.do("POST", "/v1/leads", "application/json", body, tt.hdr)
			if code != 202 {
				t.Fatalf("lead: %d %s", code, resp)
			}
			var out struct{ ID string }
			json.Unmarshal([]byte(resp), &out)
			l := e.lead(out.ID)
			// The fill time alone makes it junk: the built-in model's
			// reading of the message (MODEL_REQUEST, 0 points) is shown
			// beside it and changes nothing.
			scoring := 0
			for _, r := range l["reasons"].([]any) {
				if r.(map[string]any)["code"] != "MODEL_REQUEST" {
					scoring++
				}
			}
			if l["verdict"] != "junk" || scoring != 1 {
				t.Errorf("verdict %v, reasons %v", l["verdict"], l["reasons"])
			}
			// Who measured it is kept with the lead (a replay reads it).
			if l["fill_by"] != tt.source {
				t.Errorf("fill_by %v, want %s", l["fill_by"], tt.source)
			}
			var found bool
			for _, r := range l["reasons"].([]any) {
				x := r.(map[string]any)
				if x["code"] != "FILL_TOO_FAST" {
					continue
				}
				found = true
				ev := x["evidence"].(map[string]any)
				if ev["source"] != tt.source || (x["final"] == true) != tt.final {
					t.Errorf("reason %v", x)
				}
			}
			if !found {
				t.Errorf("no FILL_TOO_FAST in %v", l["reasons"])
			}
		})
	}
	if code, _, resp := e.do("POST", "/v1/leads", "application/json", `{"site":"dent","phone":"0532 418 27 63","FromServer":true}`, fromSite); code != 400 {
		t.Errorf("a body naming FromServer: %d %s", code, resp)
	}
}
