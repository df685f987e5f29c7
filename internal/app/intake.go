package app

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store"
)

// LeadInput is a lead as a website or a server posts it.
type LeadInput struct {
	EventID    string            `json:"event_id"`
	Email      string            `json:"email"`
	Phone      string            `json:"phone"`
	Name       string            `json:"name"`
	FirstName  string            `json:"first_name"`
	LastName   string            `json:"last_name"`
	Message    string            `json:"message"`
	Fields     map[string]string `json:"fields"`
	PageURL    string            `json:"page_url"`
	Referrer   string            `json:"referrer"`
	FBC        string            `json:"fbc"`
	FBP        string            `json:"fbp"`
	FBClid     string            `json:"fbclid"`
	GClid      string            `json:"gclid"`
	ExternalID string            `json:"external_id"`
	LeadAdsID  string            `json:"lead_id"`
	// Cookies are the ad platforms' first-party browser cookies by name
	// (TikTok's _ttp), as the browser sent them with the form; a site's
	// server may pass them on.
	Cookies   map[string]string `json:"cookies"`
	VisitorID string            `json:"visitor_id"`
	Consent   *bool             `json:"consent"`
	FillMS    *int64            `json:"fill_ms"`
	Honeypot  string            `json:"hp"`
	// FormToken is the signed token t.js got with the visit.
	FormToken string `json:"form_token"`
	// Confirmed says the form's plugin told t.js the site took this
	// submission: the lead is final at once.
	Confirmed bool `json:"confirmed"`

	// Set only by a caller holding the site's API key.
	ClientIP    string `json:"client_ip"`
	UserAgent   string `json:"user_agent"`
	SubmittedAt string `json:"submitted_at"`

	// FromServer says the site's own server posted the lead with its API
	// key, so FillMS is its figure, not our tracker's. Set by the web
	// layer, never from the body.
	FromServer bool `json:"-"`
	// Browser says a browser posted the lead as JSON, as t.js does: unless
	// Confirmed, it stays open for a later attempt (AttemptWindow). Set by
	// the web layer, never from the body; other callers' leads are final.
	Browser bool `json:"-"`
}

// Limits on a lead's fields; the request body is capped at 64 KiB anyway.
const (
	maxShort   = 200
	maxURL     = 2048
	maxMessage = 10000
	maxFields  = 50
	maxCookies = 10
	maxEventID = 100
)

// Submit judges and stores a lead, with its outbox rows, in one
// transaction. A lead whose event_id the site already has is not stored
// again: the first one is returned with created false, so a retried post is
// harmless; but a later attempt of an open lead (a browser's, within
// AttemptWindow, nothing of it sent) replaces its values and is judged
// again (reattempt).
func (s *Service) Submit(ctx context.Context, site *model.Site, in *LeadInput) (lead *model.Lead, created bool, err error) {
	return s.submit(ctx, site, in, nil)
}

