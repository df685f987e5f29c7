package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// counterKey is one counter of one site and day, for the recount.
type counterKey struct {
	site      model.SiteID
	day       int64
	name, dim string
}

// recount counts a site's visits and leads as the counters should.
type recount map[counterKey]int64

func (r recount) visit(v *model.Visit) {
	r[counterKey{v.SiteID, model.Day(v.At), model.CounterVisits, ""}]++
	if v.LeadForms != nil && *v.LeadForms > 0 {
		r[counterKey{v.SiteID, model.Day(v.At), model.CounterFormVisits, ""}]++
	}
}

func (r recount) lead(l *model.Lead) {
	src := l.Source
	if src == "" {
		src = model.SourceWeb
	}
	r[counterKey{l.SiteID, model.Day(l.ReceivedAt), model.CounterLeads, src}]++
	r[counterKey{l.SiteID, model.Day(l.ReceivedAt), model.CounterVerdicts, string(l.Verdict)}]++
	if l.FillBy != model.FillByTracker {
		r[counterKey{l.SiteID, model.Day(l.ReceivedAt), model.CounterLeadsUntracked, src}]++
	}
	if l.LeadAdsID != "" {
		r[counterKey{l.SiteID, model.Day(l.ReceivedAt), model.CounterLeadAds, ""}]++
	}
}

func (r recount) stage(site model.SiteID, st *model.LeadStage) {
	r[counterKey{site, model.Day(st.At), model.CounterStages, st.Stage}]++
	if st.Value != nil && st.Currency != "" {
		r[counterKey{site, model.Day(st.At), model.CounterStageCents, model.StageCentsDim(st.Stage, st.Currency)}] += model.Cents(*st.Value)
	}
}

// randomStages records random stages of the leads kept, some in
// transactions that fail after them and some twice (counted once), and
// counts them in want. The values are ones whose rounding differs between
// half up and half to even (0.125), or sits next to a half (19.995).
func randomStages(t *testing.T, db *store.DB, rng *rand.Rand, leads []*model.Lead, want recount) {
	t.Helper()
	ctx := context.Background()
	errFail := errors.New("the call fails after its stage")
	values := []float64{6000, 0.125, 19.995, 1234.565, 0}
	for i, l := range leads {
		for _, stage := range []string{"qualified", "meeting", model.StageWon} {
			if rng.IntN(2) == 0 {
				continue
			}
			st := &model.LeadStage{LeadID: l.ID, SiteID: l.SiteID, Stage: stage, At: l.ReceivedAt.Add(time.Duration(rng.IntN(48)) * time.Hour),
				EventName: "E", EventID: fmt.Sprintf("st-%d-%s", i, stage), CreatedAt: l.ReceivedAt}
			if rng.IntN(3) > 0 {
				v := values[rng.IntN(len(values))]
				st.Value, st.Currency = &v, []string{"EUR", "TRY", ""}[rng.IntN(3)]
			}
			fail := rng.IntN(5) == 0
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if _, err := tx.LeadStageInsert(ctx, st); err != nil {
					return err
				}
				if fail {
					return errFail
				}
				return nil
			})
			if fail != errors.Is(err, errFail) || (!fail && err != nil) {
				t.Fatalf("stage %s of %s (fail %v): %v", stage, l.ID, fail, err)
			}
			if fail {
				continue
			}
			want.stage(l.SiteID, st)
			if rng.IntN(4) == 0 {
				if ok, err := db.LeadStageInsert(ctx, st); err != nil || ok {
					t.Fatalf("the same stage again: %v %v", ok, err)
				}
			}
		}
	}
}

// checkCounters compares the stored counters of sites over the days with
// the recount.
func checkCounters(t *testing.T, db *store.DB, want recount, first, last int64, sites ...model.SiteID) {
	t.Helper()
	got := recount{}
	for _, site := range sites {
		cs, err := db.Counters(context.Background(), site, first, last)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if !store.IsReportCounter(c.Name) {
				got[counterKey{site, c.Day, c.Name, c.Dim}] += c.N
			}
		}
	}
	checkReportCounters(t, db, first, last, sites...)
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%+v: counter %d, recount %d", k, got[k], n)
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok && n != 0 {
			t.Errorf("%+v: counter %d, recount none", k, n)
		}
	}
}

