package graphtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// TestDatasetQualitySide checks the Dataset Quality stand-in as Meta
// documents the endpoint: the web figures for a dataset the token reads,
// only the fields asked for, and Meta's error bodies for a missing token,
// a missing dataset_id and a dataset the token cannot read.
func TestDatasetQualitySide(t *testing.T) {
	s := New(t)
	s.SetDatasetQuality("111", QualityEvent{EventName: "Lead", Score: 8.1, Keys: map[string]float64{"lead_id": 100, "phone": 60}, EventIDShare: -1})
	get := func(q url.Values) (int, map[string]json.RawMessage) {
		t.Helper()
		resp, err := http.Get(s.URL + "/v24.0/dataset_quality?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]json.RawMessage
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("answer %s: %v", b, err)
		}
		return resp.StatusCode, out
	}
	code, out := get(url.Values{"access_token": {Token}, "dataset_id": {"111"}, "fields": {"web{event_name,event_match_quality}"}})
	var web []struct {
		EventName string `json:"event_name"`
		EMQ       struct {
			Score float64 `json:"composite_score"`
			Keys  []struct {
				Identifier string             `json:"identifier"`
				Coverage   map[string]float64 `json:"coverage"`
			} `json:"match_key_feedback"`
		} `json:"event_match_quality"`
		Dedupe json.RawMessage `json:"dedupe_key_feedback"`
	}
	if err := json.Unmarshal(out["web"], &web); code != 200 || err != nil || len(web) != 1 {
		t.Fatalf("answer %d %s: %v", code, out["web"], err)
	}
	if w := web[0]; w.EventName != "Lead" || w.EMQ.Score != 8.1 || len(w.EMQ.Keys) != 2 || w.EMQ.Keys[0].Identifier != "phone" ||
		w.EMQ.Keys[1].Coverage["percentage"] != 100 || w.Dedupe != nil {
		t.Errorf("web figures: %+v", w)
	}
	if code, out := get(url.Values{"access_token": {Token}, "dataset_id": {"111"}, "fields": {"id"}}); code != 200 || out["web"] != nil {
		t.Errorf("without web among the fields: %d %v", code, out)
	}
	for name, tc := range map[string]struct {
		q    url.Values
		code int
	}{
		"no token":      {url.Values{"dataset_id": {"111"}}, 104},
		"wrong token":   {url.Values{"access_token": {"nope"}, "dataset_id": {"111"}}, 190},
		"no dataset_id": {url.Values{"access_token": {Token}}, 100},
		"not theirs":    {url.Values{"access_token": {Token}, "dataset_id": {"222"}}, 100},
	} {
		status, out := get(tc.q)
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(out["error"], &e); status != 400 || err != nil || e.Code != tc.code || e.Message == "" {
			t.Errorf("%s: %d %s, want 400 with code %d", name, status, out["error"], tc.code)
		}
	}
	if n := s.QualityReads(); n != 2 {
		t.Errorf("reads answered = %d, want 2", n)
	}
}
