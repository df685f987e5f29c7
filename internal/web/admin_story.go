package web

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// The lead's story in the owner's words: each moment a sentence in the
// page's language, the stored detail kept under "technical details" for
// support.

// adClick is the ad a lead came from, read from its click ids and those
// in the page's address: shown even when that platform is not connected.
func adClick(lang string, l *model.Lead) (title, tech string, ok bool) {
	q := url.Values{}
	if u, err := url.Parse(l.PageURL); err == nil {
		q = u.Query()
	}
	first := func(vs ...string) string {
		for _, v := range vs {
			if v != "" {
				return v
			}
		}
		return ""
	}
	switch {
	case first(l.FBClid, l.FBC, q.Get("fbclid")) != "":
		return tr(lang, "Clicked a Meta ad"), "fbclid: " + first(l.FBClid, q.Get("fbclid"), l.FBC), true
	case first(l.GClid, q.Get("gclid"), q.Get("gbraid"), q.Get("wbraid")) != "":
		return tr(lang, "Clicked a Google ad"), "gclid: " + first(l.GClid, q.Get("gclid"), q.Get("gbraid"), q.Get("wbraid")), true
	case q.Get("ttclid") != "":
		return tr(lang, "Clicked a TikTok ad"), "ttclid: " + q.Get("ttclid"), true
	}
	return "", "", false
}

// shortPage is a page address as a person reads it: host and path, without
// the click ids and campaign parameters that make it long.
func shortPage(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return strings.TrimSuffix(u.Host+u.EscapedPath(), "/")
}

// decidedByText says who decided a verdict.
func decidedByText(lang, by string) string {
	switch by {
	case model.DecidedByRules:
		return tr(lang, "by the rules")
	case model.DecidedByOwner:
		return tr(lang, "by you")
	case model.DecidedByCRM:
		return tr(lang, "by the CRM")
	case model.DecidedByEvidence:
		return tr(lang, "by what the person did")
	case "":
		return ""
	}
	return tr(lang, "by %s", tr(lang, by))
}

