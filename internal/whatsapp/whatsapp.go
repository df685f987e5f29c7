// Package whatsapp is the WhatsApp Cloud API lead source: Meta posts the
// messages of the site's WhatsApp numbers to /v1/webhooks/whatsapp, signed
// with the Meta app's secret. A Click-to-WhatsApp first message starts a
// lead, a later message or a reply is evidence on one, and the statuses of
// the business's own messages say who it wrote to
// (app.Service.WhatsAppInbound and WhatsAppStatuses). One Meta app serves
// every site, so its secrets are the program's settings
// (whatsapp.verify_token and whatsapp.app_secret in the config file);
// a message finds its site by its phone number id.
package whatsapp

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/metahook"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/source"
)

// Name is the source's key, and the prefix of its settings.
const Name = "whatsapp"

// The settings (source.Deps.Settings) holding the Meta app's webhook
// secrets; either empty turns the webhook off.
const (
	SettingVerifyToken = Name + ".verify_token"
	SettingAppSecret   = Name + ".app_secret"
)

// Source receives the WhatsApp Cloud API webhook.
type Source struct {
	d   source.Deps
	log *slog.Logger
}

// New returns the WhatsApp source.
func New(d source.Deps) source.Source {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Source{d: d, log: log}
}

// Name is the source's key.
func (*Source) Name() string { return Name }

// Label is its name for people.
func (*Source) Label() string { return "WhatsApp" }

// Routes are Meta's handshake and the webhook's posts.
func (s *Source) Routes() []source.Route {
	return []source.Route{
		{Pattern: "GET /v1/webhooks/whatsapp", Handler: s.verify},
		{Pattern: "POST /v1/webhooks/whatsapp", Handler: s.receive, Body: source.DefaultBody},
	}
}

// verify answers Meta's subscription handshake for the WhatsApp app.
func (s *Source) verify(w http.ResponseWriter, r *http.Request) error {
	return metahook.Handshake(w, r, s.d.Settings[SettingVerifyToken])
}

