package web_test

// WhatsApp Cloud API webhook bodies for the tests here that post one (the
// CRM sync's look-up by WhatsApp user id); the webhook's own tests are in
// internal/whatsapp.

import (
	"encoding/json"
	"fmt"
	"time"
)

const (
	wabaID    = "102290129340398"
	datasetID = "1283471935762519"
	waDisplay = "15550783881"
	ctwaClid  = "ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0-eM-GABDLOPaOdRMv-_zfUQ2a"
	bsuid     = "TR.1502576394655843"
)

// waMsg is one inbound message for waBatch: from may be empty (a user with
// a username), referral nil (not from an ad).
type waMsg struct {
	id, userID, from, text string
	referral               map[string]string
	at                     time.Time
	// quote is the id of a business message this one replies to.
	quote string
}

// waChange is one change of a webhook: messages or statuses of a number.
type waChange struct {
	msgs     []waMsg
	statuses []map[string]string
}

// waBatch is a WhatsApp Cloud API webhook as Meta sends it: one entry per
// list of changes, each change with its contacts and messages.
func waBatch(entries ...[]waChange) string {
	var es []map[string]any
	for _, changes := range entries {
		var cs []map[string]any
		for _, c := range changes {
			var contacts, msgs []map[string]any
			for _, m := range c.msgs {
				contact := map[string]any{"profile": map[string]string{"name": "Ayşe Yılmaz"}, "user_id": m.userID}
				msg := map[string]any{"id": m.id, "from_user_id": m.userID, "timestamp": fmt.Sprint(m.at.Unix()),
					"type": "text", "text": map[string]string{"body": m.text}}
				if m.from != "" {
					contact["wa_id"], msg["from"] = m.from, m.from
				}
				if m.referral != nil {
					msg["referral"] = m.referral
				}
				if m.quote != "" {
					msg["context"] = map[string]string{"from": waDisplay, "id": m.quote}
				}
				contacts, msgs = append(contacts, contact), append(msgs, msg)
			}
			value := map[string]any{"messaging_product": "whatsapp",
				"metadata": map[string]string{"display_phone_number": waDisplay, "phone_number_id": waNumberID}}
			if len(msgs) > 0 {
				value["contacts"], value["messages"] = contacts, msgs
			}
			if len(c.statuses) > 0 {
				value["statuses"] = c.statuses
			}
			cs = append(cs, map[string]any{"field": "messages", "value": value})
		}
		es = append(es, map[string]any{"id": wabaID, "changes": cs})
	}
	b, _ := json.Marshal(map[string]any{"object": "whatsapp_business_account", "entry": es})
	return string(b)
}

func adReferral(clid string) map[string]string {
	r := map[string]string{"source_url": "https://fb.me/3cr4Wqqkv", "source_id": "120226305854810726", "source_type": "ad",
		"headline": "İmplant tedavisi", "body": "Ücretsiz muayene", "media_type": "image"}
	if clid != "" {
		r["ctwa_clid"] = clid
	}
	return r
}
