package store

import (
	"cmp"
	"net/url"
	"slices"
	"strings"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// Where the click of a lead without a campaign came from.
const (
	ClickMeta    = "meta"
	ClickGoogle  = "google"
	ClickTikTok  = "tiktok"
	ClickOrganic = "organic" // no ad click known: organic or direct
)

// AdRef names a campaign, ad set or ad: its id and name, either may be
// empty.
type AdRef struct{ ID, Name string }

// Empty reports whether the ref names nothing.
func (a AdRef) Empty() bool { return a.ID == "" && a.Name == "" }

// Key groups refs: by id when there is one (a campaign renamed stays
// one), else by name.
func (a AdRef) Key() string {
	if a.ID != "" {
		return "id:" + a.ID
	}
	return "name:" + a.Name
}

// Attribution is where a lead came from, as the campaign report groups it.
type Attribution struct {
	Campaign, AdSet, Ad AdRef
	// Click is the ad platform whose click brought the lead (ClickMeta,
	// ...), ClickOrganic when none is known.
	Click string
}

// Attribute says where a lead came from: a Lead Ads lead by the campaign,
// ad set and ad Meta gives with it (an organic one by none); a Click-to-WhatsApp lead by its ad; a
// web lead by its landing visit's utm_campaign, utm_term (the ad set, as
// Meta's URL parameters fill it) and utm_content (the ad), else those of the
// form's page; the click by the click ids (fbclid, gclid, ttclid) of the
// landing visit, the lead and its page, else by utm_source.
func Attribute(l *ReportLead) Attribution {
	d := l.Detail
	switch l.Source {
	case model.SourceLeadAds:
		if d[model.DetailOrganic] == "true" {
			// A form reached from the Page, not from an ad.
			return Attribution{Click: ClickOrganic}
		}
		return Attribution{Click: ClickMeta,
			Campaign: AdRef{d[model.DetailCampaign], d[model.DetailCampaignName]},
			AdSet:    AdRef{d[model.DetailAdSet], d[model.DetailAdSetName]},
			Ad:       AdRef{d[model.DetailAd], d[model.DetailAdName]}}
	case model.SourceWhatsApp:
		a := Attribution{Click: ClickOrganic}
		if d[model.DetailAdID] != "" || d[model.DetailCTWAClid] != "" {
			a.Click = ClickMeta
			a.Ad = AdRef{d[model.DetailAdID], d[model.DetailAdHeadline]}
		}
		return a
	}
	if c := d[model.DetailClick]; c != "" {
		// An erased lead: where it came from, kept (LeadRedact).
		return Attribution{Click: c, Campaign: AdRef{d[model.DetailCampaign], d[model.DetailCampaignName]},
			AdSet: AdRef{d[model.DetailAdSet], d[model.DetailAdSetName]}, Ad: AdRef{d[model.DetailAd], d[model.DetailAdName]}}
	}
	var (
		a          Attribution
		page       url.Values
		utmSource  string
		fb, gc, tt bool
	)
	if u, err := url.Parse(l.PageURL); err == nil {
		page = u.Query()
	}
	if v := l.Landing; v != nil {
		if v.Campaign != "" {
			a.Campaign, a.AdSet, a.Ad = AdRef{Name: v.Campaign}, AdRef{Name: v.Term}, AdRef{Name: v.Content}
		}
		utmSource = v.Source
		fb, gc, tt = v.FBClid != "", v.GClid != "", v.TTClid != ""
	}
	if a.Campaign.Empty() && page.Get("utm_campaign") != "" {
		a.Campaign, a.AdSet, a.Ad = AdRef{Name: page.Get("utm_campaign")}, AdRef{Name: page.Get("utm_term")}, AdRef{Name: page.Get("utm_content")}
	}
	utmSource = cmp.Or(utmSource, page.Get("utm_source"))
	fb = fb || l.FBClid != "" || page.Get("fbclid") != ""
	gc = gc || l.GClid != "" || page.Get("gclid") != ""
	tt = tt || page.Get("ttclid") != ""
	switch src := strings.ToLower(utmSource); {
	case fb:
		a.Click = ClickMeta
	case gc:
		a.Click = ClickGoogle
	case tt:
		a.Click = ClickTikTok
	case slices.Contains([]string{"facebook", "fb", "instagram", "ig", "meta"}, src):
		a.Click = ClickMeta
	case src == "google" || src == "adwords":
		a.Click = ClickGoogle
	case src == "tiktok":
		a.Click = ClickTikTok
	default:
		a.Click = ClickOrganic
	}
	return a
}

// MainReason is the code of the reason a junk lead is junk for: the word
// of whoever decided it when not the rules (the owner, evidence), else a
// final reason, else the one with the most points.
func MainReason(d model.Decision) string {
	if d.DecidedBy != "" && d.DecidedBy != model.DecidedByRules {
		for i := len(d.Reasons) - 1; i >= 0; i-- {
			if !qualify.RuleReason(d.Reasons[i].Code) {
				return d.Reasons[i].Code
			}
		}
	}
	best := -1
	for i, r := range d.Reasons {
		if best < 0 || (r.Final && !d.Reasons[best].Final) || (r.Final == d.Reasons[best].Final && r.Points > d.Reasons[best].Points) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return d.Reasons[best].Code
}