// checkReportCounters compares the campaign report's counters with a
// recount of the leads as they are now (store.ReportLeads: their stages
// and landing visits read in bulk), each counted by store.ReportCounts.
func checkReportCounters(t *testing.T, db *store.DB, first, last int64, sites ...model.SiteID) {
	t.Helper()
	ctx := context.Background()
	for _, site := range sites {
		want, got := recount{}, recount{}
		leads, err := db.ReportLeads(ctx, site, model.DayStart(first), model.DayStart(last+1))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range leads {
			for _, c := range store.ReportCounts(l, 1) {
				want[counterKey{site, model.Day(l.ReceivedAt), c.Name, c.Dim}] += c.N
			}
		}
		cs, err := db.ReportCounters(ctx, site, first, last)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if store.IsReportCounter(c.Name) {
				got[counterKey{site, c.Day, c.Name, c.Dim}] += c.N
			}
			// Campaigns and ads, not people (ids may have digits).
			if strings.ContainsAny(c.Dim, "@") || strings.Contains(c.Dim, "Person") || strings.Contains(c.Dim, "ld_") {
				t.Errorf("a report counter names something of a person: %+v", c)
			}
		}
		if len(leads) > 0 && len(got) == 0 {
			t.Errorf("%s: no report counters for %d leads", site, len(leads))
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("%+v: report counter %d, recount %d", k, got[k], n)
			}
		}
		for k, n := range got {
			if _, ok := want[k]; !ok && n != 0 {
				t.Errorf("%+v: report counter %d, recount none", k, n)
			}
		}
	}
}

// counterVisitors stores the visitors v_0 to v_49 of a site (PostgreSQL
// keeps a visit's foreign key to its visitor).
func counterVisitors(t *testing.T, db *store.DB, site model.SiteID, at time.Time) {
	t.Helper()
	for i := range 50 {
		if err := db.VisitorUpsert(context.Background(), &model.Visitor{ID: fmt.Sprintf("v_%d", i), SiteID: site, FirstSeen: at, LastSeen: at}); err != nil {
			t.Fatal(err)
		}
	}
}

// randomVisit and randomLead make the rows of a random intake over days.
func randomVisit(rng *rand.Rand, i int, site model.SiteID, days time.Time) *model.Visit {
	v := &model.Visit{SiteID: site, VisitorID: fmt.Sprintf("v_%d", rng.IntN(50)),
		At: days.Add(time.Duration(rng.Int64N(int64(5 * 24 * time.Hour)))), EventID: fmt.Sprintf("ev-v%d", i)}
	switch rng.IntN(3) {
	case 0: // t.v1.js: no count
	case 1:
		n := 0
		v.LeadForms = &n
	default:
		n := 1 + rng.IntN(3)
		v.LeadForms = &n
	}
	return v
}