// submit is Submit; source, when not nil, says where the lead came from
// (its Source and SourceDetail) before it is judged.
func (s *Service) submit(ctx context.Context, site *model.Site, in *LeadInput, source func(*model.Lead)) (lead *model.Lead, created bool, err error) {
	now := s.now().UTC()
	// The phone is parsed once, for its key, its hash and the rules.
	var phoneMemo capi.PhoneMemo
	lead, err = s.leadFromInput(site, in, now, phoneMemo.Parse)
	if err != nil {
		return nil, false, err
	}
	if source != nil {
		source(lead)
	} else if opens(in) {
		until := now.Add(AttemptWindow)
		lead.OpenUntil = &until
	}
	var key []byte
	if in.FormToken != "" {
		// Loaded before the transaction: on SQLite it holds the only writer.
		if key, err = s.tokenKey(ctx); err != nil {
			return nil, false, err
		}
	}
	// Hashed, the token's signature checked and the lead judged before the
	// transaction: on SQLite the transaction runs on the one writer, and a
	// clean lead's two events share the hashes. The rules read only the
	// lead's own fields, its token and the same person's earlier lead, so
	// the verdict judged here, as if the token's nonce were fresh and the
	// person new, is the one the transaction keeps unless it finds the
	// nonce used or an earlier lead; then it judges again.
	prepared := s.prepare(site, lead)
	phone := qualify.CheckPhoneWith(lead.Phone, site.Settings.Country, phoneMemo.Parse)
	ahead, ft, useNonce := s.readToken(key, site, in.FormToken, now)
	rules := s.rules(site)
	qc := qualify.Context{Now: now, Country: site.Settings.Country, Token: ahead, Phone: phone, Text: s.textFor(ctx, site)}
	leadContext(&qc, lead)
	judged := rules.Score(lead, qc)
	look := store.IntakeLookup{EventID: lead.EventID, EmailKey: lead.EmailKey, PhoneKey: lead.PhoneKey,
		Since: lead.ReceivedAt.Add(-rules.DuplicateWindow()), Exclude: lead.ID, VisitEventID: lead.EventID}
	for i, id := range []string{lead.VisitorID, ft.visitor} {
		if validVisitorID(id) {
			look.VisitorIDs[i] = id
		}
	}
	look.Landing = lead
	var tc qualify.TokenCheck
	var updated bool
	// store writes a new lead. fast (PostgreSQL, outside a transaction:
	// store.DB.Autocommit) takes the token's nonce for fresh and writes it
	// with everything else in one statement, which fails with
	// store.ErrNonceUsed when it was not; a replay (the event_id found) is
	// then errSlowPath. Either is done again in a transaction.
	write := func(tx *store.Tx, fast bool) error {
		found, err := tx.LeadIntake(ctx, site.ID, look)
		if err != nil {
			return err
		}
		if found.Existing != "" {
			if fast {
				return errSlowPath
			}
			old, err := tx.LeadByID(ctx, found.Existing)
			if err != nil {
				return err
			}
			again := attempt{site: site, in: in, rules: rules, qc: qc, token: ahead, visitor: found.Visitor, prepared: prepared}
			if updated, err = s.reattempt(ctx, tx, old, lead, again, now); err != nil || updated {
				return err
			}
			lead = old
			return nil
		}
		var nonce string
		if fast {
			tc = ahead
			if useNonce {
				nonce = ft.nonce
			}
		} else if tc, err = s.useToken(ctx, tx, site, lead, ahead, ft, useNonce, now); err != nil {
			return err
		}
		linkVisitor(lead, found.Visitor)
		d := judged
		if tc != ahead || found.Previous != "" {
			qc := qc
			qc.Token = tc
			if found.Previous != "" {
				qc.Previous = &qualify.Previous{LeadID: found.Previous, At: found.PreviousAt, Match: found.Match}
			}
			d = rules.Score(lead, qc)
		}
		lead.Decision = d
		lead.ReviewUntil = nil
		if d.Verdict == model.VerdictReview {
			until := lead.SubmittedAt.Add(rules.ReviewTimeout())
			lead.ReviewUntil = &until
		}
		data := map[string]any{"verdict": lead.Verdict, "score": lead.Score, "decided_by": lead.DecidedBy}
		if tc.Checked {
			data["form_token"] = tokenFacts(tc)
		}
		if lead.OpenUntil != nil {
			data["open_until"] = lead.OpenUntil.Format(time.RFC3339)
		}
		w := store.LeadWrite{Lead: lead, Nonce: nonce, Landing: found.Landing, LandingRead: found.LandingRead, Notify: true,
			History: &model.HistoryEntry{ID: s.ids.New("h_", now), LeadID: lead.ID, At: now, Kind: model.HistoryVerdict, Data: data}}
		if w.Deliveries, err = s.hookRows(ctx, tx, lead, hooksOfNewLead(lead), now); err != nil {
			return err
		}
		if mayQueueLead(site, lead) && lead.Verdict != model.VerdictJunk {
			events, err := s.leadEvents(ctx, tx, site, lead, prepared, now)
			if err != nil {
				return err
			}
			w.Deliveries = append(w.Deliveries, events...)
		}
		if err := tx.LeadIntakeWrite(ctx, w); err != nil {
			return err
		}
		created = true
		return nil
	}
	if tx, ok := s.db.Autocommit(); ok {
		before := *lead
		err = write(tx, true)
		if errors.Is(err, errSlowPath) || errors.Is(err, store.ErrNonceUsed) {
			*lead, created = before, false
			err = s.db.IntakeTx(ctx, func(tx *store.Tx) error { return write(tx, false) })
		}
	} else {
		err = s.db.IntakeTx(ctx, func(tx *store.Tx) error { return write(tx, false) })
	}
	if err == nil && (created || updated) {
		s.logText(site, lead.ID, lead.Decision)
	}
	if errors.Is(err, model.ErrConflict) {
		// Another node (PostgreSQL) stored the same event_id between our
		// look-up and our insert: the post is a replay after all.
		old, lerr := s.db.LeadByEventID(ctx, site.ID, lead.EventID)
		if lerr == nil {
			return old, false, nil
		}
		if !errors.Is(lerr, model.ErrNotFound) {
			return nil, false, lerr
		}
	}
	if err != nil {
		return nil, false, err
	}
	if created || updated {
		s.wake()
	}
	return lead, created, nil
}

