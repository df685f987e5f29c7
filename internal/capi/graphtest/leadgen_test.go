package graphtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestLeadgenSide checks the Lead Ads side as Meta documents it: the proof,
// a lead with its non-ASCII answers escaped, a form's leads filtered on
// time_created and paged by cursor, and Meta's error bodies.
func TestLeadgenSide(t *testing.T) {
	s := New(t)
	s.SetAppSecret("app-secret")
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for i := range 5 {
		s.AddLead(Lead{ID: fmt.Sprintf("100%d", i), Created: now.Add(time.Duration(i) * time.Hour), FormID: "77", PageID: "55",
			Fields: []Field{{Name: "full_name", Values: []string{"Jürgen Ö 😀"}}}})
	}
	mac := hmac.New(sha256.New, []byte("app-secret"))
	mac.Write([]byte(Token))
	proof := hex.EncodeToString(mac.Sum(nil))
	get := func(path string, q url.Values) (int, string) {
		t.Helper()
		if q == nil {
			q = url.Values{}
		}
		if q.Get("access_token") == "" {
			q.Set("access_token", Token)
		}
		if _, ok := q["appsecret_proof"]; !ok {
			q.Set("appsecret_proof", proof)
		}
		resp, err := http.Get(s.URL + "/v25.0/" + path + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("1002", nil)
	if code != 200 || !strings.Contains(body, `J\u00fcrgen \u00d6 \ud83d\ude00`) || !strings.Contains(body, `"created_time":"2026-12-03T14:00:00+0000"`) {
		t.Errorf("lead: %d %s", code, body)
	}
	var l struct {
		FieldData []struct{ Values []string } `json:"field_data"`
	}
	json.Unmarshal([]byte(body), &l)
	if len(l.FieldData) != 1 || l.FieldData[0].Values[0] != "Jürgen Ö 😀" {
		t.Errorf("the escapes do not decode to the answer: %+v", l)
	}
	if code, body := get("1002", url.Values{"appsecret_proof": {"00"}}); code != 400 || !strings.Contains(body, "Invalid appsecret_proof") {
		t.Errorf("bad proof: %d %s", code, body)
	}
	if code, body := get("1002", url.Values{"access_token": {"nope"}}); code != 400 || !strings.Contains(body, `"code":190`) {
		t.Errorf("bad token: %d %s", code, body)
	}
	if code, body := get("999", nil); code != 400 || !strings.Contains(body, `"error_subcode":33`) {
		t.Errorf("unknown object: %d %s", code, body)
	}
	// Newer than the second lead, two a page, newest first.
	filter := fmt.Sprintf(`[{"field":"time_created","operator":"GREATER_THAN","value":%d}]`, now.Add(time.Hour).Unix())
	var ids []string
	after := ""
	for range 5 {
		q := url.Values{"filtering": {filter}, "limit": {"2"}}
		if after != "" {
			q.Set("after", after)
		}
		code, body := get("77/leads", q)
		var p struct {
			Data   []struct{ ID string }
			Paging struct {
				Cursors struct{ After string }
				Next    string
			}
		}
		if err := json.Unmarshal([]byte(body), &p); code != 200 || err != nil {
			t.Fatalf("page: %d %s %v", code, body, err)
		}
		for _, d := range p.Data {
			ids = append(ids, d.ID)
		}
		if p.Paging.Next == "" {
			break
		}
		after = p.Paging.Cursors.After
	}
	if fmt.Sprint(ids) != "[1004 1003 1002]" {
		t.Errorf("paged leads %v", ids)
	}
	s.SetPermission("leads_retrieval", "declined")
	if code, body := get("77/leads", nil); code != 403 || !strings.Contains(body, "leads_retrieval") {
		t.Errorf("without leads_retrieval: %d %s", code, body)
	}
	if code, body := get("me/permissions", nil); code != 200 || !strings.Contains(body, `{"permission":"leads_retrieval","status":"declined"}`) {
		t.Errorf("permissions: %d %s", code, body)
	}
}