// historyItem writes one history entry as a sentence: its title, a detail
// in plain words, and the stored data as it is for technical details.
func historyItem(lang string, h model.HistoryEntry) (title, detail string) {
	str := func(k string) string {
		v, ok := h.Data[k]
		if !ok || v == nil {
			return ""
		}
		return fmt.Sprint(v)
	}
	var parts []string
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	switch h.Kind {
	case model.HistoryVerdict:
		title = tr(lang, "Verdict: %s", tr(lang, str("verdict")))
		if by := decidedByText(lang, str("decided_by")); by != "" {
			title += " · " + by
		}
		if was := str("was"); was != "" && was != str("verdict") {
			add(tr(lang, "was %s", tr(lang, was)))
		}
		if str("source") == model.SourceWhatsApp {
			add(tr(lang, "The person wrote on WhatsApp."))
		}
		add(tokenText(lang, h.Data["form_token"]))
		if note := str("note"); note != "" {
			add(trNote(lang, note))
		}
		if ch := str("changed"); ch != "" {
			var fields []string
			for _, f := range strings.Split(ch, ", ") {
				if w, ok := changedFields[f]; ok {
					f = tr(lang, w)
				}
				fields = append(fields, f)
			}
			add(tr(lang, "Changed: %s.", strings.Join(fields, ", ")))
		}
		if n := str("cancelled_events"); n != "" {
			add(tr(lang, "%s unsent events cancelled", n))
		}
		if n := str("released_events"); n != "" {
			add(tr(lang, "%s events held back are queued", n))
		}
		if t, err := time.Parse(time.RFC3339, str("open_until")); err == nil {
			add(tr(lang, "If the person sends the form again before %s, this lead takes the new values.", t.Format("2006-01-02 15:04")+" UTC"))
		}
	case model.HistoryEvidence:
		switch str("type") {
		case qualify.EvidenceCustomer:
			title = tr(lang, "You marked it as a real customer")
		case qualify.EvidenceJunk:
			title = tr(lang, "You marked it as junk")
		case qualify.EvidenceWhatsAppReply:
			title = tr(lang, "The person replied on WhatsApp")
		case qualify.EvidenceCall:
			title = tr(lang, "A phone call took place")
			if d := str("duration_s"); d != "" {
				add(tr(lang, "%s s call", d))
			}
		default:
			title = tr(lang, "Evidence: %s", tr(lang, str("type")))
		}
	case model.HistoryStage:
		title = tr(lang, "Stage: %s", str("stage"))
		if v := str("value"); v != "" {
			title += " · " + v + " " + str("currency")
		}
		switch str("action_source") {
		case "system_generated":
			add(tr(lang, "recorded in our system"))
		case "phone_call":
			add(tr(lang, "on a phone call"))
		case "chat":
			add(tr(lang, "in a chat"))
		}
		refused := str("refused")
		switch {
		case strings.Contains(refused, "in the future"):
			add(tr(lang, "Not sent: the stage's time is in the future."))
		case strings.Contains(refused, "takes no event older than"):
			add(tr(lang, "Not sent: the stage is older than any platform of the site takes (Meta: 7 days; Google Ads: 90 days after the click)."))
		case refused != "":
			add(tr(lang, "Recorded, not sent to Meta: the stage is more than 7 days ago, and Meta takes no older event."))
		case str("held") == app.HeldOwnerJunk:
			add(tr(lang, "Held back from Meta: you said junk. It is sent if you change your word to real customer."))
		case str("meta") != "":
			add(tr(lang, str("meta")))
		case str("note") != "":
			add(trNote(lang, str("note")))
		case str("queued") == "true" && str("event_name") != "":
			add(tr(lang, "Meta is told with the event %s.", str("event_name")))
		case str("queued") == "false":
			add(tr(lang, "Nothing new to send."))
		}
	default:
		title = tr(lang, "Other change")
	}
	return title, strings.Join(parts, " · ")
}

// changedFields names the fields a repeated submit changed (app's
// attemptChanges) as the owner reads them.
var changedFields = map[string]string{"name": "the name", "email": "the e-mail address", "phone": "the phone number",
	"message": "the message", "fields": "other fields", "fill_ms": "the time to fill", "hp": "the hidden trap field"}

// tokenText says what the form token showed, from the history's facts.
func tokenText(lang string, v any) string {
	m, ok := v.(map[string]any)
	if !ok || m["checked"] != true {
		return ""
	}
	if m["valid"] == true {
		if ms, err := strconv.ParseFloat(fmt.Sprint(m["server_fill_ms"]), 64); err == nil && ms > 0 {
			return tr(lang, "The form came from this site's page, sent %.0f s after the page was opened.", ms/1000)
		}
		return tr(lang, "The form came from this site's page.")
	}
	switch m["problem"] {
	case app.TokenForged:
		return tr(lang, "The form did not come from this site's page: its token was not ours.")
	case app.TokenReplayed:
		return tr(lang, "The form's token had been used before.")
	case app.TokenExpired:
		return tr(lang, "The page had been open a long time before the form was sent.")
	}
	return tr(lang, "The form's token did not check out.")
}

// trNote translates a history note: sentences joined by "; ", each
// translated on its own ("sent to Google Ads, TikTok only" with its
// platforms as they are).
func trNote(lang, note string) string {
	if _, ok := turkish[note]; ok || lang != "tr" {
		return tr(lang, note)
	}
	parts := strings.Split(note, "; ")
	for i, p := range parts {
		if to, ok := strings.CutPrefix(p, "sent to "); ok && strings.HasSuffix(to, " only") {
			parts[i] = tr(lang, "sent to %s only", strings.TrimSuffix(to, " only"))
			continue
		}
		parts[i] = tr(lang, p)
	}
	return strings.Join(parts, "; ")
}
