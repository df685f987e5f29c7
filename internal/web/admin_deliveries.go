package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// deliveryStates are the states the deliveries page lists, in its order.
var deliveryStates = []model.DeliveryState{model.DeliveryDead, model.DeliveryPaused, model.DeliveryRetry,
	model.DeliveryPending, model.DeliverySent, model.DeliveryExpired, model.DeliveryDryRun}

// deliveriesData is the deliveries page's data.
type deliveriesData struct {
	Sites []*model.Site
	Site  string
	State string
	Tabs  []stateTab
	Rows  []deliveryGroup
	More  string
	// Trouble is a banner per platform that cannot be reached or refuses.
	Trouble []trouble
	Return  string
}

type stateTab struct {
	State, Word, URL string
	N                int
	Current          bool
}

// adminDeliveries lists the events for Meta by state, newest first, with
// Meta's messages; dead letters can be replayed.
func (s *Server) adminDeliveries(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "deliveries", "Deliveries")
	ctx := r.Context()
	q := r.URL.Query()
	// After a replay the page comes back here, without the old notice.
	ret := *r.URL
	rq := ret.Query()
	rq.Del("replayed")
	ret.RawQuery = rq.Encode()
	d := deliveriesData{Site: q.Get("site"), State: q.Get("state"), Return: ret.RequestURI()}
	sites, err := s.siteList(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	d.Sites = sites
	if d.Site != "" {
		if err := maySee(r, model.SiteID(d.Site)); err != nil {
			s.adminFail(w, r, err)
			return
		}
	}
	counts := map[model.DeliveryState]int{}
	statSites := []model.SiteID{model.SiteID(d.Site)}
	if only := onlySites(r); only != nil && d.Site == "" {
		statSites = only
	}
	for _, site := range statSites {
		n, err := s.db.DeliveryStats(ctx, site, "", time.Time{})
		if err != nil {
			s.adminFail(w, r, err)
			return
		}
		for st, k := range n {
			counts[st] += k
		}
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	tabURL := func(state string) string {
		v := url.Values{}
		if d.Site != "" {
			v.Set("site", d.Site)
		}
		if state != "" {
			v.Set("state", state)
		}
		if len(v) == 0 {
			return "/admin/deliveries"
		}
		return "/admin/deliveries?" + v.Encode()
	}
	d.Tabs = append(d.Tabs, stateTab{State: "", URL: tabURL(""), N: total, Current: d.State == ""})
	valid := d.State == ""
	for _, st := range deliveryStates {
		d.Tabs = append(d.Tabs, stateTab{State: string(st), Word: stateWord(p.Lang, string(st)), URL: tabURL(string(st)), N: counts[st], Current: d.State == string(st)})
		valid = valid || d.State == string(st)
	}
	if !valid {
		s.adminFail(w, r, model.Invalid("state", fmt.Sprintf("unknown state %q", d.State)))
		return
	}
	f := store.DeliveryFilter{Site: model.SiteID(d.Site), Only: onlySites(r), State: model.DeliveryState(d.State), Limit: inboxPage + 1}
	if ms, err := strconv.ParseInt(q.Get("before"), 10, 64); err == nil {
		f.Before, f.BeforeID = time.UnixMilli(ms), q.Get("bid")
	}
	list, err := s.db.DeliveryList(ctx, f)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	if len(list) > inboxPage {
		list = list[:inboxPage]
		last := list[len(list)-1]
		next, _ := url.ParseQuery(tabURL(d.State)[len("/admin/deliveries"):])
		if next == nil {
			next = url.Values{}
		}
		next.Set("before", strconv.FormatInt(last.CreatedAt.UnixMilli(), 10))
		next.Set("bid", last.ID)
		d.More = "/admin/deliveries?" + next.Encode()
	}
	now := s.now()
	rows := make([]deliveryRow, 0, len(list))
	for _, del := range list {
		rows = append(rows, s.deliveryRow(p.Lang, del, now))
	}
	d.Rows = groupFailures(rows)
	if d.Trouble, err = s.troubles(ctx, p.Lang, model.SiteID(d.Site), sites); err != nil {
		s.adminFail(w, r, err)
		return
	}
	if r.URL.Query().Get("replayed") != "" {
		p.Notice = tr(p.Lang, "The event is queued again; the delivery worker sends it shortly.")
	}
	p.D = d
	s.render(w, r, http.StatusOK, "deliveries", p)
}

// adminReplay puts a dead letter back in the queue, after the cause (a
// token, a setting) was fixed; its event id is unchanged, so Meta can never
// count it twice.
func (s *Server) adminReplay(w http.ResponseWriter, r *http.Request) {
	a := adminFrom(r.Context())
	now := s.now()
	note := fmt.Sprintf("replayed by %s at %s", a.user.ID, now.UTC().Format(time.RFC3339))
	del, err := s.db.DeliveryByID(r.Context(), r.PathValue("id"))
	if err == nil {
		err = maySee(r, del.SiteID)
	}
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	if err := s.db.DeliveryReplay(r.Context(), r.PathValue("id"), note, now); err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.log.InfoContext(r.Context(), "delivery replayed", "delivery", r.PathValue("id"), "user", string(a.user.ID))
	back := safeNext(r.PostFormValue("back"))
	sep := "?"
	if u, err := url.Parse(back); err == nil && u.RawQuery != "" {
		sep = "&"
	}
	http.Redirect(w, r, back+sep+"replayed=1", http.StatusSeeOther)
}
