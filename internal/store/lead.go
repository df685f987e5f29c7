package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

const leadColumns = `id, site_id, event_id, visitor_id, email, phone, name, first_name, last_name, message, fields,
	page_url, referrer, fbc, fbp, fbclid, gclid, external_id, lead_ads_id, consent, fill_ms, honeypot,
	client_ip, user_agent, email_key, phone_key, submitted_at, received_at,
	verdict, score, reasons, rules_version, decided_by, review_until, review_expired_at, source, source_detail, fill_by,
	open_until`

// LeadInsert stores a new lead with its decision. A lead whose site already
// has its event_id fails with model.ErrConflict. The site's counters of the
// day it was received are added to in the same call, so call it in a
// transaction.
func (q Q) LeadInsert(ctx context.Context, l *model.Lead) error {
	if err := q.leadInsert(ctx, l); err != nil {
		return err
	}
	rl, err := q.reportLeadOf(ctx, l)
	if err != nil {
		return err
	}
	return q.CountersAdd(ctx, l.SiteID, model.Day(l.ReceivedAt), string(l.ID), mergeCounts(append(leadCounts(l), ReportCounts(rl, 1)...))...)
}

// leadInsert is LeadInsert's row, without the counters.
func (q Q) leadInsert(ctx context.Context, l *model.Lead) error {
	args, err := q.leadArgs(l)
	if err != nil {
		return err
	}
	_, err = q.exec(ctx, `/* Store.LeadInsert */ INSERT INTO leads (`+leadColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)`, args...)
	if isUniqueViolation(err) {
		return fmt.Errorf("lead with event_id %s: %w", l.EventID, model.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: insert lead: %w", err)
	}
	return nil
}

// emailKeySame is what a lead's email_key column holds when the key is its
// e-mail as written (most e-mails are typed in lower case), so that the
// address is kept once (migration 0580). A key is a normalised address, so
// it always has an '@' and is never this.
const emailKeySame = "="

// emailKeyExpr reads a lead's e-mail key from its columns. Every look-up by
// the key says it so, the expression of the index leads_email_recent, and
// says email_key is not empty, the index's predicate.
const emailKeyExpr = `(CASE email_key WHEN '=' THEN email ELSE email_key END)`

// storedEmailKey is the email_key column's value for a lead's e-mail and key.
func storedEmailKey(email, key string) string {
	if key != "" && key == email {
		return emailKeySame
	}
	return key
}

// emailKeyIs is a look-up's condition on a lead's e-mail key (one
// argument, the key): through emailKeyExpr, and not empty, which the
// partial index leads_email_recent needs said.
const emailKeyIs = emailKeyExpr + ` = ? AND email_key <> ''`

// keyIs is a look-up's condition on a contact key's column (email_key or
// phone_key), one argument, the key: emailKeyIs, or the column equal and
// not empty, as the partial indexes of the keys need (migration 0551).
func keyIs(col string) string {
	if col == "email_key" {
		return emailKeyIs
	}
	return col + ` = ? AND ` + col + ` <> ''`
}

// leadArgs are a new lead's values for leadColumns, review_expired_at left
// out (NULL).
func (q Q) leadArgs(l *model.Lead) ([]any, error) {
	v, err := encodeLead(l)
	if err != nil {
		return nil, err
	}
	detail, err := json.Marshal(nonNilMap(l.SourceDetail))
	if err != nil {
		return nil, fmt.Errorf("store: lead source detail: %w", err)
	}
	// The free text the search reads stays text (plain, idpack.go).
	return []any{string(l.ID), string(l.SiteID), l.EventID, l.VisitorID, q.plain(l.Email), q.plain(l.Phone), q.plain(l.Name),
		q.plain(l.FirstName), q.plain(l.LastName), q.plain(l.Message), v.fields, l.PageURL, l.Referrer, l.FBC, l.FBP, l.FBClid, l.GClid, l.ExternalID, l.LeadAdsID,
		v.consent, v.fill, l.Honeypot, l.ClientIP, l.UserAgent, storedEmailKey(l.Email, l.EmailKey), l.PhoneKey,
		l.SubmittedAt.UnixMilli(), l.ReceivedAt.UnixMilli(),
		string(l.Verdict), l.Score, v.reasons, l.RulesVersion, l.DecidedBy, v.reviewUntil,
		leadSource(l.Source), string(detail), l.FillBy, v.openUntil}, nil
}

// leadValues are a lead's columns that are stored in another form than
// its fields: JSON, milliseconds, and NULL for what is unknown.
type leadValues struct {
	fields, reasons                       string
	consent, fill, reviewUntil, openUntil any
}

func encodeLead(l *model.Lead) (leadValues, error) {
	var v leadValues
	fields, err := json.Marshal(nonNilMap(l.Fields))
	if err != nil {
		return v, fmt.Errorf("store: lead fields: %w", err)
	}
	reasons, err := json.Marshal(nonNilReasons(l.Reasons))
	if err != nil {
		return v, fmt.Errorf("store: lead reasons: %w", err)
	}
	v.fields, v.reasons = string(fields), string(reasons)
	if l.Consent != nil {
		v.consent = boolInt(*l.Consent)
	}
	if l.FillMS != nil {
		v.fill = *l.FillMS
	}
	if l.ReviewUntil != nil {
		v.reviewUntil = l.ReviewUntil.UnixMilli()
	}
	if l.OpenUntil != nil {
		v.openUntil = l.OpenUntil.UnixMilli()
	}
	return v, nil
}

// LeadByID returns one lead.
func (q Q) LeadByID(ctx context.Context, id model.LeadID) (*model.Lead, error) {
	row := q.queryRow(ctx, `/* Store.LeadByID */ SELECT `+leadColumns+` FROM leads WHERE id = ?`, string(id))
	l, err := scanLead(row)
	if err != nil {
		return nil, notFound(err, "lead "+string(id))
	}
	return l, nil
}

// LeadByEventID returns the site's lead with the given event_id. Intake
// asks for every lead, and usually finds none: the query reads the id alone
// and the lead only when there is one, because the SQLite driver fetches
// the name and type of every column a query returns before its first row,
// which for the lead's 35 columns was most of the look-up's cost, on the
// one writer.
func (q Q) LeadByEventID(ctx context.Context, site model.SiteID, eventID string) (*model.Lead, error) {
	var id string
	err := q.queryRow(ctx, `/* Store.LeadByEventID */ SELECT id FROM leads WHERE site_id = ? AND event_id = ?`,
		string(site), eventID).Scan(&id)
	if err != nil {
		return nil, notFound(err, "lead with event_id "+eventID)
	}
	return q.LeadByID(ctx, model.LeadID(id))
}

// LeadLookup names a lead the way a CRM knows it: one of the fields is set.
// EmailKey and PhoneKey are normalised the way leads store them.
type LeadLookup struct {
	ID         model.LeadID
	EventID    string
	ExternalID string
	LeadAdsID  string
	EmailKey   string
	PhoneKey   string
	// Since, when set, limits the look-up to leads received from then on.
	Since time.Time
}

// column is the look-up's one key: the column and the value it is found by.
func (k LeadLookup) column() (col, val string, err error) {
	switch {
	case k.ID != "":
		return "id", string(k.ID), nil
	case k.EventID != "":
		return "event_id", k.EventID, nil
	case k.ExternalID != "":
		return "external_id", k.ExternalID, nil
	case k.LeadAdsID != "":
		return "lead_ads_id", k.LeadAdsID, nil
	case k.EmailKey != "":
		return "email_key", k.EmailKey, nil
	case k.PhoneKey != "":
		return "phone_key", k.PhoneKey, nil
	}
	return "", "", model.Invalid("lead", "name the lead by id, event_id, external_id, lead_id, email or phone")
}

// LeadFind returns the site's newest lead matching the look-up.
func (q Q) LeadFind(ctx context.Context, site model.SiteID, k LeadLookup) (*model.Lead, error) {
	col, val, err := k.column()
	if err != nil {
		return nil, err
	}
	row := q.queryRow(ctx, leadFindQuery(col), string(site), val, k.Since.UnixMilli())
	l, err := scanLead(row)
	if err != nil {
		return nil, notFound(err, "lead by "+col)
	}
	return l, nil
}

// LeadPrevious finds the site's first lead from the same person (same phone
// key, else same e-mail key) received since the given time, other than
// exclude, and says which matched ("phone" or "email"). Only its id and
// time are read: that is all the rules use.
func (q Q) LeadPrevious(ctx context.Context, site model.SiteID, emailKey, phoneKey string, since time.Time, exclude model.LeadID) (id model.LeadID, at time.Time, match string, err error) {
	return q.leadPrevious(ctx, site, emailKey, phoneKey, since, nil, exclude)
}

// LeadPreviousOf is LeadPrevious for a lead already stored, as a replay
// judges it: only the leads that came before it count (received earlier, or
// at the same millisecond with a smaller id), so a later lead of the same
// phone does not hide an earlier one of the same e-mail.
func (q Q) LeadPreviousOf(ctx context.Context, l *model.Lead, since time.Time) (id model.LeadID, at time.Time, match string, err error) {
	return q.leadPrevious(ctx, l.SiteID, l.EmailKey, l.PhoneKey, since, l, l.ID)
}

func (q Q) leadPrevious(ctx context.Context, site model.SiteID, emailKey, phoneKey string, since time.Time, before *model.Lead, exclude model.LeadID) (id model.LeadID, at time.Time, match string, err error) {
	for _, k := range []struct{ col, val, match string }{{"phone_key", phoneKey, "phone"}, {"email_key", emailKey, "email"}} {
		if k.val == "" {
			continue
		}
		var (
			found string
			ms    int64
		)
		args := []any{string(site), k.val, since.UnixMilli(), string(exclude)}
		if before != nil {
			b := before.ReceivedAt.UnixMilli()
			args = append(args, b, b, string(before.ID))
		}
		err := q.queryRow(ctx, leadPreviousQuery(k.col, before != nil), args...).Scan(&found, &ms)
		if err == nil {
			return model.LeadID(found), time.UnixMilli(ms).UTC(), k.match, nil
		}
		if err != sql.ErrNoRows {
			return "", time.Time{}, "", fmt.Errorf("store: previous lead: %w", err)
		}
	}
	return "", time.Time{}, "", fmt.Errorf("previous lead: %w", model.ErrNotFound)
}

// leadPreviousQuery is leadPrevious's look-up by col, the contact key's
// column, of the leads received before a given one when before is set.
// The key is never empty, and saying so lets the contact-key indexes,
// which hold only the leads with a key (migration 0551), serve it.
func leadPreviousQuery(col string, before bool) string {
	query := `/* Store.LeadPrevious */ SELECT id, received_at FROM leads
		WHERE site_id = ? AND ` + keyIs(col) + ` AND received_at >= ? AND id <> ?`
	if before {
		query += ` AND (received_at < ? OR received_at = ? AND id < ?)`
	}
	return query + ` ORDER BY received_at ASC, id ASC LIMIT 1`
}

// leadFindQuery is LeadFind's look-up by col. The value is never empty, and
// saying so lets the partial indexes of external_id and lead_ads_id (which
// hold only non-empty ones) serve it.
func leadFindQuery(col string) string {
	return `/* Store.LeadFind */ SELECT ` + leadColumns + ` FROM leads
		WHERE site_id = ? AND ` + keyIs(col) + ` AND received_at >= ? ORDER BY received_at DESC, id DESC LIMIT 1`
}

// LeadSetDecision records a new decision for a lead, and moves it in its
// site's verdict counters (so call it in a transaction).
func (q Q) LeadSetDecision(ctx context.Context, id model.LeadID, d model.Decision, reviewUntil *time.Time) error {
	reasons, err := json.Marshal(nonNilReasons(d.Reasons))
	if err != nil {
		return fmt.Errorf("store: lead reasons: %w", err)
	}
	var ru any
	if reviewUntil != nil {
		ru = reviewUntil.UnixMilli()
	}
	return q.leadVerdictSet(ctx, id, d.Verdict, `/* Store.LeadSetDecision */ UPDATE leads
		SET verdict = ?, score = ?, reasons = ?, rules_version = ?, decided_by = ?, review_until = ? WHERE id = ? AND verdict = ?`,
		string(d.Verdict), d.Score, string(reasons), d.RulesVersion, d.DecidedBy, ru)
}

func scanLead(r scanner) (*model.Lead, error) {
	var (
		l                       model.Lead
		id, site, fields, verd  string
		reasons, detail         string
		consent, fill, reviewTo sql.NullInt64
		expiredAt, openUntil    sql.NullInt64
		submitted, received     int64
	)
	err := r.Scan(&id, &site, &l.EventID, &l.VisitorID, &l.Email, &l.Phone, &l.Name, &l.FirstName, &l.LastName,
		&l.Message, &fields, &l.PageURL, &l.Referrer, &l.FBC, &l.FBP, &l.FBClid, &l.GClid, &l.ExternalID, &l.LeadAdsID,
		&consent, &fill, &l.Honeypot, &l.ClientIP, &l.UserAgent, &l.EmailKey, &l.PhoneKey, &submitted, &received,
		&verd, &l.Score, &reasons, &l.RulesVersion, &l.DecidedBy, &reviewTo, &expiredAt, &l.Source, &detail, &l.FillBy,
		&openUntil)
	if err != nil {
		return nil, err
	}
	l.ID, l.SiteID, l.Verdict = model.LeadID(id), model.SiteID(site), model.Verdict(verd)
	if l.EmailKey == emailKeySame {
		l.EmailKey = l.Email
	}
	if err := json.Unmarshal([]byte(fields), &l.Fields); err != nil {
		return nil, fmt.Errorf("lead %s fields: %w", id, err)
	}
	if err := json.Unmarshal([]byte(reasons), &l.Reasons); err != nil {
		return nil, fmt.Errorf("lead %s reasons: %w", id, err)
	}
	if err := json.Unmarshal([]byte(detail), &l.SourceDetail); err != nil {
		return nil, fmt.Errorf("lead %s source detail: %w", id, err)
	}
	if len(l.SourceDetail) == 0 {
		l.SourceDetail = nil
	}
	if consent.Valid {
		b := consent.Int64 != 0
		l.Consent = &b
	}
	if fill.Valid {
		v := fill.Int64
		l.FillMS = &v
	}
	if reviewTo.Valid {
		t := time.UnixMilli(reviewTo.Int64).UTC()
		l.ReviewUntil = &t
	}
	if expiredAt.Valid {
		t := time.UnixMilli(expiredAt.Int64).UTC()
		l.ReviewExpiredAt = &t
	}
	if openUntil.Valid {
		t := time.UnixMilli(openUntil.Int64).UTC()
		l.OpenUntil = &t
	}
	l.SubmittedAt = time.UnixMilli(submitted).UTC()
	l.ReceivedAt = time.UnixMilli(received).UTC()
	return &l, nil
}

// leadSource is the stored source: SourceWeb for a lead that names none.
func leadSource(s string) string {
	if s == "" {
		return model.SourceWeb
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilReasons(r []model.Reason) []model.Reason {
	if r == nil {
		return []model.Reason{}
	}
	return r
}

// LeadCount returns how many leads a site has.
func (q Q) LeadCount(ctx context.Context, site model.SiteID) (int, error) {
	var n int
	if err := q.queryRow(ctx, `/* Store.LeadCount */ SELECT COUNT(*) FROM leads WHERE site_id = ?`, string(site)).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count leads: %w", err)
	}
	return n, nil
}

// expireReviewsQuery finds review leads past their time; review_until <=
// implies it is set, so the partial leads_review_until serves it.
const expireReviewsQuery = `/* Store.LeadExpireReviews */ SELECT id FROM leads
	WHERE verdict = ? AND review_until <= ? AND review_expired_at IS NULL ORDER BY review_until LIMIT ?`

// LeadExpireReviews marks up to limit review leads whose review time has
// passed as expired, and returns their ids. Call it in a transaction: on
// PostgreSQL the rows are locked until it ends, so evidence arriving on
// another node waits for it, and a lead decided meanwhile is left alone.
func (q Q) LeadExpireReviews(ctx context.Context, now time.Time, limit int) ([]model.LeadID, error) {
	rows, err := q.query(ctx, expireReviewsQuery+q.forUpdateSkipLocked(), string(model.VerdictReview), now.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: expiring reviews: %w", err)
	}
	var ids []model.LeadID
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: expiring reviews: %w", err)
		}
		ids = append(ids, model.LeadID(id))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: expiring reviews: %w", err)
	}
	expired := ids[:0]
	for _, id := range ids {
		// The condition again: without a lock (SQLite needs none, having one
		// writer) it still never marks a lead that is no longer in review.
		res, err := q.exec(ctx, `/* Store.LeadExpireReviews */ UPDATE leads SET review_expired_at = ?
			WHERE id = ? AND verdict = ? AND review_expired_at IS NULL`,
			now.UnixMilli(), string(id), string(model.VerdictReview))
		if err != nil {
			return nil, fmt.Errorf("store: expire review %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			expired = append(expired, id)
		}
	}
	return expired, nil
}

// LeadFilter selects leads for the inbox; zero fields match all.
type LeadFilter struct {
	Site model.SiteID
	// Only, when not nil, keeps the leads of these sites alone (a user
	// limited to some sites); an empty list keeps none.
	Only    []model.SiteID
	Verdict model.Verdict
	// Search matches part of the name, e-mail, phone or message, ignoring
	// case, through the search index (see leadSearch); PhoneDigits, when
	// set, is searched too (the phone's digits as stored). A term shorter
	// than three characters matches nothing.
	Search      string
	PhoneDigits string
	// Keys, when it has any, answers a Search that is a whole e-mail
	// address or phone number (the inbox decides, see ContactKey) from the
	// leads' contact keys instead of their text: the leads of the person
	// who gave it, newest first, through the indexes intake keeps on
	// (site_id, email_key or phone_key, received_at). That costs the same
	// at any number of leads, where the text index reads every lead
	// having a trigram of the term ("053", "gma"). A lead that only
	// mentions the contact, in its message, is not among them; a part of
	// it still searches the text.
	Keys []ContactKey
	// Before pages back: only leads received before this time (and id).
	Before   time.Time
	BeforeID model.LeadID
	Limit    int
}

// LeadList returns leads newest first.
func (q Q) LeadList(ctx context.Context, f LeadFilter) ([]*model.Lead, error) {
	where, args := "1 = 1", []any{}
	if f.Site != "" {
		where += " AND site_id = ?"
		args = append(args, string(f.Site))
	}
	where, args = onlySites(where, args, f.Only)
	if f.Verdict != "" {
		where += " AND verdict = ?"
		args = append(args, string(f.Verdict))
	}
	if f.Search != "" && len(f.Keys) > 0 {
		cond, cargs := contactKeys(f.Keys, f.Site)
		where += " AND " + cond
		args = append(args, cargs...)
	} else if f.Search != "" {
		terms := searchTerms(f.Search, f.PhoneDigits)
		if len(terms) == 0 {
			return nil, nil
		}
		if q.dialect == Postgres {
			list, err := q.leadSearchDays(ctx, where, args, f, terms)
			if err != nil {
				return nil, fmt.Errorf("store: leads: %w", err)
			}
			return list, nil
		}
		list, done, err := q.leadSearchWalk(ctx, where, args, f, terms)
		if err != nil {
			return nil, fmt.Errorf("store: leads: %w", err)
		}
		if done {
			return list, nil
		}
		cond, cargs, err := q.leadSearch(ctx, terms)
		if err != nil {
			return nil, fmt.Errorf("store: leads: %w", err)
		}
		where += " AND " + cond
		args = append(args, cargs...)
	}
	where, args = newestFirst(where, args, "received_at", f.Before, string(f.BeforeID), f.Limit)
	rows, err := q.query(ctx, `/* Store.LeadList */ SELECT `+leadColumns+` FROM leads WHERE `+where, args...)
	return scanAll(rows, err, "leads", scanLead)
}

// ContactKey is a whole e-mail address or phone number searched by the
// contact key intake gave the leads of some sites (LeadFilter.Keys): a
// phone's key depends on the site's country.
type ContactKey struct {
	// Email says Key is an e-mail key (capi.NormalizeEmail), else a phone
	// key (capi.NormalizePhone with the sites' country).
	Email bool
	Key   string
	Sites []model.SiteID
}

// contactKeys is the condition keeping the leads with one of keys (for
// one site, when site is set): each key with the sites it is for, which
// leads the indexes on (site_id, email_key or phone_key, received_at).
// One site's leads come in the index's order, newest first, and the read
// stops at the page's end; several sites' or keys' are read whole and
// sorted, a person's few, however many other leads there are.
func contactKeys(keys []ContactKey, site model.SiteID) (string, []any) {
	var ors []string
	var args []any
	for _, k := range keys {
		var in []any
		for _, s := range k.Sites {
			if site == "" || s == site {
				in = append(in, string(s))
			}
		}
		if len(in) == 0 || k.Key == "" {
			continue
		}
		col := "phone_key"
		if k.Email {
			col = "email_key"
		}
		ors = append(ors, "(site_id IN (?"+strings.Repeat(", ?", len(in)-1)+") AND "+keyIs(col)+")")
		args = append(append(args, in...), k.Key)
	}
	if len(ors) == 0 {
		return "1 = 0", nil
	}
	return "(" + strings.Join(ors, " OR ") + ")", args
}

// DayCount is how many leads of one verdict a site received on one day
// (the dashboard's chart, from the verdict counters).
type DayCount struct {
	// Day is days since 1970-01-01.
	Day     int64
	Verdict model.Verdict
	N       int
}

// IntakeLookup is what intake reads before it stores a new lead (see
// LeadIntake).
type IntakeLookup struct {
	// EventID is the new lead's event_id: a lead of the site with it makes
	// the post a replay.
	EventID string
	// EmailKey and PhoneKey find the same person's first lead received
	// since Since, other than Exclude (LeadPrevious).
	EmailKey, PhoneKey string
	Since              time.Time
	Exclude            model.LeadID
	// VisitorIDs name the visitor to link, the first found wins; an empty
	// one is skipped. VisitEventID, when none is found, links the visitor
	// of the site's visit with that event_id.
	VisitorIDs   [2]string
	VisitEventID string
	// Landing, when set, is the lead being stored: the look-up also reads
	// its landing visit for the campaign report (IntakeFound.Landing), that
	// of the visitor it links or else of its own visitor_id, as LeadInsert
	// would.
	Landing *model.Lead
}

// IntakeFound is what LeadIntake found.
type IntakeFound struct {
	// Existing is the site's lead with the event_id, "" when none.
	Existing model.LeadID
	// Previous, PreviousAt and Match are LeadPrevious's answer; Previous
	// is "" when there is none.
	Previous   model.LeadID
	PreviousAt time.Time
	Match      string
	// Visitor is the visitor to link, or nil: only its ID, FBC, FBP,
	// LastIP, LastUserAgent and Consent are read.
	Visitor *model.Visitor
	// Landing is the landing visit, nil when there is none, when
	// LandingRead says the look-up read it (IntakeLookup.Landing).
	Landing     *model.Visit
	LandingRead bool
}

// leadIntakeQuery answers LeadIntake in one statement: on SQLite each
// statement has a fixed cost in the driver (binding, the names and types
// of its columns, the reset) that the four or five look-ups of a lead paid
// one by one, on the one writer. The phone's previous lead, when there is
// one, wins over the e-mail's, as in LeadPrevious.
const leadIntakeQuery = `/* Store.LeadIntake */ ` + leadIntakeSQL

// leadIntakeSQL is leadIntakeQuery without its comment, for
// pgLeadIntakeLandingQuery to read from.
const leadIntakeSQL = `SELECT x.lead, x.by_phone, (SELECT received_at FROM leads WHERE id = x.by_phone) AS by_phone_at,
		x.by_email, (SELECT received_at FROM leads WHERE id = x.by_email) AS by_email_at,
		v.id AS vid_found, v.fbc, v.fbp, v.last_ip, v.last_user_agent, v.consent
	FROM (SELECT
		(SELECT id FROM leads WHERE site_id = ? AND event_id = ?) AS lead,
		(SELECT id FROM leads
			WHERE ? <> '' AND site_id = ? AND phone_key = ? AND phone_key <> '' AND received_at >= ? AND id <> ?
			ORDER BY received_at ASC, id ASC LIMIT 1) AS by_phone,
		(SELECT id FROM leads
			WHERE ? <> '' AND site_id = ? AND ` + emailKeyIs + ` AND received_at >= ? AND id <> ?
			ORDER BY received_at ASC, id ASC LIMIT 1) AS by_email,
		COALESCE((SELECT id FROM visitors WHERE site_id = ? AND id = ?),
			(SELECT id FROM visitors WHERE site_id = ? AND id = ?),
			(SELECT visitor_id FROM visits WHERE site_id = ? AND event_id = ?)) AS vid) x
	LEFT JOIN visitors v ON v.site_id = ? AND v.id = x.vid`

// LeadIntake reads, in one statement, what intake needs before it stores
// a new lead: whether the site has a lead with its event_id already, the
// same person's earlier lead (LeadPrevious), and the visitor to link.
func (q Q) LeadIntake(ctx context.Context, site model.SiteID, k IntakeLookup) (IntakeFound, error) {
	s, since := string(site), k.Since.UnixMilli()
	var (
		f                           IntakeFound
		lead, byPhone, byEmail, vid sql.NullString
		byPhoneAt, byEmailAt        sql.NullInt64
		fbc, fbp, ip, ua            sql.NullString
		consent                     sql.NullInt64
		landAt                      sql.NullInt64
		land                        [8]sql.NullString
	)
	query := leadIntakeQuery
	args := []any{s, k.EventID,
		k.PhoneKey, s, k.PhoneKey, since, string(k.Exclude),
		k.EmailKey, s, k.EmailKey, since, string(k.Exclude),
		s, orNull(k.VisitorIDs[0]), s, orNull(k.VisitorIDs[1]), s, orNull(k.VisitEventID),
		s}
	dest := []any{&lead, &byPhone, &byPhoneAt, &byEmail, &byEmailAt, &vid, &fbc, &fbp, &ip, &ua, &consent}
	l := k.Landing
	if l != nil && hasLanding(l) {
		received := l.ReceivedAt.UnixMilli()
		query = pgLeadIntakeLandingQuery
		args = append(args, l.VisitorID, s, l.VisitorID, received-ReportLookback.Milliseconds(), received)
		if q.dialect == SQLite {
			query, args = sqliteLeadIntakeLandingQuery, append(args, s)
		}
		dest = append(dest, &landAt, &land[0], &land[1], &land[2], &land[3], &land[4], &land[5], &land[6], &land[7])
	}
	f.LandingRead = l != nil
	err := q.queryRow(ctx, query, args...).Scan(dest...)
	if err != nil {
		return IntakeFound{}, fmt.Errorf("store: lead intake look-up: %w", err)
	}
	f.Existing = model.LeadID(lead.String)
	// The previous lead's id and its time apart: SQL's || would read an
	// id packed on SQLite as its bytes (idpack.go).
	for _, p := range []struct {
		id    sql.NullString
		at    sql.NullInt64
		match string
	}{{byPhone, byPhoneAt, "phone"}, {byEmail, byEmailAt, "email"}} {
		if !p.id.Valid {
			continue
		}
		if !p.at.Valid {
			return IntakeFound{}, fmt.Errorf("store: lead intake look-up: previous lead %q without its time", p.id.String)
		}
		f.Previous, f.PreviousAt, f.Match = model.LeadID(p.id.String), time.UnixMilli(p.at.Int64).UTC(), p.match
		break
	}
	if vid.Valid {
		v := &model.Visitor{SiteID: site, ID: vid.String, FBC: fbc.String, FBP: fbp.String, LastIP: ip.String, LastUserAgent: ua.String}
		if consent.Valid {
			b := consent.Int64 != 0
			v.Consent = &b
		}
		f.Visitor = v
	}
	if landAt.Valid {
		visitor := l.VisitorID
		if f.Visitor != nil {
			visitor = f.Visitor.ID
		}
		v := &model.Visit{SiteID: site, VisitorID: visitor, At: time.UnixMilli(landAt.Int64).UTC()}
		v.FBClid, v.GClid, v.TTClid = land[0].String, land[1].String, land[2].String
		v.Source, v.Medium, v.Campaign, v.Term, v.Content = land[3].String, land[4].String, land[5].String, land[6].String, land[7].String
		f.Landing = v
	}
	return f, nil
}

// hasLanding tells whether a lead may have a landing visit: a lead from
// the web (reportLeadOf), whose visitor is known or may be found.
func hasLanding(l *model.Lead) bool {
	src := leadSource(l.Source)
	return src != model.SourceLeadAds && src != model.SourceWhatsApp
}

// pgLeadIntakeLandingQuery is leadIntakeQuery with the lead's landing
// visit (reportLanding) of the visitor it links, or else of its own
// visitor_id, in the same statement: on PostgreSQL each statement is a
// round trip.
const pgLeadIntakeLandingQuery = `/* Store.LeadIntake */ SELECT y.*, g.at, g.fbclid, g.gclid, g.ttclid, g.utm_source, g.utm_medium,
		g.utm_campaign, g.utm_term, g.utm_content
	FROM (` + leadIntakeSQL + `) y
	LEFT JOIN LATERAL (SELECT w.at, COALESCE(w.fbclid, '') AS fbclid, COALESCE(w.gclid, '') AS gclid,
		COALESCE(w.ttclid, '') AS ttclid, COALESCE(w.utm_source, '') AS utm_source, COALESCE(w.utm_medium, '') AS utm_medium,
		COALESCE(w.utm_campaign, '') AS utm_campaign, COALESCE(w.utm_term, '') AS utm_term, COALESCE(w.utm_content, '') AS utm_content
		FROM visits w WHERE COALESCE(y.vid_found, ?) <> '' AND w.site_id = ? AND w.visitor_id = COALESCE(y.vid_found, ?)
		AND w.at >= ? AND w.at <= ?
		AND (COALESCE(w.fbclid, '') <> '' OR COALESCE(w.gclid, '') <> '' OR COALESCE(w.ttclid, '') <> ''
			OR COALESCE(w.utm_campaign, '') <> '' OR COALESCE(w.utm_source, '') <> '')
		ORDER BY w.at DESC, w.event_id DESC LIMIT 1) g ON TRUE`

// sqliteLeadIntakeLandingQuery is pgLeadIntakeLandingQuery on SQLite,
// which has no LATERAL join: the landing visit's key (visits are WITHOUT
// ROWID, keyed by site_id and event_id) is read by a subquery of the join's
// condition. On SQLite the look-up runs on the one writer, where the
// landing read as a statement of its own cost about 8% of a lead's CPU.
const sqliteLeadIntakeLandingQuery = `/* Store.LeadIntake */ SELECT y.*, g.at, COALESCE(g.fbclid, ''), COALESCE(g.gclid, ''),
		COALESCE(g.ttclid, ''), COALESCE(g.utm_source, ''), COALESCE(g.utm_medium, ''), COALESCE(g.utm_campaign, ''),
		COALESCE(g.utm_term, ''), COALESCE(g.utm_content, '')
	FROM (` + leadIntakeSQL + `) y
	LEFT JOIN visits g ON g.event_id = (SELECT w.event_id FROM visits w
		WHERE COALESCE(y.vid_found, ?) <> '' AND w.site_id = ? AND w.visitor_id = COALESCE(y.vid_found, ?)
		AND w.at >= ? AND w.at <= ?
		AND (COALESCE(w.fbclid, '') <> '' OR COALESCE(w.gclid, '') <> '' OR COALESCE(w.ttclid, '') <> ''
			OR COALESCE(w.utm_campaign, '') <> '' OR COALESCE(w.utm_source, '') <> '')
		ORDER BY w.at DESC, w.event_id DESC LIMIT 1) AND g.site_id = ?`

// onlySites adds to a WHERE clause that site_id is one of only, when only is
// not nil.
func onlySites(where string, args []any, only []model.SiteID) (string, []any) {
	if only == nil {
		return where, args
	}
	if len(only) == 0 {
		return where + " AND 1 = 0", args
	}
	where += " AND site_id IN (?" + strings.Repeat(", ?", len(only)-1) + ")"
	for _, s := range only {
		args = append(args, string(s))
	}
	return where, args
}
