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

// coverageScan is coverageDecode for valid JSON whose names have no
// escapes, whose user_data is an object (or null) and match_keys a list of
// such strings (or null), each at most once: ok is false for anything
// else, left to coverageDecode.
func coverageScan(p []byte) (has uint, ok bool) {
	if !json.Valid(p) {
		return 0, false
	}
	var ud, mk uint
	seenUD, seenMK := false, false
	i := jsonSpace(p, 0)
	if p[i] != '{' {
		return 0, false
	}
	i = jsonSpace(p, i+1)
	for p[i] != '}' {
		name, j, ok := jsonName(p, i)
		if !ok {
			return 0, false
		}
		i = jsonSpace(p, jsonSpace(p, j)+1) // past the colon
		switch {
		case string(name) == "user_data" && !seenUD:
			seenUD = true
			if i, ok = coverageUserData(p, i, &ud); !ok {
				return 0, false
			}
		case string(name) == "match_keys" && !seenMK:
			seenMK = true
			if i, ok = coverageNames(p, i, &mk); !ok {
				return 0, false
			}
		case string(name) == "user_data" || string(name) == "match_keys":
			return 0, false
		default:
			i = jsonSkip(p, i)
		}
		if i = jsonSpace(p, i); p[i] == ',' {
			i = jsonSpace(p, i+1)
		}
	}
	return ud | mk, true
}

// coverageUserData reads the user_data object at p[i:] into has (a key
// holding nothing clears its bit, as a later duplicate replaces an earlier
// in a map) and returns where it ends.
func coverageUserData(p []byte, i int, has *uint) (int, bool) {
	if p[i] == 'n' {
		return i + 4, true
	}
	if p[i] != '{' {
		return 0, false
	}
	i = jsonSpace(p, i+1)
	for p[i] != '}' {
		name, j, ok := jsonName(p, i)
		if !ok {
			return 0, false
		}
		start := jsonSpace(p, jsonSpace(p, j)+1)
		end := jsonSkip(p, start)
		if bit := coverageBit(name); MatchKeyPresent(p[start:end]) {
			*has |= bit
		} else {
			*has &^= bit
		}
		if i = jsonSpace(p, end); p[i] == ',' {
			i = jsonSpace(p, i+1)
		}
	}
	return i + 1, true
}

// coverageNames reads the match_keys list at p[i:] into has and returns
// where it ends.
func coverageNames(p []byte, i int, has *uint) (int, bool) {
	if p[i] == 'n' {
		return i + 4, true
	}
	if p[i] != '[' {
		return 0, false
	}
	i = jsonSpace(p, i+1)
	for p[i] != ']' {
		name, j, ok := jsonName(p, i)
		if !ok {
			return 0, false
		}
		*has |= coverageBit(name)
		if i = jsonSpace(p, j); p[i] == ',' {
			i = jsonSpace(p, i+1)
		}
	}
	return i + 1, true
}

// jsonSpace is where the JSON whitespace at p[i:] ends.
func jsonSpace(p []byte, i int) int {
	for i < len(p) && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
		i++
	}
	return i
}

// jsonName is the string at p[i:] without its quotes and where it ends;
// ok is false when it is not a string or has an escape.
func jsonName(p []byte, i int) (name []byte, end int, ok bool) {
	if p[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(p); j++ {
		switch p[j] {
		case '\\':
			return nil, 0, false
		case '"':
			return p[i+1 : j], j + 1, true
		}
	}
	return nil, 0, false
}

// jsonSkip is where the value at p[i:] ends, in JSON already found valid.
func jsonSkip(p []byte, i int) int {
	depth := 0
	for ; i < len(p); i++ {
		switch p[i] {
		case '"':
			for i++; p[i] != '"'; i++ {
				if p[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return i
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