func randomLead(rng *rand.Rand, i int, site model.SiteID, days time.Time) *model.Lead {
	at := days.Add(time.Duration(rng.Int64N(int64(5 * 24 * time.Hour))))
	l := &model.Lead{ID: model.LeadID(fmt.Sprintf("ld_%d", i)), SiteID: site, EventID: fmt.Sprintf("ev-l%d", i),
		SubmittedAt: at, ReceivedAt: at, Source: []string{"", model.SourceWeb, model.SourceLeadAds, model.SourceWhatsApp}[rng.IntN(4)],
		FillBy: []string{"", model.FillByTracker, model.FillByTracker, model.FillByBackend}[rng.IntN(4)],
		Email:  fmt.Sprintf("person%d@mail.example", i), Name: fmt.Sprintf("Person %d", i), Phone: fmt.Sprintf("0532 000 %04d", i),
		Decision: model.Decision{Verdict: randomVerdict(rng), RulesVersion: "test", DecidedBy: model.DecidedByRules, Reasons: randomReasons(rng)}}
	if l.FillBy != "" {
		ms := int64(5000)
		l.FillMS = &ms
	}
	// Where it came from, for the campaign report: a campaign on the
	// form's page or from Meta (names without digits: no counter may look
	// like a person's), a click id, a visitor.
	campaign := []string{"", "spring", "autumn"}[rng.IntN(3)]
	switch l.Source {
	case model.SourceLeadAds:
		// Most Instant Forms leads carry their Lead Ads id (the readiness
		// page counts them), drawn from nothing random.
		if i%3 != 0 {
			l.LeadAdsID = fmt.Sprintf("9%014d", i)
		}
		if campaign != "" {
			l.SourceDetail = map[string]string{model.DetailCampaignName: campaign, model.DetailAdSetName: "women", model.DetailAdName: "video"}
		}
	case model.SourceWhatsApp:
	default:
		l.PageURL = "https://a.example/form"
		if campaign != "" {
			l.PageURL += "?utm_campaign=" + campaign + "&utm_content=video"
		}
		if rng.IntN(3) == 0 {
			l.GClid = "gc"
		}
		l.VisitorID = fmt.Sprintf("v_%d", rng.IntN(50))
	}
	return l
}

// randomReasons are up to three reasons, some of 0 points (left out of the
// counters), a code sometimes twice.
func randomReasons(rng *rand.Rand) []model.Reason {
	var rs []model.Reason
	for range rng.IntN(4) {
		rs = append(rs, model.Reason{Code: []string{"PRICE_ONLY", "FAST_FILL", "DISPOSABLE_EMAIL"}[rng.IntN(3)], Points: rng.IntN(3) * 20,
			Evidence: map[string]any{"email": "person@mail.example"}})
	}
	return rs
}

// withAgreement is want with the reason and agreement counters of the
// leads as they are now (their verdict, who decided, reasons), the rules'
// verdict being the one they were stored with: counted here from the
// leads, apart from the store's own code.
func withAgreement(want recount, leads []*model.Lead, rules map[model.LeadID]model.Verdict) recount {
	out := recount{}
	for k, n := range want {
		out[k] = n
	}
	for _, l := range leads {
		owner, crm := l.DecidedBy == model.DecidedByOwner, l.DecidedBy == model.DecidedByCRM
		junk, clean := l.Verdict == model.VerdictJunk, l.Verdict == model.VerdictClean
		held := rules[l.ID] == model.VerdictReview || rules[l.ID] == model.VerdictJunk
		day := model.Day(l.ReceivedAt)
		add := func(ok bool, name, dim string) {
			if ok {
				out[counterKey{l.SiteID, day, name, dim}]++
			}
		}
		for _, r := range l.Reasons {
			if r.Points <= 0 {
				continue
			}
			add(true, model.CounterReasons, r.Code)
			add(owner, model.CounterReasonsJudged, r.Code)
			add(owner && junk, model.CounterReasonsJunk, r.Code)
			add(owner && clean, model.CounterReasonsCustomers, r.Code)
			add((owner || crm) && clean && held, model.CounterReasonsOverturned, r.Code)
			add(crm && clean && held, model.CounterReasonsCRM, r.Code)
		}
		add(owner, model.CounterAgreement, model.AgreementJudged)
		add(owner && junk, model.CounterAgreement, model.AgreementJunk)
		add(owner && junk && rules[l.ID] == model.VerdictClean, model.CounterAgreement, model.AgreementMissed)
		add(owner && clean && held, model.CounterAgreement, model.AgreementRescued)
		add(crm && clean && held, model.CounterAgreement, model.AgreementCRMRescued)
	}
	return out
}

func randomVerdict(rng *rand.Rand) model.Verdict {
	return []model.Verdict{model.VerdictClean, model.VerdictReview, model.VerdictJunk}[rng.IntN(3)]
}

