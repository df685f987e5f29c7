package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/model"
)

const ctwaApp = "whatsapp: {verify_token: verify-0123456789abcdef, app_secret: s}\n"

func TestCTWASettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte(ctwaApp+`
sites:
  - id: dent
    country: TR
    meta:
      access_token: "tok"
      stages: {meeting: {event: Schedule}, won: {event: Purchase, currency: TRY}}
    whatsapp:
      phone_number_ids: ["106540352242922"]
      business_account_id: " 102290129340398 "
      stages: {meeting: Contact}
`), 0o600)
	c, err := Load(path, envOf(map[string]string{"CLEANADS_SITES_DENT_WHATSAPP_DATASET_ID": "1283471935762519",
		"CLEANADS_SITES_DENT_WHATSAPP_EVENTS": "qualified,stages", "CLEANADS_SITES_DENT_WHATSAPP_STAGES": `{"meeting":"QualifiedLead"}`}))
	if err != nil {
		t.Fatal(err)
	}
	w := c.Sites[0].SiteModel().Settings.WhatsApp
	if w.BusinessAccountID != "102290129340398" || w.DatasetID != "1283471935762519" || !w.SendsCTWA() {
		t.Errorf("whatsapp settings %+v", w)
	}
	if w.Sends(model.WhatsAppSendLead) || !w.Sends(model.WhatsAppSendQualified) || !w.Sends(model.WhatsAppSendStages) {
		t.Errorf("events %v", w.Events)
	}
	meta := c.Sites[0].Meta.MetaSettings
	if w.StageEventName("meeting", meta) != "QualifiedLead" || w.StageEventName("Won", meta) != "" || w.StageEventName("won", meta) != "Purchase" {
		t.Errorf("stage names %q %q", w.StageEventName("meeting", meta), w.StageEventName("won", meta))
	}
	// A site that sends only its WhatsApp leads' events, with a token,
	// is live without a pixel.
	if m := c.Sites[0].Meta.Mode; m != model.ModeLive {
		t.Errorf("mode %q", m)
	}
}

func TestCTWAProblems(t *testing.T) {
	site := func(whatsapp, meta string) string {
		return ctwaApp + "sites: [{id: a, country: TR, meta: {" + meta + "}, whatsapp: {" + whatsapp + "}}]\n"
	}
	const ids = "phone_number_ids: ['1'], business_account_id: '2', dataset_id: '3'"
	cases := []struct {
		name, yaml string
		keys       []string
		mention    string
	}{
		{"waba without dataset", site("phone_number_ids: ['1'], business_account_id: '2'", ""),
			[]string{"sites[0].whatsapp.dataset_id"}, "dataset"},
		{"dataset without waba", site("phone_number_ids: ['1'], dataset_id: '3'", ""),
			[]string{"sites[0].whatsapp.business_account_id"}, "WhatsApp Business Account"},
		{"no numbers", site("business_account_id: '2', dataset_id: '3'", ""),
			[]string{"sites[0].whatsapp.phone_number_ids"}, "numbers"},
		{"not digits", site("phone_number_ids: ['1'], business_account_id: 'waba-2', dataset_id: '3'", ""),
			[]string{"sites[0].whatsapp.business_account_id"}, "digits"},
		{"events without the account", site("phone_number_ids: ['1'], events: [qualified]", ""),
			[]string{"sites[0].whatsapp"}, "business_account_id and dataset_id"},
		{"unknown event kind", site(ids+", events: [lead, calls]", ""),
			[]string{"sites[0].whatsapp.events[1]"}, "lead, qualified or stages"},
		{"lead event not allowed", site(ids+", lead_event: Lead", ""),
			[]string{"sites[0].whatsapp.lead_event"}, `"Lead" is not an event Meta takes`},
		{"stage mapped outside the list", site(ids, "stages: {meeting: {event: Schedule}, won: {event: Purchase}}"),
			[]string{"sites[0].whatsapp.stages.meeting"}, "map the stage here to one of LeadSubmitted"},
		{"whatsapp stage outside the list", site(ids+", stages: {meeting: Contact}", "stages: {meeting: {event: Schedule}}"),
			[]string{"sites[0].whatsapp.stages.meeting"}, `"Contact" is not an event Meta takes`},
		{"whatsapp stage unknown", site(ids+", stages: {signed: Purchase}", ""),
			[]string{"sites[0].whatsapp.stages.signed"}, "no such stage"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := wantProblems(t, c.yaml, c.keys); !strings.Contains(err.Error(), c.mention) {
				t.Errorf("the problems do not mention %q: %v", c.mention, err)
			}
		})
	}
	// Stages that do not go to WhatsApp leads may use any name.
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte(site(ids+", events: [lead, qualified]", "stages: {meeting: {event: Schedule}}")), 0o600)
	if _, err := Load(path, envOf(nil)); err != nil {
		t.Errorf("stages not sent for WhatsApp leads: %v", err)
	}
}
