package web

import (
	"slices"
	"sort"
	"strings"

	"github.com/cleanads/cleanads/internal/model"
)

// Where a lead came from, as the inbox and the lead page show it: the
// source (a web form, Lead Ads, WhatsApp, ...) and what the source says
// (model.Lead.SourceDetail), each key with a readable label. Any source's
// keys show: known ones in this order with their labels, others after them
// by key.

// sourceLabels name the sources.
var sourceLabels = []struct{ key, label string }{
	{model.SourceWeb, "Website form"},
	{model.SourceLeadAds, "Lead Ads (Instant Form)"},
	{model.SourceWhatsApp, "WhatsApp"},
}

// detailLabels name the detail keys, in the order they show.
var detailLabels = []struct{ key, label string }{
	{model.DetailFormName, "Form"},
	{model.DetailForm, "Form id"},
	{model.DetailAdName, "Ad"},
	{model.DetailAd, "Ad id"},
	{model.DetailAdSetName, "Ad set"},
	{model.DetailAdSet, "Ad set id"},
	{model.DetailCampaignName, "Campaign"},
	{model.DetailCampaign, "Campaign id"},
	{model.DetailOrganic, "Organic"},
	{model.DetailPlatform, "Platform"},
	{model.DetailPage, "Facebook Page"},
	{model.DetailCreated, "Created at Meta"},
	{model.DetailVia, "Arrived by"},
	{model.DetailAdHeadline, "Ad headline"},
	{model.DetailAdSourceType, "Ad type"},
	{model.DetailAdSourceURL, "Ad link"},
	{model.DetailCTWAClid, "WhatsApp click id"},
	{model.DetailWABAID, "WhatsApp Business Account"},
	{model.DetailPhoneNumberID, "WhatsApp number id"},
	{model.DetailWhatsAppUserID, "WhatsApp user id"},
	{model.DetailDevice, "Device"},
}

// detailValues are readable values of some keys.
var detailValues = map[string]map[string]string{
	model.DetailOrganic:  {"true": "yes", "false": "no"},
	model.DetailPlatform: {"fb": "Facebook", "ig": "Instagram", "an": "Audience Network", "messenger": "Messenger"},
	model.DetailVia:      {"webhook": "webhook", "backfill": "backfill"},
}

// sourceName is the lead's source in words.
func sourceName(lang string, l *model.Lead) string {
	src := l.Source
	if src == "" {
		src = model.SourceWeb
	}
	for _, s := range sourceLabels {
		if s.key == src {
			return tr(lang, s.label)
		}
	}
	return src
}

// sourceFacts are the lead's source detail, labelled, in order.
func sourceFacts(lang string, l *model.Lead) []kv {
	var out []kv
	seen := map[string]bool{}
	value := func(k, v string) string {
		if w, ok := detailValues[k][v]; ok {
			return tr(lang, w)
		}
		return v
	}
	for _, d := range detailLabels {
		if v := l.SourceDetail[d.key]; v != "" && !seen[d.key] {
			seen[d.key] = true
			out = append(out, kv{tr(lang, d.label), value(d.key, v)})
		}
	}
	var rest []string
	for k, v := range l.SourceDetail {
		if !seen[k] && v != "" {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		out = append(out, kv{strings.ReplaceAll(k, "_", " "), l.SourceDetail[k]})
	}
	return out
}

// sourceArrival is how the lead's story names its first moment: the form
// sent, the Instant Form sent, the first WhatsApp message.
func sourceArrival(lang string, l *model.Lead) string {
	switch l.Source {
	case "", model.SourceWeb:
		return tr(lang, "Sent the form")
	case model.SourceLeadAds:
		return tr(lang, "Sent the Instant Form")
	case model.SourceWhatsApp:
		return tr(lang, "Wrote on WhatsApp")
	}
	return tr(lang, "Came in by %s", sourceName(lang, l))
}

// sourceSummary is the inbox's line for a lead from a source other than
// the site's own forms: the source, the form and the ad (or "organic").
func sourceSummary(lang string, l *model.Lead) string {
	if l.Source == "" || l.Source == model.SourceWeb {
		return ""
	}
	parts := []string{sourceName(lang, l)}
	first := func(keys ...string) string {
		for _, k := range keys {
			if v := l.SourceDetail[k]; v != "" {
				return v
			}
		}
		return ""
	}
	if f := first(model.DetailFormName, model.DetailForm); f != "" {
		parts = append(parts, tr(lang, "form %s", f))
	}
	switch ad := first(model.DetailAdName, model.DetailAdHeadline, model.DetailAd); {
	case ad != "":
		parts = append(parts, tr(lang, "ad %s", ad))
	case l.SourceDetail[model.DetailOrganic] == "true":
		parts = append(parts, tr(lang, "organic, no ad"))
	}
	return strings.Join(slices.Compact(parts), " · ")
}