// randomVerdictChanges gives some of the leads kept a new verdict, by the
// owner's word (LeadSetDecision) or a later attempt (LeadAttemptSet), some
// in transactions that fail after it, and moves them in want.
func randomVerdictChanges(t *testing.T, db *store.DB, rng *rand.Rand, leads []*model.Lead, want recount) {
	t.Helper()
	ctx := context.Background()
	errFail := errors.New("the call fails after the change")
	for i, l := range leads {
		if rng.IntN(2) == 0 {
			continue
		}
		v, fail := randomVerdict(rng), rng.IntN(5) == 0
		by := []string{model.DecidedByOwner, model.DecidedByOwner, model.DecidedByCRM, model.DecidedByRules}[rng.IntN(4)]
		reasons := l.Reasons
		if rng.IntN(3) == 0 {
			reasons = randomReasons(rng)
		}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			if i%2 == 0 {
				err = tx.LeadSetDecision(ctx, l.ID, model.Decision{Verdict: v, DecidedBy: by, Reasons: reasons}, nil)
			} else {
				next := *l
				next.Verdict, next.Message, next.DecidedBy, next.Reasons = v, "a later attempt", by, reasons
				err = tx.LeadAttemptSet(ctx, &next)
			}
			if err == nil && fail {
				return errFail
			}
			return err
		})
		if fail != errors.Is(err, errFail) || !fail && err != nil {
			t.Fatalf("verdict of %s (fail %v): %v", l.ID, fail, err)
		}
		if fail {
			continue
		}
		want[counterKey{l.SiteID, model.Day(l.ReceivedAt), model.CounterVerdicts, string(l.Verdict)}]--
		want[counterKey{l.SiteID, model.Day(l.ReceivedAt), model.CounterVerdicts, string(v)}]++
		l.Verdict, l.DecidedBy, l.Reasons = v, by, reasons
	}
}

