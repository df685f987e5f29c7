package model

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Counter names: what a site's per-day counters count. Each is kept in the
// same transaction as the rows it counts, and `cleanads counters rebuild`
// can recount it from them.
const (
	// CounterVisits counts stored visits (page views with consent).
	CounterVisits = "visits"
	// CounterFormVisits counts the visits to a page where t.js found a
	// lead form (collect's "lf" above 0).
	CounterFormVisits = "form_visits"
	// CounterLeads counts stored leads, split by their source (Dim).
	CounterLeads = "leads"
	// CounterLeadAds counts the leads received on the day that carry a
	// Lead Ads id (Meta's Instant Forms), until erasure or retention takes
	// the id: the readiness page's Instant Forms figure.
	CounterLeadAds = "lead_ads"
	// CounterLeadsUntracked counts the leads without the tracker's fill
	// time (FillBy not FillByTracker), split by source.
	CounterLeadsUntracked = "leads_untracked"
	// CounterStages counts the CRM stages reached on the day (the stage's
	// own time, LeadStage.At), split by stage name (Dim).
	CounterStages = "stages"
	// CounterStageCents adds up the values of the stages reached on the
	// day, in hundredths (Cents), split by stage and currency (Dim, see
	// StageCentsDim): a value in EUR is never added to one in TRY.
	CounterStageCents = "stage_cents"
	// CounterVerdicts counts the leads received on the day by their
	// verdict now (Dim): a lead whose verdict changes moves from one Dim
	// to the other on its day of receipt.
	CounterVerdicts = "verdicts"
	// CounterReasons counts the leads received on the day that carry a
	// reason code with points (Dim, the code), by the lead's reasons now.
	// The CounterReasons* below count the same leads by the owner's word
	// on them: judged by the owner, of those marked junk, of those marked
	// real customers; overturned (the rules held the lead, review or junk
	// at intake, and the owner or a CRM stage made it clean), and of those
	// the CRM. A new decision moves the lead between them in its
	// transaction, as a verdict moves CounterVerdicts.
	CounterReasons           = "reasons"
	CounterReasonsJudged     = "reasons_judged"
	CounterReasonsJunk       = "reasons_junk"
	CounterReasonsCustomers  = "reasons_customers"
	CounterReasonsOverturned = "reasons_overturned"
	CounterReasonsCRM        = "reasons_crm"
	// CounterAgreement counts the leads received on the day by the owner's
	// word against the rules' verdict at intake (Dim, one of the
	// Agreement* below), kept as CounterReasons are.
	CounterAgreement = "agreement"

	// The campaign report's counters: the leads received on a day by
	// where they came from (store.Attribution, in the dim after the
	// figure, store.ReportDim): 'report_verdicts' by verdict,
	// 'report_junk' the junk ones by main reason, 'report_stages' by each
	// stage they reached (on the lead's day, whenever reached), and of
	// their won stages with a value 'report_cents' the value in hundredths
	// and 'report_valued' how many, by currency.
	CounterReportVerdicts = "report_verdicts"
	CounterReportJunk     = "report_junk"
	CounterReportStages   = "report_stages"
	CounterReportCents    = "report_cents"
	CounterReportValued   = "report_valued"

	// The readiness page's counters of the Meta events that Meta accepted
	// (or that were built for a dry-run site) of the leads that have one:
	// counted when the event is recorded sent or built (store's
	// DeliveryRecord and DeliveryInsertAll), never moved after (a sent
	// event stays sent; erasure keeps the lead's row, times and events).
	// 'ready_waits' counts them on the lead's day of receipt by kind,
	// event name and how long after the lead the event's moment came, in
	// WaitBucket's tenths of a day (Dim, ReadyWaitDim): the stage's leads
	// and their median wait. 'ready_uploaded' counts the leads received on
	// the day that have at least one such event (a lead counts when its
	// first one is recorded). 'ready_uploads' counts the events by the day
	// they were accepted (or built), whichever day their lead came.
	CounterReadyWaits    = "ready_waits"
	CounterReadyUploaded = "ready_uploaded"
	CounterReadyUploads  = "ready_uploads"

	// The match-key coverage counters of the Meta events recorded sent or
	// built in dry run (those with a row in the outbox, a lead's or not:
	// the events the dashboard and the readiness page show the coverage
	// of), on their upload day (sent, or built), counted where the
	// readiness counters are and never moved after (see CoverageCounts):
	// 'coverage_events' the events, 'coverage_keys' those carrying each of
	// CoverageKeys (Dim, the key), 'coverage_matchable' those carrying
	// lead_id, an e-mail or a phone.
	CounterCoverageEvents    = "coverage_events"
	CounterCoverageKeys      = "coverage_keys"
	CounterCoverageMatchable = "coverage_matchable"
)