// payload is the part of a WhatsApp Cloud API webhook CleanAds
// reads: the senders of messages, what a Click-to-WhatsApp first message
// says (its referral and text), and the statuses of the business's own
// messages (who it wrote to, and when).
type payload struct {
	Object string `json:"object"`
	Entry  []struct {
		// ID is the WhatsApp Business Account.
		ID      string `json:"id"`
		Changes []struct {
			Field string `json:"field"`
			Value struct {
				Metadata struct {
					DisplayPhoneNumber string `json:"display_phone_number"`
					PhoneNumberID      string `json:"phone_number_id"`
				} `json:"metadata"`
				Contacts []struct {
					WaID    string `json:"wa_id"`
					UserID  string `json:"user_id"`
					Profile struct {
						Name string `json:"name"`
					} `json:"profile"`
				} `json:"contacts"`
				Messages []message `json:"messages"`
				Statuses []struct {
					Status          string `json:"status"`
					Timestamp       string `json:"timestamp"`
					RecipientID     string `json:"recipient_id"`
					RecipientUserID string `json:"recipient_user_id"`
				} `json:"statuses"`
			} `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

// message is one inbound message of a webhook.
type message struct {
	ID         string `json:"id"`
	From       string `json:"from"`
	FromUserID string `json:"from_user_id"`
	Timestamp  string `json:"timestamp"`
	Type       string `json:"type"`
	Text       struct {
		Body string `json:"body"`
	} `json:"text"`
	Image   caption `json:"image"`
	Video   caption `json:"video"`
	Context struct {
		From string `json:"from"`
		ID   string `json:"id"`
	} `json:"context"`
	Referral *struct {
		SourceURL  string `json:"source_url"`
		SourceID   string `json:"source_id"`
		SourceType string `json:"source_type"`
		Headline   string `json:"headline"`
		CTWAClid   string `json:"ctwa_clid"`
	} `json:"referral"`
}

type caption struct {
	Caption string `json:"caption"`
}

// text is the message's words: its body, or a photo's or video's caption.
func (m *message) text() string {
	switch {
	case m.Text.Body != "":
		return m.Text.Body
	case m.Image.Caption != "":
		return m.Image.Caption
	}
	return m.Video.Caption
}

// unixTime reads a webhook's timestamp (Unix seconds as a string); zero
// when it is missing or not a time.
func unixTime(s string) time.Time {
	if sec, err := strconv.ParseInt(s, 10, 64); err == nil && sec > 0 {
		return time.Unix(sec, 0).UTC()
	}
	return time.Time{}
}

// receive takes a signed WhatsApp Cloud API webhook: the signature is
// checked over the bytes as received before anything is read from them,
// then each inbound message is handled once. Messages that match no lead
// are answered 200 too: Meta retries anything else.
func (s *Source) receive(w http.ResponseWriter, r *http.Request) error {
	secret := s.d.Settings[SettingAppSecret]
	if secret == "" {
		return source.Error(http.StatusNotFound, "the WhatsApp webhook is off: set whatsapp.app_secret and whatsapp.verify_token")
	}
	body, err := metahook.SignedBody(r, secret)
	if err != nil {
		return err
	}
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return model.Invalid("", "malformed JSON: "+err.Error())
	}
	counts := map[string]int{}
	// The leads the post made or matched, so a CRM fed by the same
	// webhook can name them.
	var leads []model.LeadID
	for _, e := range p.Entry {
		for _, ch := range e.Changes {
			v := ch.Value
			if len(v.Statuses) > 0 {
				list := make([]app.WhatsAppStatus, 0, len(v.Statuses))
				for _, st := range v.Statuses {
					list = append(list, app.WhatsAppStatus{PhoneNumberID: v.Metadata.PhoneNumberID, RecipientID: st.RecipientID,
						RecipientUserID: st.RecipientUserID, Status: st.Status, At: unixTime(st.Timestamp)})
				}
				if err := s.d.App.WhatsAppStatuses(r.Context(), list); err != nil {
					return err
				}
				counts["status"] += len(list)
			}
			for _, m := range v.Messages {
				msg := app.WhatsAppMessage{ID: m.ID, PhoneNumberID: v.Metadata.PhoneNumberID, From: m.From,
					FromUserID: m.FromUserID, Type: m.Type, At: unixTime(m.Timestamp), WABAID: e.ID, Text: m.text()}
				// Older payloads name the sender only in contacts.
				if len(v.Contacts) == 1 {
					if msg.From == "" {
						msg.From = v.Contacts[0].WaID
					}
					if msg.FromUserID == "" {
						msg.FromUserID = v.Contacts[0].UserID
					}
				}
				for _, c := range v.Contacts {
					if (c.UserID != "" && c.UserID == msg.FromUserID) || (c.WaID != "" && c.WaID == msg.From) {
						msg.ProfileName = c.Profile.Name
					}
				}
				if rf := m.Referral; rf != nil {
					msg.Referral = &app.WhatsAppReferral{CTWAClid: rf.CTWAClid, SourceID: rf.SourceID,
						SourceType: rf.SourceType, SourceURL: rf.SourceURL, Headline: rf.Headline}
				}
				// A reply quoting a message of the business's number
				// answers the business.
				msg.RepliesToBusiness = m.Context.ID != "" && m.Context.From != "" &&
					m.Context.From == v.Metadata.DisplayPhoneNumber
				res, err := s.d.App.WhatsAppInbound(r.Context(), msg)
				if err != nil {
					// Meta retries the whole post; the messages handled
					// so far are claimed and are not handled again.
					return err
				}
				counts[res.Outcome]++
				if res.LeadID != "" && !slices.Contains(leads, res.LeadID) {
					leads = append(leads, res.LeadID)
				}
				s.log.LogAttrs(r.Context(), slog.LevelInfo, "whatsapp message", slog.String("message_id", m.ID),
					slog.String("outcome", res.Outcome), slog.String("lead", string(res.LeadID)))
			}
		}
	}
	answer := map[string]any{}
	for k, n := range counts {
		answer[k] = n
	}
	if len(leads) > 0 {
		answer["leads"] = leads
	}
	source.JSON(w, http.StatusOK, answer)
	return nil
}
