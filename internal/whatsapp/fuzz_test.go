package whatsapp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/source"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/web"
	"github.com/cleanads/cleanads/internal/whatsapp"
)

// FuzzWhatsAppWebhook posts any bytes, correctly signed, as a WhatsApp
// webhook: never a 5xx, every refusal a JSON error, and every lead it makes
// a Click-to-WhatsApp lead with its click id and a message that is valid
// UTF-8 within the lead's limits.
func FuzzWhatsAppWebhook(f *testing.F) {
	now := time.Now().Add(-time.Minute)
	for _, s := range []string{
		waBatch([]waChange{{msgs: []waMsg{{id: "wamid.F1", userID: bsuid, text: "Merhaba, randevu istiyorum", referral: adReferral(ctwaClid), at: now}}}}),
		waBatch([]waChange{{msgs: []waMsg{{id: "wamid.F2", userID: bsuid, from: leadPhoneWA, text: "fiyat?", at: now, quote: "wamid.B"}}},
			{statuses: []map[string]string{{"status": "read", "recipient_user_id": bsuid, "timestamp": "1764756000"}}}}),
		`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"metadata":{"phone_number_id":"` + waNumberID +
			`"},"messages":[{"id":"x","from":"+90abc","timestamp":"-5","referral":{"ctwa_clid":"\u0000\ud800"},"text":{"body":"\xff"}}]}}]}]}`,
		`{"entry":[{"changes":[{"value":{"statuses":[{"status":"sent","timestamp":"99999999999999999999"}]}}]}]}`,
		`[]`, `{"entry":null}`,
	} {
		f.Add([]byte(s))
	}
	db := storetest.SQLite(f)
	site := &model.Site{ID: "dent", Name: "Istanbul Dental", APIKeyHash: model.HashAPIKey(apiKey), Settings: model.SiteSettings{
		Origins: []string{origin}, Country: "TR",
		WhatsApp: model.WhatsAppSettings{PhoneNumberIDs: []string{waNumberID}, BusinessAccountID: wabaID, DatasetID: datasetID},
		Meta:     model.MetaSettings{PixelID: "111222333", Mode: model.ModeDryRun}}}
	if err := db.SiteUpsert(context.Background(), site, time.Now()); err != nil {
		f.Fatal(err)
	}
	svc := app.New(app.Options{Store: db})
	src := whatsapp.New(source.Deps{App: svc, Sites: db, Pauses: db, Settings: settings})
	h := web.New(web.Options{App: svc, Store: db, Sources: []source.Source{src},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}).Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "/v1/webhooks/whatsapp", bytes.NewReader(body))
		req.RemoteAddr = "127.0.0.1:4711"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Hub-Signature-256", sign(string(body), waSecret))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		// Never a 5xx; every refusal a JSON error.
		if rec.Code >= 500 {
			t.Fatalf("%d %s for body %q", rec.Code, rec.Body, body)
		}
		if rec.Code >= 400 {
			var e struct{ Error string }
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("%d without a clear error: %q for body %q", rec.Code, rec.Body, body)
			}
		}
		list, err := db.LeadList(context.Background(), store.LeadFilter{Site: "dent", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range list {
			if l.Source != model.SourceWhatsApp || l.SourceDetail[model.DetailCTWAClid] == "" ||
				!utf8.ValidString(l.Message) || len(l.Message) > 10000 || !utf8.ValidString(l.SourceDetail[model.DetailCTWAClid]) {
				t.Fatalf("lead %+v from %q", l, body)
			}
		}
	})
}
