package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
)

// WhatsAppOptions are the secrets of the Meta app whose WhatsApp Cloud API
// webhooks CleanAds receives; empty means the webhook is off.
type WhatsAppOptions struct {
	VerifyToken string
	AppSecret   string
}

// maxWebhookBody is the largest webhook body read: Meta batches several
// messages in one post.
const maxWebhookBody = 1 << 20

// whatsAppVerify answers Meta's subscription handshake for the WhatsApp
// app (answerHandshake).
func (s *Server) whatsAppVerify(w http.ResponseWriter, r *http.Request) {
	s.answerHandshake(w, r, s.whatsApp.VerifyToken)
}

// answerHandshake answers the subscription handshake of a Meta webhook:
// the challenge, as plain text, when the mode is subscribe and the verify
// token is token (compared in constant time; an empty token verifies
// nothing).
func (s *Server) answerHandshake(w http.ResponseWriter, r *http.Request, token string) {
	q := r.URL.Query()
	if token == "" || q.Get("hub.mode") != "subscribe" ||
		subtle.ConstantTimeCompare([]byte(q.Get("hub.verify_token")), []byte(token)) != 1 {
		s.fail(w, r, errStatus(http.StatusForbidden, "verification failed: wrong hub.mode or hub.verify_token"))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, q.Get("hub.challenge"))
}

// whatsAppPayload is the part of a WhatsApp Cloud API webhook CleanAds
// reads: the senders of messages, what a Click-to-WhatsApp first message
// says (its referral and text), and the statuses of the business's own
// messages (who it wrote to, and when).
type whatsAppPayload struct {
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
				Messages []whatsAppMessage `json:"messages"`
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

// whatsAppMessage is one inbound message of a webhook.
type whatsAppMessage struct {
	ID         string `json:"id"`
	From       string `json:"from"`
	FromUserID string `json:"from_user_id"`
	Timestamp  string `json:"timestamp"`
	Type       string `json:"type"`
	Text       struct {
		Body string `json:"body"`
	} `json:"text"`
	Image   whatsAppCaption `json:"image"`
	Video   whatsAppCaption `json:"video"`
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

type whatsAppCaption struct {
	Caption string `json:"caption"`
}

// text is the message's words: its body, or a photo's or video's caption.
func (m *whatsAppMessage) text() string {
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

// whatsAppReceive takes a signed WhatsApp Cloud API webhook: the signature
// is checked over the bytes as received before anything is read from them,
// then each inbound message is handled once. Messages that match no lead
// are answered 200 too: Meta retries anything else.
func (s *Server) whatsAppReceive(w http.ResponseWriter, r *http.Request) {
	if s.whatsApp.AppSecret == "" {
		s.fail(w, r, errStatus(http.StatusNotFound, "the WhatsApp webhook is off: set whatsapp.app_secret and whatsapp.verify_token"))
		return
	}
	body, ok := s.signedBody(w, r, s.whatsApp.AppSecret)
	if !ok {
		return
	}
	var p whatsAppPayload
	if err := json.Unmarshal(body, &p); err != nil {
		s.fail(w, r, model.Invalid("", "malformed JSON: "+err.Error()))
		return
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
				if err := s.app.WhatsAppStatuses(r.Context(), list); err != nil {
					s.fail(w, r, err)
					return
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
				res, err := s.app.WhatsAppInbound(r.Context(), msg)
				if err != nil {
					// Meta retries the whole post; the messages handled
					// so far are claimed and are not handled again.
					s.fail(w, r, err)
					return
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
	writeJSON(w, http.StatusOK, answer)
}

// validSignature checks Meta's "sha256=<hex>" HMAC-SHA256 of body with
// secret, in constant time.
func validSignature(body []byte, header, secret string) bool {
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(header), "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}