// enqueueLead queues the lead's events for Meta (leadEvents) in the
// caller's transaction. Callers check the lead's consent first
// (mayQueueLead).
func (s *Service) enqueueLead(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, prepared map[string]any, now time.Time) error {
	if lead.Verdict == model.VerdictJunk {
		return nil
	}
	rows, err := s.leadEvents(ctx, tx, site, lead, prepared, now)
	if err != nil || len(rows) == 0 {
		return err
	}
	_, err = tx.DeliveryInsertAll(ctx, rows)
	return err
}

// errSlowPath is intake's one-statement write giving way to the
// transaction (see submit).
var errSlowPath = errors.New("app: intake needs a transaction")

// leadEvents are the outbox rows of a new lead's events: the raw lead
// event (the lead's own event_id, shared with the pixel) and, when it is
// clean, the server-only qualified event. Submit adds them only when the
// lead's consent allows (mayQueueLead) and it is not junk.
func (s *Service) leadEvents(ctx context.Context, tx *store.Tx, site *model.Site, lead *model.Lead, prepared map[string]any, now time.Time) ([]*model.Delivery, error) {
	specs := []eventSpec{{Kind: model.KindLead, Prepared: prepared}}
	if lead.Verdict == model.VerdictClean {
		// Judged clean at submit: the rules saw the visit, so website.
		specs = append(specs, eventSpec{Kind: model.KindQualified, ActionSource: capi.SourceWebsite, Prepared: prepared})
	}
	var r sent
	rows, _, err := s.eventRows(ctx, tx, site, lead, specs, now, &r)
	return rows, err
}