// CoverageKeys are the user_data keys whose coverage is counted: those
// whose presence lifts Meta's Event Match Quality the most, and the ids
// Conversion Leads matches on.
var CoverageKeys = []string{"em", "ph", "fbc", "fbp", "client_ip_address", "client_user_agent", "external_id", "lead_id"}

// MatchKeyPresent tells whether a user_data value holds something: a
// non-empty string or list.
func MatchKeyPresent(v json.RawMessage) bool {
	switch string(v) {
	case "", "null", `""`, "[]", `[""]`:
		return false
	}
	return true
}

// CoverageCounts are the coverage counts of one Meta event's payload: one
// event, one per key of CoverageKeys it carries and one if it is
// matchable. A payload in full carries its keys in user_data (present as
// MatchKeyPresent says); one shrunk by retention keeps only their names,
// in match_keys (capi's Meta.Shrink keeps the present ones). A payload
// that is not JSON counts for nothing, as it did when the pages sampled
// the payloads. The drain counts every event it records sent: a payload
// as json.Marshal writes it is read by a scan of its bytes (a tenth of
// json.Unmarshal's time), anything else by json.Unmarshal.
func CoverageCounts(payload json.RawMessage) []Count {
	has, ok := coverageScan(payload)
	if !ok {
		if has, ok = coverageDecode(payload); !ok {
			return nil
		}
	}
	cs := []Count{{Name: CounterCoverageEvents, N: 1}}
	for i, k := range CoverageKeys {
		if has&(1<<i) != 0 {
			cs = append(cs, Count{Name: CounterCoverageKeys, Dim: k, N: 1})
		}
	}
	if has&coverageMatchable != 0 {
		cs = append(cs, Count{Name: CounterCoverageMatchable, N: 1})
	}
	return cs
}

// coverageMatchable is the bits of lead_id, em and ph in CoverageKeys.
const coverageMatchable = 1<<7 | 1<<0 | 1<<1

// coverageBit is key's bit (its place in CoverageKeys), 0 for another key.
func coverageBit(key []byte) uint {
	for i, k := range CoverageKeys {
		if string(key) == k {
			return 1 << i
		}
	}
	return 0
}

// coverageDecode is the keys (a bit each, coverageBit) payload carries,
// by json.Unmarshal; ok is false when it does not decode.
func coverageDecode(payload []byte) (has uint, ok bool) {
	var ev struct {
		UserData  map[string]json.RawMessage `json:"user_data"`
		MatchKeys []string                   `json:"match_keys"`
	}
	if json.Unmarshal(payload, &ev) != nil {
		return 0, false
	}
	for k, v := range ev.UserData {
		if MatchKeyPresent(v) {
			has |= coverageBit([]byte(k))
		}
	}
	for _, k := range ev.MatchKeys {
		has |= coverageBit([]byte(k))
	}
	return has, true
}

// coverageScan is coverageDecode for JSON whose names have no escapes,
// whose user_data is an object (or null) and match_keys a list of such
// strings (or null), each at most once, nested less than 64 deep: ok is
// false for anything else, valid or not, left to coverageDecode. It checks
// the JSON as it reads it (what json.Valid would refuse, it refuses).
func coverageScan(p []byte) (has uint, ok bool) {
	s := &jsonScan{p: p}
	var ud, mk uint
	seenUD, seenMK := false, false
	if !s.open('{') {
		return 0, false
	}
	for more := !s.close('}'); more; more = s.next('}') {
		name, ok := s.name()
		if !ok || !s.colon() {
			return 0, false
		}
		switch {
		case string(name) == "user_data" && !seenUD:
			seenUD = true
			if !s.userData(&ud) {
				return 0, false
			}
		case string(name) == "match_keys" && !seenMK:
			seenMK = true
			if !s.names(&mk) {
				return 0, false
			}
		case string(name) == "user_data" || string(name) == "match_keys":
			return 0, false
		default:
			if !s.value(1) {
				return 0, false
			}
		}
	}
	if s.err {
		return 0, false
	}
	s.space()
	return ud | mk, s.i == len(s.p)
}

