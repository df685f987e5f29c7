package app

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
)

// CollectInput is one page view as t.js reports it, with what the request
// itself says (cookies, IP, agent).
type CollectInput struct {
	// VisitorID is the visitor cookie's value, if any.
	VisitorID string
	PageURL   string
	Referrer  string
	// Consent is nil when the page did not say.
	Consent *bool
	// FBC and FBP are the browser's _fbc and _fbp (set by us or by the
	// pixel); malformed values are ignored.
	FBC, FBP  string
	ClientIP  string
	UserAgent string
	// LeadForms is how many lead forms t.js found on the page; nil when it
	// did not say (t.v1.js). Counted in the site's form_visits.
	LeadForms *int
}

// CollectResult is what the browser gets back.
type CollectResult struct {
	// Consent tells whether cookies may be set and events sent.
	Consent bool
	// Visitor is the visitor as stored; nil without consent.
	Visitor *model.Visitor
	// EventID is the PageView's event_id, for the pixel; empty without
	// consent.
	EventID string
	// PageViewQueued tells whether the server copy of the PageView is in
	// the outbox.
	PageViewQueued bool
	// FormToken is the signed token the page's forms send with a lead.
	FormToken string
}

// Collect records a visit: the visitor's click identity is kept or minted
// (see nextFBC), the visit stored and, when the site sends PageViews, the
// server copy of the PageView queued in the same transaction. Without
// consent nothing is stored: the answer carries only a form token, so the
// server can still time the form. An explicit no is remembered on a known
// visitor.
func (s *Service) Collect(ctx context.Context, site *model.Site, in *CollectInput) (*CollectResult, error) {
	now := s.now().UTC()
	page, err := checkCollect(in)
	if err != nil {
		return nil, err
	}
	key, err := s.tokenKey(ctx)
	if err != nil {
		return nil, err
	}
	// What needs no stored state is made before the transaction: SQLite
	// has one writer, and every request waits behind the work done in it.
	visit := &model.Visit{SiteID: site.ID, At: now, EventID: model.NewUUIDv7(now)}
	visit.ClickIDs, visit.UTM = clickIDs(page)
	if in.LeadForms != nil {
		n := *in.LeadForms
		visit.LeadForms = &n
	}
	newVisitor := s.ids.New("v_", now) // the id, if the visitor is new
	res := &CollectResult{}
	tokenVisitor := "" // whom the form token names: nobody without consent
	err = s.db.IntakeTx(ctx, func(tx *store.Tx) error {
		var v *model.Visitor
		if validVisitorID(in.VisitorID) {
			old, err := tx.VisitorByID(ctx, site.ID, in.VisitorID)
			switch {
			case err == nil:
				v = old
			case !errors.Is(err, model.ErrNotFound):
				return err
			}
		}
		consent := in.Consent
		if consent == nil && v != nil {
			consent = v.Consent
		}
		if !site.ConsentAllows(consent) {
			if v != nil && in.Consent != nil {
				if err := tx.VisitorSetConsent(ctx, site.ID, v.ID, false, now); err != nil {
					return err
				}
			}
			return nil
		}
		res.Consent = true
		var was model.Visitor
		if v == nil {
			v = &model.Visitor{ID: newVisitor, SiteID: site.ID, FirstSeen: now}
		} else {
			was = *v
		}
		visit.VisitorID = v.ID
		v.FBC, v.FBCAt = nextFBC(v.FBC, v.FBCAt, visit.FBClid, in.FBC, now)
		v.FBP = nextFBP(v.FBP, in.FBP, now)
		v.LastSeen, v.LastIP, v.LastUserAgent = now, in.ClientIP, in.UserAgent
		if in.Consent != nil {
			v.Consent = in.Consent
		}
		if visitorChanged(&was, v) {
			if err := tx.VisitorUpsert(ctx, v); err != nil {
				return err
			}
		}
		res.Visitor, res.EventID, tokenVisitor = v, visit.EventID, v.ID
		if site.Settings.Meta.SendsPageView() {
			queued, err := s.enqueuePageView(ctx, tx, site, v, in, visit.EventID, now)
			if err != nil {
				return err
			}
			res.PageViewQueued = queued
		}
		// The visit last: it adds to the site's counters of the day, rows
		// every visit of the site writes, whose lock PostgreSQL holds until
		// the commit; nothing else waits behind it then.
		return tx.VisitInsert(ctx, visit)
	})
	if err != nil {
		return nil, err
	}
	res.FormToken = s.issueToken(key, site.ID, tokenVisitor, now)
	return res, nil
}

