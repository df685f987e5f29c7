package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// longWord is an unbroken string longer than a phone's screen is wide.
var longWord = strings.Repeat("Uzunkelimeboşluksuz", 8)

// longPage is a landing page address as ads leave it: click ids, campaign
// parameters and a long tail.
var longPage = origin + "/tedaviler/implant-tedavisi-istanbul-kadikoy-ve-atasehir-subelerimizde?utm_source=facebook&utm_medium=paid_social" +
	"&utm_campaign=implant-kis-kampanyasi-2026-istanbul-anadolu-yakasi&utm_content=" + longWord +
	"&fbclid=IwZXh0bgNhZW0BMABhZGlkAasXR0Z2QmpQZmJyAR2abcdefghijklmnopqrstuvwxyz0123456789" + longWord +
	"&ttclid=E.C.P.CqgBzFq3RkQ"

// addStoryLead stores a lead with long unbroken strings and a long page
// address, gives it a history of every kind the use cases write (with the
// data they write) and a wall of events Meta could not be reached for. It
// returns the lead.
func addStoryLead(t *testing.T, e *adminEnv) *model.Lead {
	t.Helper()
	ctx := context.Background()
	site, err := e.db.SiteByID(ctx, "dent")
	if err != nil {
		t.Fatal(err)
	}
	fill := int64(31000)
	l, _, err := e.svc.Submit(ctx, site, &app.LeadInput{Name: "Zeynep " + longWord, Email: "zeynep." + strings.ToLower(longWord) + "@gmail.com",
		Phone: "0532 555 12 34", Message: "Merhaba, implant için randevu almak istiyorum. " + longWord + " Salı öğleden sonra uygunum.",
		FillMS: &fill, PageURL: longPage, FBClid: "IwAR" + longWord, ClientIP: "85.105.9.9", UserAgent: "Mozilla/5.0 (iPhone) " + longWord})
	if err != nil {
		t.Fatal(err)
	}
	// The owner called it a real customer: it stands.
	if l, err = e.svc.AddEvidence(ctx, site, l.ID, qualify.Evidence{Type: qualify.EvidenceCustomer, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC()
	open := at.Add(30 * time.Minute).Format(time.RFC3339)
	history := []map[string]any{
		// Intake, with the form token's facts.
		{"kind": model.HistoryVerdict, "verdict": "review", "score": 35, "decided_by": "rules", "open_until": open,
			"form_token": map[string]any{"checked": true, "valid": true, "server_fill_ms": 31200}},
		{"kind": model.HistoryVerdict, "verdict": "junk", "score": 80, "decided_by": "rules", "source": model.SourceWhatsApp,
			"form_token": map[string]any{"checked": true, "valid": false, "server_fill_ms": 0, "problem": app.TokenForged}},
		// A second attempt.
		{"kind": model.HistoryVerdict, "verdict": "review", "score": 35, "decided_by": "rules", "was": "junk",
			"changed": "message, phone, fill_ms", "note": "The visitor sent the form again: the lead holds this attempt's values.", "open_until": open},
		// Evidence of every type, and the verdicts they made.
		{"kind": model.HistoryEvidence, "type": "junk", "at": at.Format(time.RFC3339)},
		{"kind": model.HistoryVerdict, "verdict": "junk", "was": "review", "score": 100, "decided_by": "owner", "cancelled_events": 2},
		{"kind": model.HistoryEvidence, "type": "customer", "at": at.Format(time.RFC3339)},
		{"kind": model.HistoryVerdict, "verdict": "clean", "was": "junk", "score": 0, "decided_by": "owner", "released_events": 1},
		{"kind": model.HistoryEvidence, "type": "whatsapp_reply", "at": at.Format(time.RFC3339)},
		{"kind": model.HistoryEvidence, "type": "call", "at": at.Format(time.RFC3339), "duration_s": 95},
		{"kind": model.HistoryVerdict, "verdict": "review", "note": "review expired unconfirmed: the qualified event will not be sent"},
		{"kind": model.HistoryVerdict, "verdict": "clean", "was": "review", "score": 0, "decided_by": "crm",
			"note": "too late for Meta: the lead came in more than 7 days ago; sent to Google Ads only"},
		{"kind": model.HistoryVerdict, "verdict": "clean", "was": "review", "score": 0, "decided_by": "crm",
			"note": "not sent to Meta: the event is more than 7 days old, and Meta takes none older; sent to Google Ads, TikTok only"},
		// Stages: queued, held back, refused, Google only, already stood for.
		{"kind": model.HistoryStage, "stage": "won", "at": at.Format(time.RFC3339), "event_name": "Purchase", "event_id": "st_" + longWord,
			"action_source": "system_generated", "value": 6000, "currency": "EUR", "queued": true},
		{"kind": model.HistoryStage, "stage": "meeting", "at": at.Format(time.RFC3339), "event_name": "Schedule", "event_id": "st_2",
			"action_source": "phone_call", "held": app.HeldOwnerJunk, "queued": false},
		{"kind": model.HistoryStage, "stage": "meeting", "at": at.Format(time.RFC3339), "event_name": "Schedule",
			"refused": "at is more than 7 days ago: Meta takes no older event, so this stage is recorded but never sent"},
		{"kind": model.HistoryStage, "stage": "won", "at": at.Format(time.RFC3339), "event_name": "Purchase",
			"refused": "at is too old: Meta takes no event older than 7 days; Google Ads takes no event older than 90 days"},
		{"kind": model.HistoryStage, "stage": "won", "at": at.Format(time.RFC3339), "event_name": "Purchase", "action_source": "chat",
			"meta": "not sent: the stage is more than 7 days ago, too old for Meta; sent to Google Ads only", "queued": true},
		{"kind": model.HistoryStage, "stage": "qualified", "at": at.Format(time.RFC3339), "event_name": "QualifiedLead",
			"note": "the lead's qualified event already stands for this stage: it is not sent twice", "queued": false},
	}
	for i, h := range history {
		kind := h["kind"].(string)
		delete(h, "kind")
		// Through JSON, as they are read back from the database.
		b, _ := json.Marshal(h)
		var data map[string]any
		json.Unmarshal(b, &data)
		if err := e.db.HistoryInsert(ctx, &model.HistoryEntry{ID: fmt.Sprintf("h_story_%02d", i), LeadID: l.ID,
			At: at.Add(time.Duration(i) * time.Second), Kind: kind, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	// Meta could not be reached: every try of every event failed alike.
	for i := range 6 {
		unreachable := fmt.Sprintf(`Post "https://graph.facebook.com/v21.0/123456789012345/events": dial tcp: lookup graph.facebook.com on 127.0.0.53:53: no such host %s`, longWord)
		resp, _ := json.Marshal(map[string]any{"error": map[string]any{"message": unreachable, "class": "transient"}})
		d := &model.Delivery{ID: fmt.Sprintf("dl_unreach%d", i), SiteID: "dent", LeadID: l.ID, Kind: model.KindLead,
			EventName: "Lead", EventID: fmt.Sprintf("ev-unreach-%d-%s", i, longWord), PixelID: "123456789012345",
			Payload: json.RawMessage(`{"event_name":"Lead"}`), State: model.DeliveryRetry, Attempts: 4,
			NextAt: at.Add(10 * time.Minute), DeadlineAt: at.Add(6 * 24 * time.Hour), LastError: unreachable, Response: resp,
			Mode: "live", CreatedAt: at.Add(-time.Duration(i) * time.Hour), UpdatedAt: at}
		if _, err := e.db.DeliveryInsert(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// internalText is what must never be the owner's main text: Go maps, field
// names with their values, bare reason codes, internal lead ids.
var internalText = map[string]*regexp.Regexp{
	"a Go map":                               regexp.MustCompile(`map\[`),
	"form_token":                             regexp.MustCompile(`form_token`),
	"action_source: ...":                     regexp.MustCompile(`action_source:`),
	"queued: true":                           regexp.MustCompile(`queued: (true|false)`),
	"type: customer":                         regexp.MustCompile(`type: \w+`),
	"fill_ms / hp_len":                       regexp.MustCompile(`\b(fill_ms|hp_len|server_fill_ms|open_until|decided_by|event_id|cancelled_events|released_events)\b`),
	"a bare reason code":                     regexp.MustCompile(`\b(NO_REQUEST_EVIDENCE|OWNER_CUSTOMER|OWNER_JUNK|PRICE_ONLY|DUPLICATE|FILL_TOO_FAST|HONEYPOT|CRM_QUALIFIED|EVIDENCE_[A-Z_]+|MODEL_[A-Z]+)\b`),
	"an evidence dump":                       regexp.MustCompile(`\b(class|p|variant): `),
	"a lead id":                              regexp.MustCompile(`already sent lead|\bld_[0-9A-Za-z]`),
	"Meta's message on an unreachable Graph": regexp.MustCompile(`Meta's message: Post|Meta'nın mesajı: Post`),
	"a raw network error":                    regexp.MustCompile(`dial tcp`),
	"a state's name":                         regexp.MustCompile(`\bdry_run\b`),
}

// mainText is a page as the owner reads it: the text of <main>, without
// what is folded under "technical details", payloads and answers, and
// without markup (links may carry ids; their text may not).
func mainText(body string) string {
	if i := strings.Index(body, "<main"); i >= 0 {
		body = body[i:]
	}
	body = regexp.MustCompile(`(?s)<details.*?</details>`).ReplaceAllString(body, " ")
	body = regexp.MustCompile(`(?s)<(script|style|select|form)\b.*?</(script|style|select|form)>`).ReplaceAllString(body, " ")
	body = regexp.MustCompile(`(?s)<[^>]*>`).ReplaceAllString(body, " ")
	return html.UnescapeString(body)
}

// TestAdminOwnersWords renders a lead with every kind of history entry,
// a repeat of it, the inbox and the deliveries in both languages, and
// wants none of the internal text the owner was shown before: each moment
// is a sentence, the detail sits under "technical details".
func TestAdminOwnersWords(t *testing.T) {
	e := newAdminEnv(t)
	l := addStoryLead(t, e)
	ctx := context.Background()
	site, _ := e.db.SiteByID(ctx, "dent")
	// The same person writes again: a repeat of a lead that stands.
	fill := int64(20000)
	again, _, err := e.svc.Submit(ctx, site, &app.LeadInput{Name: "Zeynep", Phone: "0532 555 12 34",
		Message: "Randevu saatimi teyit edebilir misiniz?", FillMS: &fill, PageURL: origin + "/iletisim", ClientIP: "85.105.9.9", UserAgent: "Mozilla/5.0"})
	if err != nil {
		t.Fatal(err)
	}
	c := e.login()
	for _, lang := range []string{"en", "tr"} {
		c.hdr["Accept-Language"] = lang
		pages := map[string]string{
			"lead":       "/admin/leads/" + string(l.ID),
			"repeat":     "/admin/leads/" + string(again.ID),
			"clean lead": "/admin/leads/" + string(e.leads["clean"].ID),
			"junk lead":  "/admin/leads/" + string(e.leads["junk"].ID),
			"inbox":      "/admin/",
			"deliveries": "/admin/deliveries",
			"retries":    "/admin/deliveries?state=retry",
			"dashboard":  "/admin/dashboard?site=dent",
		}
		got := map[string]string{}
		for name, path := range pages {
			p := c.get(path)
			if p.code != 200 {
				t.Fatalf("%s %s: %d", lang, name, p.code)
			}
			got[name] = p.body
			text := mainText(p.body)
			for what, re := range internalText {
				if m := re.FindString(text); m != "" {
					i := strings.Index(text, m)
					t.Errorf("%s %s shows %s (%q) in: …%s…", lang, name, what, m, text[max(0, i-120):min(len(text), i+120)])
				}
			}
		}
		story := mainText(got["lead"])
		want := map[string][]string{
			"en": {"Clicked a Meta ad", "on www.istanbuldis.example/tedaviler/implant-tedavisi", "The form came from this site's page, sent 31 s after",
				"The form did not come from this site's page", "The person wrote on WhatsApp.", "Changed: the message, the phone number, the time to fill.",
				"You marked it as junk", "You marked it as a real customer", "The person replied on WhatsApp", "A phone call took place",
				"by the CRM", "by you", "Meta is told with the event Purchase.", "Held back from Meta: you said junk.", "recorded in our system",
				"on a phone call", "in a chat", "Recorded, not sent to Meta", "sent to Google Ads only", "it is not sent twice",
				"Meta could not be reached: its servers did not answer."},
			"tr": {"Bir Meta reklamına tıkladı", "sayfasında", "Form bu sitenin sayfasından geldi", "Form bu sitenin sayfasından gelmedi",
				"Kişi WhatsApp'tan yazdı.", "Değişen: mesaj, telefon numarası, doldurma süresi.", "Çöp olarak işaretlediniz",
				"Gerçek müşteri olarak işaretlediniz", "Telefon görüşmesi yapıldı", "CRM tarafından", "sizin tarafınızdan",
				"Meta'ya Purchase olayıyla bildirilir.", "telefon görüşmesinde", "sohbette", "Kaydedildi, Meta'ya gönderilmedi",
				"yalnızca Google Ads'e gönderildi", "iki kez gönderilmez", "Meta: ulaşılamadı, sunucuları yanıt vermedi."},
		}[lang]
		for _, w := range want {
			if !strings.Contains(story, w) {
				t.Errorf("%s: the lead's story lacks %q:\n%s", lang, w, story)
			}
		}
		// The stored detail stays for support, folded away.
		if !strings.Contains(got["lead"], "server_fill_ms") || !strings.Contains(got["lead"], tr(lang, "Technical details")) {
			t.Errorf("%s: the technical details are gone", lang)
		}
		// A repeat of a lead that stands says so, links it, and is not red junk.
		rep := got["repeat"]
		if !strings.Contains(rep, `class="repeat-note"`) || !strings.Contains(rep, `href="/admin/leads/`+string(l.ID)+`"`) ||
			strings.Contains(rep, `class="badge junk big"`) {
			t.Errorf("%s: the repeat does not say what it repeats:\n%s", lang, mainText(rep))
		}
		if !strings.Contains(got["inbox"], `<span class="badge repeat">`) || !strings.Contains(got["inbox"], `href="/admin/leads/`+string(l.ID)+`"`) {
			t.Errorf("%s: the inbox shows the repeat without saying so", lang)
		}
		// Identical failures are one row with a count, and one banner.
		if n := strings.Count(got["retries"], `class="card delivery"`); n != 1 {
			t.Errorf("%s: %d rows for six identical failures", lang, n)
		}
		if !strings.Contains(mainText(got["retries"]), tr(lang, "%d events", 6)) {
			t.Errorf("%s: the grouped row does not count its events", lang)
		}
	}
}

// tr is the test's own copy of the few Turkish texts it checks by key.
func tr(lang, key string, args ...any) string {
	if lang == "tr" {
		key = map[string]string{"Technical details": "Teknik ayrıntılar", "%d events": "%d olay"}[key]
	}
	return fmt.Sprintf(key, args...)
}