// TestCountersEqualRecount: after a random intake over several days and
// two sites, from many goroutines at once with some transactions failing
// after their rows (rolled back, and on SQLite their batch's other calls
// run again), then new verdicts and erasures, the counters equal a recount
// of the rows kept; a rebuild leaves them so, and puts back counters that went wrong.
func TestCountersEqualRecount(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		sites := []model.SiteID{"dent", "hair"}
		days := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
		for _, s := range sites {
			trackerSite(t, db, s)
			counterVisitors(t, db, s, days)
		}
		first, last := model.Day(days), model.Day(days)+5
		var (
			mu    sync.Mutex
			want  = recount{}
			kept  []*model.Lead
			rules = map[model.LeadID]model.Verdict{}
			wg    sync.WaitGroup
		)
		errFail := errors.New("the call fails after its rows")
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(g), 7))
				for i := range 60 {
					n := g*1000 + i
					site := sites[rng.IntN(len(sites))]
					fail := rng.IntN(6) == 0
					var (
						v *model.Visit
						l *model.Lead
					)
					if rng.IntN(3) == 0 {
						l = randomLead(rng, n, site, days)
					} else {
						v = randomVisit(rng, n, site, days)
					}
					err := db.InTx(ctx, func(tx *store.Tx) error {
						if v != nil {
							if err := tx.VisitInsert(ctx, v); err != nil {
								return err
							}
						} else {
							if err := tx.LeadInsert(ctx, l); err != nil {
								return err
							}
							// The rules' verdict, as intake records it.
							if err := tx.HistoryInsert(ctx, &model.HistoryEntry{ID: "h_" + string(l.ID), LeadID: l.ID, At: l.ReceivedAt,
								Kind: model.HistoryVerdict, Data: map[string]any{"verdict": l.Verdict}}); err != nil {
								return err
							}
						}
						if fail {
							return errFail
						}
						return nil
					})
					switch {
					case fail && !errors.Is(err, errFail):
						t.Errorf("failing call: %v", err)
					case !fail && err != nil:
						t.Errorf("call: %v", err)
					case !fail:
						mu.Lock()
						if v != nil {
							want.visit(v)
						} else {
							want.lead(l)
							kept = append(kept, l)
							rules[l.ID] = l.Verdict
						}
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		// Stages, on the days they happened (up to two days after their
		// lead's).
		slices.SortFunc(kept, func(a, b *model.Lead) int { return strings.Compare(string(a.ID), string(b.ID)) })
		randomStages(t, db, rand.New(rand.NewPCG(9, 9)), kept, want)
		last += 2
		checkCounters(t, db, withAgreement(want, kept, rules), first, last, sites...)
		// New verdicts move the leads between the verdicts' counts.
		randomVerdictChanges(t, db, rand.New(rand.NewPCG(3, 3)), kept, want)
		checkCounters(t, db, withAgreement(want, kept, rules), first, last, sites...)
		// Erasure keeps the counts (an erased lead keeps its verdict) but
		// the Instant Forms one (it takes the Lead Ads id), once however
		// often it runs, and no counter names a person: every dim is a
		// source, a verdict, a stage or a currency.
		for _, l := range kept[:len(kept)/3] {
			for range 2 {
				if _, err := db.LeadRedact(ctx, l.ID, l.Reasons, nil, days.Add(10*24*time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			if l.LeadAdsID != "" {
				want[counterKey{l.SiteID, model.Day(l.ReceivedAt), model.CounterLeadAds, ""}]--
			}
		}
		checkCounters(t, db, withAgreement(want, kept, rules), first, last, sites...)
		checkReadinessLeads(t, db, want, first, last, sites...)
		for _, site := range sites {
			cs, err := db.Counters(ctx, site, first, last)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				if strings.ContainsAny(c.Dim, "@0123456789") || strings.Contains(c.Dim, "Person") || strings.Contains(c.Dim, "ld_") {
					t.Errorf("a counter names something of a person: %+v", c)
				}
			}
		}

		checkAgreement(t, db, withAgreement(recount{}, kept, rules), days, sites...)

		// A rebuild changes nothing that was right...
		for _, s := range sites {
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CountersRebuild(ctx, s, first, last) }); err != nil {
				t.Fatal(err)
			}
		}
		checkCounters(t, db, withAgreement(want, kept, rules), first, last, sites...)
		// ...and puts right what went wrong, leaving other counters and
		// other days alone.
		if err := db.CountersAdd(ctx, "dent", first+1, "x", model.Count{Name: model.CounterVisits, N: 1000},
			model.Count{Name: model.CounterLeads, Dim: "web", N: -3}, model.Count{Name: "stage", Dim: "won", N: 2},
			model.Count{Name: model.CounterStages, Dim: model.StageWon, N: 7}, model.Count{Name: model.CounterStageCents, Dim: "won EUR", N: -100},
			model.Count{Name: model.CounterReasons, Dim: "PRICE_ONLY", N: 9}, model.Count{Name: model.CounterAgreement, Dim: model.AgreementJudged, N: -2},
			model.Count{Name: model.CounterLeadAds, N: 4}); err != nil {
			t.Fatal(err)
		}
		if err := db.CountersAdd(ctx, "dent", last+3, "x", model.Count{Name: model.CounterVisits, N: 5}); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CountersRebuild(ctx, "dent", first, last) }); err != nil {
			t.Fatal(err)
		}
		want[counterKey{"dent", first + 1, "stage", "won"}] = 2
		want[counterKey{"dent", last + 3, model.CounterVisits, ""}] = 5
		checkCounters(t, db, withAgreement(want, kept, rules), first, last+3, sites...)
		checkReadinessLeads(t, db, want, first, last, sites...)
	})
}

// checkReadinessLeads compares the readiness page's lead figures (leads,
// not junk, from Instant Forms), read from the counters, with the recount
// over the days from first to last.
func checkReadinessLeads(t *testing.T, db *store.DB, want recount, first, last int64, sites ...model.SiteID) {
	t.Helper()
	for _, site := range sites {
		var leads, notJunk, leadAds int64
		for k, n := range want {
			if k.site != site || k.day < first || k.day > last {
				continue
			}
			switch {
			case k.name == model.CounterVerdicts:
				leads += n
				if k.dim != string(model.VerdictJunk) {
					notJunk += n
				}
			case k.name == model.CounterLeadAds:
				leadAds += n
			}
		}
		f, err := db.ReadinessFigures(context.Background(), site, model.DayStart(first), model.DayStart(last+1))
		if err != nil {
			t.Fatal(err)
		}
		if int64(f.Leads) != leads || int64(f.NotJunk) != notJunk || int64(f.LeadAds) != leadAds || leadAds == 0 {
			t.Errorf("%s: readiness leads %d, not junk %d, Instant Forms %d; recount %d, %d, %d", site, f.Leads, f.NotJunk, f.LeadAds,
				leads, notJunk, leadAds)
		}
	}
}

