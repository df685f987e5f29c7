package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// inboxPage is how many leads the inbox shows at once.
const inboxPage = 50

// inboxData is the inbox's data.
type inboxData struct {
	Sites   []*model.Site
	Site    string
	Verdict string
	Q       string
	Leads   []leadRow
	// More is the URL of the next, older page; empty on the last.
	More     string
	Filtered bool
}

// leadRow is one lead in a list.
type leadRow struct {
	ID, Site, Verdict, Who, Email, Phone string
	TopReason, When, Ago, Window         string
	Points                               int
	Urgent                               bool

	// Conflict is set when the CRM reached a stage with a lead the owner
	// called junk.
	Conflict string
	// Source says where a lead from other than the site's forms came from
	// (Lead Ads: the form and the ad); empty for a web form's.
	Source string
	// Earlier is the lead a repeat repeats, linked beside its reason.
	Earlier string
}

// adminInbox lists the newest leads first, filtered by verdict and site and
// searched by name, e-mail or phone.
func (s *Server) adminInbox(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "inbox", "Inbox")
	q := r.URL.Query()
	d := inboxData{Site: q.Get("site"), Verdict: q.Get("verdict"), Q: strings.TrimSpace(q.Get("q"))}
	switch model.Verdict(d.Verdict) {
	case "", model.VerdictClean, model.VerdictReview, model.VerdictJunk:
	default:
		d.Verdict = ""
	}
	d.Filtered = d.Site != "" || d.Verdict != "" || d.Q != ""
	sites, err := s.siteList(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	d.Sites = sites
	f := store.LeadFilter{Site: model.SiteID(d.Site), Only: onlySites(r), Verdict: model.Verdict(d.Verdict), Search: d.Q, Limit: inboxPage + 1}
	searchBy(&f, sites)
	if ms, err := strconv.ParseInt(q.Get("before"), 10, 64); err == nil {
		f.Before, f.BeforeID = time.UnixMilli(ms), model.LeadID(q.Get("bid"))
	}
	leads, err := s.db.LeadList(r.Context(), f)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	if len(leads) > inboxPage {
		leads = leads[:inboxPage]
		last := leads[len(leads)-1]
		next := url.Values{}
		for _, k := range []string{"site", "verdict", "q"} {
			if v := q.Get(k); v != "" {
				next.Set(k, v)
			}
		}
		next.Set("before", strconv.FormatInt(last.ReceivedAt.UnixMilli(), 10))
		next.Set("bid", string(last.ID))
		d.More = "/admin/?" + next.Encode()
	}
	conflicts, err := s.conflicts(r.Context(), p.Lang, leads)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	now := s.now()
	for _, l := range leads {
		row := s.leadRow(p.Lang, l, now)
		row.Conflict = conflicts[l.ID]
		d.Leads = append(d.Leads, row)
	}
	p.D = d
	s.render(w, r, http.StatusOK, "inbox", p)
}

func (s *Server) leadRow(lang string, l *model.Lead, now time.Time) leadRow {
	row := leadRow{ID: string(l.ID), Site: string(l.SiteID), Verdict: string(l.Verdict), Who: leadName(lang, l),
		Email: l.Email, Phone: l.Phone, When: s.when(l.ReceivedAt), Ago: ago(lang, now, l.ReceivedAt)}
	if top, ok := topReason(l); ok {
		row.TopReason, row.Points = reasonText(lang, top), top.Points
		if top.Code == qualify.CodeDuplicate {
			row.Earlier, _ = top.Evidence["lead_id"].(string)
		}
	}
	row.Window, row.Urgent = windowNote(lang, l, now)
	row.Source = sourceSummary(lang, l)
	return row
}

// searchBy sets how f's Search is looked for, the same for the inbox and
// its CSV export: as the phone's digits too (stored phones are digits with
// the country code and no trunk 0, so "0532 412" is searched as "532412"),
// and, when it is a whole e-mail or phone number, by the contact keys of
// the sites searched (searchKeys).
func searchBy(f *store.LeadFilter, sites []*model.Site) {
	if digits := strings.TrimLeft(onlyDigits(f.Search), "0"); len(digits) >= 3 {
		f.PhoneDigits = digits
	}
	f.Keys = searchKeys(f.Search, sites, string(f.Site))
}

// searchKeys is a search that is a whole e-mail address or phone number
// as the contact keys intake gave the leads of the sites searched (site,
// or all of sites), for LeadFilter.Keys; nil when it is neither, or a
// number whole for some of the sites' countries only (their leads would
// be searched differently; the text search treats them all alike). The
// whole contact finds the person's leads in the same time at any number
// of leads; a part of one searches the text.
func searchKeys(q string, sites []*model.Site, site string) []store.ContactKey {
	var in []*model.Site
	for _, s := range sites {
		if site == "" || string(s.ID) == site {
			in = append(in, s)
		}
	}
	if len(in) == 0 {
		return nil
	}
	if strings.Contains(q, "@") {
		k, err := capi.NormalizeEmail(q)
		if err != nil {
			return nil
		}
		key := store.ContactKey{Email: true, Key: k}
		for _, s := range in {
			key.Sites = append(key.Sites, s.ID)
		}
		return []store.ContactKey{key}
	}
	if onlyDigits(q) == "" {
		return nil
	}
	var keys []store.ContactKey
	for _, s := range in {
		k, ok := capi.PhoneKeyWhole(q, s.Settings.Country)
		if !ok {
			return nil
		}
		i := slices.IndexFunc(keys, func(c store.ContactKey) bool { return c.Key == k })
		if i < 0 {
			keys = append(keys, store.ContactKey{Key: k})
			i = len(keys) - 1
		}
		keys[i].Sites = append(keys[i].Sites, s.ID)
	}
	return keys
}

func onlyDigits(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else if c != ' ' && c != '+' && c != '-' && c != '(' && c != ')' && c != '.' {
			return ""
		}
	}
	return b.String()
}
