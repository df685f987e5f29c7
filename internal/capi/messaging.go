package capi

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// ChannelWhatsApp is the messaging_channel of a WhatsApp conversation's
// business_messaging events.
const ChannelWhatsApp = "whatsapp"

// MessagingParams are the inputs of BuildMessagingEvent; all but
// CustomData are required.
type MessagingParams struct {
	Lead *model.Lead
	// EventName is one of model.MessagingEventNames.
	EventName string
	// EventTime is when the event happened: the first message for the
	// lead and qualified events, the stage's own time for a stage.
	EventTime time.Time
	// BusinessAccountID is the WhatsApp Business Account the conversation
	// is with.
	BusinessAccountID string
	CustomData        map[string]any
}

// BuildMessagingEvent builds the event of a Click-to-WhatsApp lead as Meta's
// Conversions API for Business Messaging takes it: action_source
// business_messaging, messaging_channel whatsapp, user_data with the
// WhatsApp Business Account id and the lead's ctwa_clid (neither hashed,
// nothing else: the click id is the match key). Meta does not deduplicate
// these events, so the event id is derived from the lead and the event
// name (MessagingEventID): the outbox, unique on it, holds each lead's event
// of a name once, whatever asked for it.
func BuildMessagingEvent(p MessagingParams) (Event, error) {
	l := p.Lead
	if l == nil {
		return Event{}, errors.New("capi: build messaging event: lead is required")
	}
	clid := l.SourceDetail[model.DetailCTWAClid]
	switch {
	case l.ID == "":
		return Event{}, errors.New("capi: build messaging event: lead has no id")
	case clid == "":
		return Event{}, fmt.Errorf("capi: build messaging event for lead %s: no ctwa_clid", l.ID)
	case p.BusinessAccountID == "":
		return Event{}, fmt.Errorf("capi: build messaging event for lead %s: no WhatsApp Business Account id", l.ID)
	case !model.IsMessagingEventName(p.EventName):
		return Event{}, fmt.Errorf("capi: build messaging event for lead %s: %q is not a business messaging event", l.ID, p.EventName)
	case p.EventTime.IsZero():
		return Event{}, fmt.Errorf("capi: build %s event for lead %s: no event time", p.EventName, l.ID)
	}
	e := Event{
		EventName:        p.EventName,
		EventTime:        p.EventTime.Unix(),
		EventID:          MessagingEventID(l.ID, p.EventName),
		ActionSource:     SourceBusinessMessaging,
		MessagingChannel: ChannelWhatsApp,
		UserData:         UserData{WhatsAppBusinessAccountID: p.BusinessAccountID, CTWAClid: clid},
	}
	if len(p.CustomData) > 0 {
		e.CustomData = maps.Clone(p.CustomData)
	}
	return e, nil
}

// MessagingEventID is the event id of a Click-to-WhatsApp lead's event of a
// name: one per lead and name, ever.
func MessagingEventID(lead model.LeadID, eventName string) string {
	return QualifiedEventID(lead, "business_messaging:"+eventName)
}