// checkAgreement compares ReasonAgreement and AgreementTotals, read from
// the counters, with the recount.
func checkAgreement(t *testing.T, db *store.DB, want recount, since time.Time, sites ...model.SiteID) {
	t.Helper()
	for _, site := range sites {
		get := func(name, dim string) int {
			n := 0
			for k, v := range want {
				if k.site == site && k.name == name && k.dim == dim {
					n += int(v)
				}
			}
			return n
		}
		tot, err := db.AgreementTotals(context.Background(), site, since)
		if err != nil {
			t.Fatal(err)
		}
		wt := store.AgreementTotals{Judged: get(model.CounterAgreement, model.AgreementJudged), Junk: get(model.CounterAgreement, model.AgreementJunk),
			Missed: get(model.CounterAgreement, model.AgreementMissed), Rescued: get(model.CounterAgreement, model.AgreementRescued),
			CRMRescued: get(model.CounterAgreement, model.AgreementCRMRescued)}
		if tot != wt {
			t.Errorf("%s: totals %+v, recount %+v", site, tot, wt)
		}
		codes, err := db.ReasonAgreement(context.Background(), site, since)
		if err != nil {
			t.Fatal(err)
		}
		if len(codes) == 0 {
			t.Errorf("%s: no reason codes", site)
		}
		for i, c := range codes {
			w := store.CodeAgreement{Code: c.Code, Leads: get(model.CounterReasons, c.Code), Judged: get(model.CounterReasonsJudged, c.Code),
				Junk: get(model.CounterReasonsJunk, c.Code), Customers: get(model.CounterReasonsCustomers, c.Code),
				Overturned: get(model.CounterReasonsOverturned, c.Code), CRM: get(model.CounterReasonsCRM, c.Code)}
			if c != w {
				t.Errorf("%s: %+v, recount %+v", site, c, w)
			}
			if i > 0 && codes[i-1].Overturned < c.Overturned {
				t.Errorf("%s: not most overturned first: %+v", site, codes)
			}
		}
	}
}

// TestCountersSumOverShards: increments with different keys (spread over
// shards on PostgreSQL) read back as one total per day, name and dim, and
// model.Counters sums them over days.
func TestCountersSumOverShards(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		trackerSite(t, db, "dent")
		for i := range 40 {
			if err := db.CountersAdd(ctx, "dent", 20000+int64(i%2), fmt.Sprint("key", i),
				model.Count{Name: model.CounterLeads, Dim: model.SourceWeb, N: 1}, model.Count{Name: model.CounterVisits, N: 2}); err != nil {
				t.Fatal(err)
			}
		}
		cs, err := db.Counters(ctx, "dent", 20000, 20001)
		if err != nil {
			t.Fatal(err)
		}
		want := model.Counters{{Day: 20000, Name: "leads", Dim: "web", N: 20}, {Day: 20000, Name: "visits", N: 40},
			{Day: 20001, Name: "leads", Dim: "web", N: 20}, {Day: 20001, Name: "visits", N: 40}}
		if fmt.Sprint(cs) != fmt.Sprint(want) {
			t.Errorf("counters %v, want %v", cs, want)
		}
		if n := cs.Sum(model.CounterVisits, "*", 20001, 20001); n != 40 {
			t.Errorf("visits of day 20001: %d", n)
		}
		if n := cs.Sum(model.CounterLeads, model.SourceWeb, 0, 30000); n != 40 {
			t.Errorf("web leads: %d", n)
		}
	})
}

