package notify

import (
	"fmt"
	"strings"

	"github.com/cleanads/cleanads/internal/model"
)

// turkish is the notifications' own words in Turkish, keyed by the English;
// the user's language (their admin setting) picks one.
var turkish = map[string]string{
	"New real lead on %s: %s":             "%s için yeni gerçek başvuru: %s",
	"Lead waiting for evidence on %s: %s": "%s için kanıt bekleyen başvuru: %s",
	"Junk lead on %s: %s":                 "%s için çöp başvuru: %s",
	"(no name)":                           "(adsız)",
	"Name":                                "Ad",
	"Phone":                               "Telefon",
	"E-mail":                              "E-posta",
	"Message":                             "Mesaj",
	"Open it":                             "Açmak için",
	"real":                                "gerçek",
	"waiting for evidence":                "kanıt bekliyor",
	"junk":                                "çöp",
	"You get this because your CleanAds notification settings ask for it.": "Bu iletiyi CleanAds bildirim ayarlarınız istediği için alıyorsunuz.",
	"Your leads of %s": "%s tarihli başvurularınız",
	"%d leads: %d real, %d waiting for evidence, %d junk":         "%d başvuru: %d gerçek, %d kanıt bekliyor, %d çöp",
	"CleanAds test message":                                       "CleanAds deneme iletisi",
	"This is a test from CleanAds: notifications reach you here.": "Bu, CleanAds'ten bir denemedir: bildirimler size buradan ulaşır.",
}

func tr(lang, key string, args ...any) string {
	if lang == "tr" {
		if v, ok := turkish[key]; ok {
			key = v
		}
	}
	if len(args) > 0 {
		return fmt.Sprintf(key, args...)
	}
	return key
}

func verdictWord(lang string, v model.Verdict) string {
	switch v {
	case model.VerdictClean:
		return tr(lang, "real")
	case model.VerdictReview:
		return tr(lang, "waiting for evidence")
	}
	return tr(lang, "junk")
}

// leadText is a notification of a lead's verdict: its subject, and its
// text as a person reads it. It carries what the owner needs to call back
// (name, phone, e-mail, the start of the message) and the link to the
// lead's admin page.
func leadText(lang string, site *model.Site, lead *model.Lead, v model.Verdict, link string) (subject, body string) {
	name := leadName(lead)
	if name == "" {
		name = tr(lang, "(no name)")
	}
	switch v {
	case model.VerdictClean:
		subject = tr(lang, "New real lead on %s: %s", site.Name, name)
	case model.VerdictReview:
		subject = tr(lang, "Lead waiting for evidence on %s: %s", site.Name, name)
	default:
		subject = tr(lang, "Junk lead on %s: %s", site.Name, name)
	}
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	line := func(label, v string) {
		if v != "" {
			b.WriteString(tr(lang, label) + ": " + v + "\n")
		}
	}
	line("Name", name)
	line("Phone", lead.Phone)
	line("E-mail", lead.Email)
	line("Message", clip(lead.Message, 300))
	b.WriteString("\n" + tr(lang, "Open it") + ": " + link + "\n")
	return subject, b.String()
}

func leadName(l *model.Lead) string {
	if l.Name != "" {
		return l.Name
	}
	return strings.TrimSpace(l.FirstName + " " + l.LastName)
}

// clip shortens s to about n characters on a rune boundary, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// generic is a notification as a generic webhook receives it.
func generic(lang string, site *model.Site, lead *model.Lead, v model.Verdict, link string) Generic {
	_, text := leadText(lang, site, lead, v, link)
	return Generic{Event: "lead", Verdict: string(v), Site: string(site.ID), SiteName: site.Name, LeadID: string(lead.ID),
		Name: leadName(lead), Phone: lead.Phone, Email: lead.Email, Message: clip(lead.Message, 300), URL: link, Text: text}
}

// testText is the test notification.
func testText(lang string) (subject, body string) {
	return tr(lang, "CleanAds test message"), tr(lang, "This is a test from CleanAds: notifications reach you here.") + "\n"
}
