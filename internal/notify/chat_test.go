package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/model"
)

// Each kind of webhook gets what its service reads: Slack-style a text,
// Telegram the chat id (taken from the address, which is posted to without
// its query) and the text, Teams an Adaptive Card, generic the whole
// notification as fields.
func TestChatKinds(t *testing.T) {
	var gotPath, gotQuery string
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotQuery = r.URL.Path, r.URL.RawQuery
		b, _ := io.ReadAll(r.Body)
		got = nil
		if err := json.Unmarshal(b, &got); err != nil || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad body", http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	site := &model.Site{ID: "dent", Name: "Istanbul Dental"}
	lead := &model.Lead{ID: "ld_1", Name: "Ayşe Yılmaz", Phone: "+90 532 412 87 19", Message: "randevu <!channel>"}
	g := generic("tr", site, lead, model.VerdictClean, "https://t.example.com/admin/leads/ld_1")
	for _, c := range []struct {
		kind, path string
		check      func() bool
	}{
		{ChatSlack, "/slack", func() bool {
			text := got["text"].(string)
			return strings.Contains(text, "Ayşe Yılmaz") && strings.Contains(text, "randevu &lt;!channel&gt;") && len(got) == 1
		}},
		{ChatTelegram, "/bot123:ABC/sendMessage?chat_id=-100200", func() bool {
			return gotQuery == "" && got["chat_id"] == "-100200" && strings.Contains(got["text"].(string), "yeni gerçek başvuru")
		}},
		{ChatTeams, "/teams", func() bool {
			card := got["attachments"].([]any)[0].(map[string]any)["content"].(map[string]any)
			return got["type"] == "message" && strings.Contains(card["body"].([]any)[0].(map[string]any)["text"].(string), "ld_1")
		}},
		{ChatGeneric, "/any", func() bool {
			return got["event"] == "lead" && got["verdict"] == "clean" && got["lead_id"] == "ld_1" && got["site_name"] == "Istanbul Dental" &&
				got["phone"] == "+90 532 412 87 19" && got["url"] == "https://t.example.com/admin/leads/ld_1"
		}},
	} {
		target := srv.URL + c.path
		if msg := CheckChat(c.kind, target); msg != "" {
			t.Errorf("%s: %s refused: %s", c.kind, target, msg)
		}
		a := postChat(context.Background(), srv.Client(), c.kind, target, g)
		if !a.OK || !strings.HasPrefix(c.path, gotPath) || !c.check() {
			t.Errorf("%s: answer %+v, posted to %s?%s: %v", c.kind, a, gotPath, gotQuery, got)
		}
	}
	if msg := CheckChat(ChatSlack, "http://hooks.example.com/x"); msg == "" {
		t.Errorf("a plain-http webhook on another machine was taken")
	}
}