// TestCountersFold: a fold leaves every figure as it was; on PostgreSQL it
// leaves one row a counter and day before the day it is given (shard 0)
// and the days from it sharded, and counts written to a folded day later
// are folded by the next run.
func TestCountersFold(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		trackerSite(t, db, "dent")
		trackerSite(t, db, "hair")
		add := func(from int) {
			t.Helper()
			for i := from; i < from+60; i++ {
				site := model.SiteID([]string{"dent", "hair"}[i%2])
				if err := db.CountersAdd(ctx, site, 20000+int64(i%4), fmt.Sprint("key", i),
					model.Count{Name: model.CounterLeads, Dim: model.SourceWeb, N: 1}, model.Count{Name: model.CounterVisits, N: 2},
					model.Count{Name: model.CounterVerdicts, Dim: string(model.VerdictReview), N: int64(1 - i%3)}); err != nil {
					t.Fatal(err)
				}
			}
		}
		count := func(where string) int {
			t.Helper()
			n, err := db.TestQueryString(ctx, `SELECT CAST(COUNT(*) AS TEXT) FROM site_counters WHERE `+where)
			if err != nil {
				t.Fatal(err)
			}
			k, _ := strconv.Atoi(n)
			return k
		}
		read := func() string {
			t.Helper()
			var all []string
			for _, site := range []model.SiteID{"dent", "hair"} {
				cs, err := db.Counters(ctx, site, 20000, 20003)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, fmt.Sprint(cs))
			}
			return strings.Join(all, "\n")
		}
		add(0)
		before := read()
		folded, err := db.CountersFold(ctx, 20002)
		if err != nil {
			t.Fatal(err)
		}
		if after := read(); after != before {
			t.Errorf("the fold changed the counters:\n%s\nwas\n%s", after, before)
		}
		// Before the day, each site has one day (dent 20000, hair 20001)
		// of three counters: one row each.
		if db.Dialect() == store.SQLite {
			if folded != 0 || count("shard <> 0") != 0 {
				t.Errorf("SQLite folded %d rows, has %d shard rows", folded, count("shard <> 0"))
			}
			return
		}
		if n := count("day < 20002"); folded == 0 || n != 6 || count("day < 20002 AND shard <> 0") != 0 {
			t.Errorf("folded %d rows, %d rows left before the day", folded, n)
		}
		if count("day >= 20002 AND shard <> 0") == 0 {
			t.Error("the days from the fold's day were folded")
		}
		// A folded day written again, and folded again.
		add(60)
		before = read()
		if count("day < 20002 AND shard <> 0") == 0 {
			t.Fatal("the second writes made no shard rows: the test proves nothing")
		}
		if _, err := db.CountersFold(ctx, 20004); err != nil {
			t.Fatal(err)
		}
		if after := read(); after != before {
			t.Errorf("the second fold changed the counters:\n%s\nwas\n%s", after, before)
		}
		if n := count("1 = 1"); n != 12 {
			t.Errorf("%d rows after folding every day, want 12", n)
		}
	})
}

// TestVisitLeadForms: a visit keeps the tracker's count of lead forms, and
// none when it said nothing.
func TestVisitLeadForms(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		trackerSite(t, db, "dent")
		two := 2
		now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
		counterVisitors(t, db, "dent", now)
		for _, v := range []*model.Visit{{SiteID: "dent", VisitorID: "v_1", At: now, EventID: "ev-1", LeadForms: &two},
			{SiteID: "dent", VisitorID: "v_1", At: now, EventID: "ev-2"}} {
			if err := db.VisitInsert(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		if v, err := db.VisitByEventID(ctx, "dent", "ev-1"); err != nil || v.LeadForms == nil || *v.LeadForms != 2 {
			t.Errorf("visit with 2 forms: %+v %v", v, err)
		}
		if v, err := db.VisitByEventID(ctx, "dent", "ev-2"); err != nil || v.LeadForms != nil {
			t.Errorf("visit without a count: %+v %v", v, err)
		}
	})
}
