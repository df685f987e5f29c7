package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cleanads/cleanads/internal/model"
)

// validateCTWA checks a site's Click-to-WhatsApp settings: the WhatsApp
// Business Account and its dataset (digits, both or neither, with the
// numbers the leads arrive on), what is sent, and that every event a CTWA
// lead can be sent as is one Meta takes from a conversation.
func (s *Site) validateCTWA(key string, errs *Problems) {
	w := &s.WhatsApp
	key += ".whatsapp"
	w.BusinessAccountID, w.DatasetID = strings.TrimSpace(w.BusinessAccountID), strings.TrimSpace(w.DatasetID)
	if w.BusinessAccountID != "" && !isDigits(w.BusinessAccountID) {
		errs.add(key+".business_account_id", "want the WhatsApp Business Account id (digits, from WhatsApp Manager), got %q", w.BusinessAccountID)
	}
	if w.DatasetID != "" && !isDigits(w.DatasetID) {
		errs.add(key+".dataset_id", "want the dataset id of the WhatsApp Business Account (digits, from Events Manager), got %q", w.DatasetID)
	}
	switch {
	case w.BusinessAccountID != "" && w.DatasetID == "":
		errs.add(key+".dataset_id", "business_account_id is set: set the dataset its events go to (Events Manager, the dataset linked to the WhatsApp Business Account)")
	case w.DatasetID != "" && w.BusinessAccountID == "":
		errs.add(key+".business_account_id", "dataset_id is set: set the WhatsApp Business Account id the events are about")
	case w.DatasetID != "" && len(w.PhoneNumberIDs) == 0:
		errs.add(key+".phone_number_ids", "name the WhatsApp numbers Click-to-WhatsApp leads arrive on (their phone number ids)")
	}
	if !w.SendsCTWA() {
		if len(w.Events) > 0 || w.LeadEvent != "" || w.QualifiedEvent != "" || len(w.Stages) > 0 {
			errs.add(key, "events, lead_event, qualified_event and stages need business_account_id and dataset_id")
		}
		return
	}
	for i, e := range w.Events {
		switch e {
		case model.WhatsAppSendLead, model.WhatsAppSendQualified, model.WhatsAppSendStages:
		default:
			errs.add(fmt.Sprintf("%s.events[%d]", key, i), "want lead, qualified or stages, got %q", e)
		}
	}
	allowed := strings.Join(model.MessagingEventNames, ", ")
	refuse := func(k, name, what string) {
		errs.add(k, "%q is not an event Meta takes from a WhatsApp conversation (%s); use one of %s", name, what, allowed)
	}
	if w.Sends(model.WhatsAppSendLead) && !model.IsMessagingEventName(w.LeadEventName()) {
		refuse(key+".lead_event", w.LeadEventName(), "the lead event")
	}
	if w.Sends(model.WhatsAppSendQualified) && !model.IsMessagingEventName(w.QualifiedEventName()) {
		refuse(key+".qualified_event", w.QualifiedEventName(), "the qualified event")
	}
	for stage := range w.Stages {
		if _, ok := s.Meta.Stages[stage]; !ok {
			errs.add(key+".stages."+stage, "no such stage in meta.stages: map the stage there first (with its value and currency)")
		}
	}
	if !w.Sends(model.WhatsAppSendStages) {
		return
	}
	stages := make([]string, 0, len(s.Meta.Stages))
	for stage := range s.Meta.Stages {
		stages = append(stages, stage)
	}
	sort.Strings(stages)
	for _, stage := range stages {
		name := w.StageEventName(stage, s.Meta.MetaSettings)
		if model.IsMessagingEventName(name) {
			continue
		}
		k := key + ".stages." + stage
		if _, ok := w.Stages[stage]; !ok {
			errs.add(k, "meta.stages sends %q, which Meta does not take from a WhatsApp conversation: map the stage here to one of %s", name, allowed)
			continue
		}
		refuse(k, name, "stage "+stage)
	}
}