// visitorTouch is how stale a returning visitor's last_seen, last_ip and
// last_user_agent may grow before a visit rewrites them when nothing else
// changed: rewriting the visitor on each page view would dirty a page of
// the visitors table per request for a value only read as a fallback
// (link: a lead sent without its IP and agent) and by retention. A visit
// does not keep its IP and agent (migration 0350): the lead keeps its own.
const visitorTouch = time.Hour

// visitorChanged tells whether v must be written: it is new (was has no
// id), its click identity or consent changed, or it was last written more
// than visitorTouch ago.
func visitorChanged(was, v *model.Visitor) bool {
	return was.ID == "" || was.FBC != v.FBC || !was.FBCAt.Equal(v.FBCAt) || was.FBP != v.FBP ||
		!sameConsent(was.Consent, v.Consent) || v.LastSeen.Sub(was.LastSeen) >= visitorTouch
}

func sameConsent(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// enqueuePageView puts the server copy of a visit's PageView in the
// PageView queue (in the outbox on a dry_run site).
// An event that Meta would refuse (no user agent, say) is not queued: a page
// view belongs to no lead, so nobody would look at a dead row.
func (s *Service) enqueuePageView(ctx context.Context, tx *store.Tx, site *model.Site, v *model.Visitor, in *CollectInput, eventID string, now time.Time) (bool, error) {
	ev := capi.Event{
		EventName: model.PageViewEvent, EventTime: now.Unix(), EventID: eventID, ActionSource: capi.SourceWebsite,
		EventSourceURL: in.PageURL, ReferrerURL: in.Referrer,
		UserData: capi.UserData{ClientIPAddress: in.ClientIP, ClientUserAgent: in.UserAgent, FBC: v.FBC, FBP: v.FBP},
	}
	if err := capi.Precheck(&ev, now); err != nil {
		s.log.DebugContext(ctx, "PageView not queued", "site", string(site.ID), "err", err)
		return false, nil
	}
	// Sized for the payload, so it is not grown on the way: its texts, 244
	// bytes of keys, name, time and id, and room for escapes (a URL's &
	// takes six).
	size := 320 + len(in.PageURL) + len(in.Referrer) + len(in.ClientIP) + len(in.UserAgent) + len(v.FBC) + len(v.FBP)
	payload, ok := capi.AppendPageView(make([]byte, 0, size), &ev)
	if !ok {
		var err error
		if payload, err = json.Marshal(ev); err != nil {
			return false, fmt.Errorf("app: PageView payload: %w", err)
		}
	}
	d := &model.Delivery{
		SiteID: site.ID, Kind: model.KindPageView, EventName: ev.EventName,
		EventID: ev.EventID, PixelID: site.Settings.Meta.PixelID, Payload: payload, State: model.DeliveryPending,
		NextAt: now, DeadlineAt: now.Add(model.MaxEventAge), Mode: site.Settings.Meta.Mode, CreatedAt: now, UpdatedAt: now,
	}
	if d.Mode == model.ModeDryRun {
		// Kept as what would have been sent, for the site to check: an
		// outbox row, with an id of its own (a queued one needs none).
		d.ID, d.State = s.ids.New("dl_", now), model.DeliveryDryRun
		return tx.DeliveryInsert(ctx, d)
	}
	return tx.PageViewEnqueue(ctx, d)
}

// nextFBC applies the click-identity rules to a visitor's fbc (cur, created
// at curAt), given the fbclid of the page's URL and the browser's _fbc:
//   - an fbclid is minted once, as fb.1.<first-seen ms>.<fbclid>, never
//     altered: seeing the same fbclid again keeps the first time;
//   - a new fbclid replaces the old fbc;
//   - without an fbclid the fbc is kept;
//   - the browser's _fbc (the pixel's) is taken when we have none, or when it
//     names another, newer click the pixel saw where t.js was not;
//   - for a new fbclid the pixel already minted, its value is taken, so both
//     sides say the same.
func nextFBC(cur string, curAt time.Time, fbclid, browser string, now time.Time) (string, time.Time) {
	bAt, bOK := cookieTime(browser, now)
	if fbclid != "" && validClickID(fbclid) {
		switch {
		case cur != "" && sameClick(cur, fbclid):
			return cur, curAt
		case bOK && sameClick(browser, fbclid):
			return browser, bAt
		}
		return capi.MintFBC(fbclid, now), now
	}
	switch {
	case cur == "" && bOK:
		return browser, bAt
	case cur != "" && bOK && !sameClick(cur, clickOf(browser)) && bAt.After(curAt):
		return browser, bAt
	}
	return cur, curAt
}

// nextFBP keeps the visitor's fbp, else takes the browser's, else mints
// fb.1.<ms>.<random> as the pixel does.
func nextFBP(cur, browser string, now time.Time) string {
	if cur != "" {
		return cur
	}
	if _, ok := cookieTime(browser, now); ok {
		return browser
	}
	var b [4]byte
	rand.Read(b[:])
	return "fb.1." + strconv.FormatInt(now.UnixMilli(), 10) + "." + strconv.FormatUint(uint64(binary.BigEndian.Uint32(b[:])>>1), 10)
}

// cookieTime returns the creation time of a well-formed fb.* cookie value
// that is safe to send back in a Set-Cookie.
func cookieTime(v string, now time.Time) (time.Time, bool) {
	if v == "" || len(v) > 500 || capi.CheckFBC(v, now) != nil {
		return time.Time{}, false
	}
	p := strings.SplitN(v, ".", 4)
	if !validClickID(p[3]) {
		return time.Time{}, false
	}
	ms, _ := strconv.ParseInt(p[2], 10, 64)
	return time.UnixMilli(ms).UTC(), true
}

// clickOf returns the fbclid inside an fbc.
func clickOf(fbc string) string {
	p := strings.SplitN(fbc, ".", 4)
	if len(p) != 4 {
		return ""
	}
	return p[3]
}

// sameClick tells whether fbc was made from fbclid (Meta's parameter
// builder may append ".<appendix>" after it).
func sameClick(fbc, fbclid string) bool {
	c := clickOf(fbc)
	return fbclid != "" && (c == fbclid || strings.HasPrefix(c, fbclid+"."))
}

// validClickID accepts the characters click ids are made of, which are also
// safe in a cookie value, so the value the server sets is never altered.
func validClickID(s string) bool {
	if s == "" || len(s) > 450 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~') {
			return false
		}
	}
	return true
}

