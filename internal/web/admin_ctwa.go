package web

import (
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// ctwaCustomerSends says what the owner's "real customer" sends for a
// Click-to-WhatsApp lead still to be qualified: its qualified event to the
// WhatsApp Business Account's dataset, not the pixel. ok is false for any
// other lead, or one leadActions already explains.
func ctwaCustomerSends(lang string, site *model.Site, l *model.Lead, now time.Time) (string, bool) {
	if l.Source != model.SourceWhatsApp || l.SourceDetail[model.DetailCTWAClid] == "" ||
		l.Verdict == model.VerdictClean || now.After(l.SubmittedAt.Add(model.MaxEventAge-time.Hour)) {
		return "", false
	}
	w := site.Settings.WhatsApp
	if !w.Sends(model.WhatsAppSendQualified) {
		return tr(lang, "Nothing is sent to Meta: the site sends no qualified events of WhatsApp leads (whatsapp.business_account_id, dataset_id, events)."), true
	}
	s := tr(lang, "Sends %s to Meta (WhatsApp dataset %s) with the time of the first message, as business_messaging.",
		w.QualifiedEventName(), w.DatasetID)
	if l.Verdict == model.VerdictJunk && w.Sends(model.WhatsAppSendLead) {
		s += " " + tr(lang, "The %s event held back for junk is sent too.", w.LeadEventName())
	}
	if note := modeNote(lang, site.Settings.Meta.Mode); note != "" {
		s += " " + note
	}
	return s, true
}