// userData reads a user_data object into has (a key holding nothing clears
// its bit, as a later duplicate replaces an earlier in a map).
func (s *jsonScan) userData(has *uint) bool {
	if s.literal("null") {
		return true
	}
	if !s.open('{') {
		return false
	}
	for more := !s.close('}'); more; more = s.next('}') {
		name, ok := s.name()
		if !ok || !s.colon() {
			return false
		}
		s.space()
		start := s.i
		if !s.value(2) {
			return false
		}
		if bit := coverageBit(name); MatchKeyPresent(s.p[start:s.i]) {
			*has |= bit
		} else {
			*has &^= bit
		}
	}
	return !s.err
}

// names reads a match_keys list into has.
func (s *jsonScan) names(has *uint) bool {
	if s.literal("null") {
		return true
	}
	if !s.open('[') {
		return false
	}
	for more := !s.close(']'); more; more = s.next(']') {
		name, ok := s.name()
		if !ok {
			return false
		}
		*has |= coverageBit(name)
	}
	return !s.err
}

// jsonScan reads JSON from p at i; err is set by a list that does not
// go on or end as JSON's do.
type jsonScan struct {
	p   []byte
	i   int
	err bool
}

// space skips JSON's whitespace.
func (s *jsonScan) space() {
	for s.i < len(s.p) && (s.p[s.i] == ' ' || s.p[s.i] == '\t' || s.p[s.i] == '\n' || s.p[s.i] == '\r') {
		s.i++
	}
}

// open takes c (a list's or object's start) after whitespace.
func (s *jsonScan) open(c byte) bool {
	s.space()
	if s.i < len(s.p) && s.p[s.i] == c {
		s.i++
		return true
	}
	return false
}

// close takes c (the end of what open began) if it comes next.
func (s *jsonScan) close(c byte) bool { return s.open(c) }

// next takes the comma before another member or element (true) or the
// end c (false); anything else sets err (and ends the list).
func (s *jsonScan) next(c byte) bool {
	if s.open(',') {
		return true
	}
	if !s.close(c) {
		s.err = true
	}
	return false
}

// colon takes the colon after a member's name.
func (s *jsonScan) colon() bool { return s.open(':') }