// validVisitorID checks the form of our visitor ids ("v_" + 26 base32).
func validVisitorID(s string) bool {
	if len(s) != 28 || !strings.HasPrefix(s, "v_") {
		return false
	}
	for i := 2; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdefghjkmnpqrstvwxyz", rune(s[i])) {
			return false
		}
	}
	return true
}

// clickIDs reads the click ids and UTM parameters of a landing URL.
func clickIDs(u *url.URL) (model.ClickIDs, model.UTM) {
	if u.RawQuery == "" {
		return model.ClickIDs{}, model.UTM{}
	}
	q := u.Query()
	g := func(k string) string {
		v := strings.TrimSpace(q.Get(k))
		if len(v) > maxShort*2 {
			v = v[:maxShort*2]
		}
		return v
	}
	return model.ClickIDs{FBClid: g("fbclid"), GClid: g("gclid"), WBraid: g("wbraid"), GBraid: g("gbraid"),
			TTClid: g("ttclid"), MSClkid: g("msclkid")},
		model.UTM{Source: g("utm_source"), Medium: g("utm_medium"), Campaign: g("utm_campaign"),
			Term: g("utm_term"), Content: g("utm_content")}
}

// maxLeadForms bounds collect's "lf": a count above it (or below 0) is no
// page's, and is dropped.
const maxLeadForms = 1000

// checkCollect refuses what cannot be a page view, and returns the page's
// URL parsed.
func checkCollect(in *CollectInput) (*url.URL, error) {
	var errs []error
	u, err := url.Parse(in.PageURL)
	switch {
	case in.PageURL == "":
		errs = append(errs, model.Invalid("url", "required: the page's address"))
	case len(in.PageURL) > maxURL || !utf8.ValidString(in.PageURL):
		errs = append(errs, model.Invalid("url", fmt.Sprintf("must be valid UTF-8 of at most %d bytes", maxURL)))
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		errs = append(errs, model.Invalid("url", "want an http(s) URL"))
	}
	if len(in.Referrer) > maxURL || !utf8.ValidString(in.Referrer) {
		errs = append(errs, model.Invalid("referrer", fmt.Sprintf("must be valid UTF-8 of at most %d bytes", maxURL)))
	}
	if len(in.UserAgent) > maxURL {
		in.UserAgent = in.UserAgent[:maxURL]
	}
	if in.LeadForms != nil && (*in.LeadForms < 0 || *in.LeadForms > maxLeadForms) {
		// A count no page has is left out; the visit itself is kept.
		in.LeadForms = nil
	}
	return u, errors.Join(errs...)
}