// leadFromInput checks a posted lead and makes it a new lead; parse parses
// its phone (nil: capi.ParsePhone).
func (s *Service) leadFromInput(site *model.Site, in *LeadInput, now time.Time, parse capi.PhoneParser) (*model.Lead, error) {
	var errs []error
	check := func(field, v string, max int) string {
		v = strings.TrimSpace(v)
		switch {
		case !utf8.ValidString(v):
			errs = append(errs, model.Invalid(field, "is not valid UTF-8"))
		case len(v) > max:
			errs = append(errs, model.Invalid(field, fmt.Sprintf("is longer than %d bytes", max)))
		case strings.ContainsRune(v, 0):
			errs = append(errs, model.Invalid(field, "holds a NUL character"))
		}
		return v
	}
	l := &model.Lead{
		ID:          model.LeadID(s.ids.New("ld_", now)),
		SiteID:      site.ID,
		EventID:     check("event_id", in.EventID, maxEventID),
		VisitorID:   check("visitor_id", in.VisitorID, maxShort),
		Email:       check("email", in.Email, maxShort),
		Phone:       check("phone", in.Phone, maxShort),
		Name:        check("name", in.Name, maxShort),
		FirstName:   check("first_name", in.FirstName, maxShort),
		LastName:    check("last_name", in.LastName, maxShort),
		Message:     check("message", in.Message, maxMessage),
		PageURL:     check("page_url", in.PageURL, maxURL),
		Referrer:    check("referrer", in.Referrer, maxURL),
		FBC:         check("fbc", in.FBC, maxURL),
		FBP:         check("fbp", in.FBP, maxShort),
		FBClid:      check("fbclid", in.FBClid, maxURL),
		GClid:       check("gclid", in.GClid, maxURL),
		ExternalID:  check("external_id", in.ExternalID, maxShort),
		LeadAdsID:   check("lead_id", in.LeadAdsID, maxShort),
		Consent:     in.Consent,
		FillMS:      in.FillMS,
		Honeypot:    check("hp", in.Honeypot, maxShort),
		ClientIP:    check("client_ip", in.ClientIP, maxShort),
		UserAgent:   check("user_agent", in.UserAgent, maxURL),
		ReceivedAt:  now,
		SubmittedAt: now,
	}
	if len(in.Cookies) > maxCookies {
		errs = append(errs, model.Invalid("cookies", fmt.Sprintf("has more than %d entries", maxCookies)))
	}
	for k, v := range in.Cookies {
		if v = check("cookies."+k, v, maxShort); v != "" && len(in.Cookies) <= maxCookies {
			if l.SourceDetail == nil {
				l.SourceDetail = map[string]string{}
			}
			l.SourceDetail[model.DetailCookiePrefix+check("cookies", k, maxShort)] = v
		}
	}
	if len(in.Fields) > maxFields {
		errs = append(errs, model.Invalid("fields", fmt.Sprintf("has more than %d entries", maxFields)))
	}
	if len(in.Fields) > 0 {
		l.Fields = make(map[string]string, len(in.Fields))
		for k, v := range in.Fields {
			l.Fields[check("fields", k, maxShort)] = check("fields."+k, v, maxMessage)
		}
	}
	if l.EventID == "" {
		l.EventID = model.NewUUIDv7(now)
	} else if !validEventID(l.EventID) {
		errs = append(errs, model.Invalid("event_id", "use letters, digits, '-', '_', '.' or ':' only"))
	}
	if l.LeadAdsID != "" && !isDigits(l.LeadAdsID) {
		errs = append(errs, model.Invalid("lead_id", "a Lead Ads lead id is digits only"))
	}
	if l.FillMS != nil {
		if *l.FillMS < 0 {
			errs = append(errs, model.Invalid("fill_ms", "must not be negative"))
		}
		l.FillBy = fillBy(in)
	}
	if l.ClientIP != "" {
		a, err := netip.ParseAddr(l.ClientIP)
		if err != nil {
			errs = append(errs, model.Invalid("client_ip", "is not an IP address"))
		} else {
			l.ClientIP = a.Unmap().String()
		}
	}
	if in.SubmittedAt != "" {
		t, err := time.Parse(time.RFC3339, in.SubmittedAt)
		switch {
		case err != nil:
			errs = append(errs, model.Invalid("submitted_at", "want an RFC 3339 time like 2026-12-02T15:04:05Z"))
		case t.After(now.Add(5 * time.Minute)):
			errs = append(errs, model.Invalid("submitted_at", "is in the future"))
		default:
			l.SubmittedAt = t.UTC()
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if k, err := capi.NormalizeEmail(l.Email); err == nil {
		l.EmailKey = k
	}
	if k, err := capi.NormalizePhoneWith(l.Phone, site.Settings.Country, parse); err == nil {
		l.PhoneKey = k
	}
	return l, nil
}

// fillBy says who measured a lead's fill time: kept with the lead, for the
// rules at intake, a replay and the lead's story.
func fillBy(in *LeadInput) string {
	if in.FromServer {
		return qualify.FillByBackend
	}
	return qualify.FillByTracker
}

func validEventID(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