// literal takes w (true, false, null) after whitespace.
func (s *jsonScan) literal(w string) bool {
	s.space()
	if len(s.p)-s.i >= len(w) && string(s.p[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// name takes a string without escapes after whitespace.
func (s *jsonScan) name() ([]byte, bool) {
	s.space()
	if s.i >= len(s.p) || s.p[s.i] != '"' {
		return nil, false
	}
	for j := s.i + 1; j < len(s.p); j++ {
		switch c := s.p[j]; {
		case c == '"':
			name := s.p[s.i+1 : j]
			s.i = j + 1
			return name, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// value takes any JSON value after whitespace, lists and objects nested
// less than 64 deep.
func (s *jsonScan) value(depth int) bool {
	s.space()
	if s.i >= len(s.p) || depth >= 64 {
		return false
	}
	switch c := s.p[s.i]; {
	case c == '"':
		return s.str()
	case c == '{':
		s.i++
		for more := !s.close('}'); more; more = s.next('}') {
			if !s.str() || !s.colon() || !s.value(depth+1) {
				return false
			}
		}
		return !s.err
	case c == '[':
		s.i++
		for more := !s.close(']'); more; more = s.next(']') {
			if !s.value(depth + 1) {
				return false
			}
		}
		return !s.err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.number()
}

// str takes a string, escapes checked, after whitespace.
func (s *jsonScan) str() bool {
	s.space()
	if s.i >= len(s.p) || s.p[s.i] != '"' {
		return false
	}
	for j := s.i + 1; j < len(s.p); j++ {
		switch c := s.p[j]; {
		case c == '"':
			s.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(s.p) {
				return false
			}
			switch s.p[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.p) {
					return false
				}
				for _, h := range s.p[j+1 : j+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

// number takes a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScan) number() bool {
	p, i := s.p, s.i
	digits := func() bool {
		j := i
		for i < len(p) && '0' <= p[i] && p[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(p) && p[i] == '-' {
		i++
	}
	switch {
	case i < len(p) && p[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(p) && p[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(p) && (p[i] == 'e' || p[i] == 'E') {
		i++
		if i < len(p) && (p[i] == '+' || p[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	s.i = i
	return true
}

// WaitTenth is a readiness wait bucket's width, a tenth of a day, and
// WaitBuckets caps the buckets: a wait of WaitBuckets tenths of a day or
// more (a year) is counted in the last.
const (
	WaitTenth   = 24 * time.Hour / 10
	WaitBuckets = 3650
)

// WaitBucket is the bucket of a wait: whole tenths of a day, 0 for a
// negative one, WaitBuckets at most.
func WaitBucket(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(min(d/WaitTenth, WaitBuckets))
}

// ReadyWaitDim is CounterReadyWaits' Dim: the event's kind, name and wait
// bucket, joined by "|" (a kind has none).
func ReadyWaitDim(kind, name string, bucket int) string {
	return kind + "|" + name + "|" + strconv.Itoa(bucket)
}

// ParseReadyWaitDim splits ReadyWaitDim; ok is false for a Dim it did not
// make.
func ParseReadyWaitDim(dim string) (kind, name string, bucket int, ok bool) {
	i, j := strings.Index(dim, "|"), strings.LastIndex(dim, "|")
	if i < 0 || j <= i {
		return "", "", 0, false
	}
	b, err := strconv.Atoi(dim[j+1:])
	if err != nil {
		return "", "", 0, false
	}
	return dim[:i], dim[i+1 : j], b, true
}

// MedianBucketDays is the median of waits counted in WaitBucket buckets
// (bucket -> how many), in days, each wait taken at its bucket's start:
// MedianDays of the waits rounded down to a tenth of a day. 0 for none.
func MedianBucketDays(buckets map[int]int) float64 {
	n := 0
	keys := make([]int, 0, len(buckets))
	for b, c := range buckets {
		if c > 0 {
			keys = append(keys, b)
			n += c
		}
	}
	if n == 0 {
		return 0
	}
	slices.Sort(keys)
	// at returns the bucket of the i-th wait (from 0) in order.
	at := func(i int) int {
		for _, b := range keys {
			if i < buckets[b] {
				return b
			}
			i -= buckets[b]
		}
		return keys[len(keys)-1]
	}
	m := float64(at(n / 2))
	if n%2 == 0 {
		m = (float64(at(n/2-1)) + m) / 2
	}
	return m / 10
}

// The Dims of CounterAgreement.
const (
	// AgreementJudged: the owner judged the lead.
	AgreementJudged = "judged"
	// AgreementJunk: the owner marked it junk.
	AgreementJunk = "junk"
	// AgreementMissed: the owner marked junk a lead the rules passed clean.
	AgreementMissed = "missed"
	// AgreementRescued: the owner marked a real customer a lead the rules
	// held (review or junk).
	AgreementRescued = "rescued"
	// AgreementCRMRescued: a CRM stage made clean a lead the rules held.
	AgreementCRMRescued = "crm_rescued"
)

// StageCentsDim is the Dim of a CounterStageCents counter: the stage and the
// currency, as "won EUR".
func StageCentsDim(stage, currency string) string { return stage + " " + currency }

// SplitStageCentsDim is StageCentsDim undone.
func SplitStageCentsDim(dim string) (stage, currency string) {
	i := strings.LastIndexByte(dim, ' ')
	if i < 0 {
		return dim, ""
	}
	return dim[:i], dim[i+1:]
}

// Cents is a stage's value in hundredths, rounded half up, as the counters
// keep it (the store's recount rounds the same way).
func Cents(v float64) int64 { return int64(math.Floor(v*100 + 0.5)) }

// Count is one increment of a counter: N more of Name (split by Dim, ""
// when it is not split).
type Count struct {
	Name, Dim string
	N         int64
}

// Counter is one counter's total on one day.
type Counter struct {
	// Day is the UTC day, as days since the Unix epoch (see Day).
	Day  int64
	Name string
	Dim  string
	N    int64
}

// Day is t's UTC day as days since the Unix epoch, the counters' day.
func Day(t time.Time) int64 {
	ms := t.UnixMilli()
	d := ms / 86400000
	if ms < 0 && ms%86400000 != 0 {
		d--
	}
	return d
}

// DayStart is when a counters' day begins, in UTC.
func DayStart(day int64) time.Time { return time.UnixMilli(day * 86400000).UTC() }

// Counters are a site's counters over some days, for sums.
type Counters []Counter

// Sum adds up the counter name over the days from first to last
// (inclusive), every Dim, or only dim when dim is not "*".
func (cs Counters) Sum(name, dim string, first, last int64) int64 {
	var n int64
	for _, c := range cs {
		if c.Name == name && (dim == "*" || c.Dim == dim) && c.Day >= first && c.Day <= last {
			n += c.N
		}
	}
	return n
}
