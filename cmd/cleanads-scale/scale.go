package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/web"
)

const (
	siteID    = model.SiteID("scale")
	apiKey    = "scale-api-key-0123456789abcdef"
	adminUser = "owner@scale.example"
	adminPass = "scale-password-0123"
)

func scale(ctx context.Context, o options, out io.Writer) error {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	db, err := store.Open(ctx, o.dsn, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	applied, err := db.Migrate(ctx, time.Now)
	if err != nil {
		return err
	}
	if n, err := db.LeadCount(ctx, siteID); err == nil && len(applied) > 0 && n > 0 {
		fmt.Fprintf(out, "migrations %v on %d leads: %s\n", applied, n, time.Since(start).Round(time.Millisecond))
	}
	now := time.Now().UTC()
	site, err := ensureSite(ctx, db, now)
	if err != nil {
		return err
	}
	users := auth.New(auth.Options{Store: db, Cost: bcrypt.MinCost, Logger: log})
	if _, err := users.AddUser(ctx, adminUser, adminPass); err != nil && !errors.Is(err, model.ErrConflict) {
		return fmt.Errorf("admin user: %w", err)
	}
	svc := app.New(app.Options{Store: db, Logger: log})
	h := web.New(web.Options{App: svc, Store: db, Auth: users, Location: time.UTC, Logger: log}).Handler()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	var tables []*table
	for _, size := range o.sizes {
		have, err := db.LeadCount(ctx, siteID)
		if err != nil {
			return err
		}
		if have < size {
			start := time.Now()
			if err := fill(ctx, db, site, o, now, have, size); err != nil {
				return err
			}
			d := time.Since(start)
			fmt.Fprintf(out, "filled %d -> %d leads (%d visits each) in %s: %.0f leads/s\n", have, size, o.visits,
				d.Round(time.Second), float64(size-have)/d.Seconds())
		}
		if o.eventDays > 0 || o.clickDays > 0 {
			start := time.Now()
			res, err := svc.Retain(ctx, app.RetentionPolicy{EventDays: o.eventDays, ClickDays: o.clickDays})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "shrank %d events older than %d days, cleared the click of %d leads older than %d days and folded %d counter shard rows in %s\n",
				res.Shrunk, o.eventDays, res.Clicks, o.clickDays, res.CounterShards, time.Since(start).Round(time.Millisecond))
		}
		if o.verify {
			start := time.Now()
			n, err := verify(ctx, db, o, time.Now().UTC())
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "counters equal a recount at %d leads: %d counter rows in %s\n", size, n, time.Since(start).Round(time.Millisecond))
		}
		if o.fillOnly {
			continue
		}
		if err := db.Analyze(ctx); err != nil {
			return err
		}
		t, err := measure(ctx, db, base, o, size)
		if err != nil {
			return err
		}
		tables = append(tables, t)
		t.print(out, db.Dialect())
	}
	if len(tables) > 1 {
		printSummary(out, tables)
	}
	return nil
}

// verify recounts the benchmark site's counters of every day its rows may
// have (the fill's days, its visits' two weeks before them, tomorrow) with
// DB.CountersRebuild (committed, a week at a time, as `cleanads counters
// rebuild` does), and compares them with what they were: it returns how
// many counter rows there are, or the differences. The recount stays:
// counters that were right are unchanged by it.
func verify(ctx context.Context, db *store.DB, o options, now time.Time) (int, error) {
	last := model.Day(now) + 1
	first := last - int64(o.days) - 16
	before, err := allCounters(ctx, db, first, last)
	if err != nil {
		return 0, err
	}
	if err := db.CountersRebuild(ctx, siteID, first, last); err != nil {
		return 0, err
	}
	after, err := allCounters(ctx, db, first, last)
	if err != nil {
		return 0, err
	}
	var diffs []string
	for k, n := range before {
		if after[k] != n {
			diffs = append(diffs, fmt.Sprintf("%s: %d, recounted %d", k, n, after[k]))
		}
	}
	for k, n := range after {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: none, recounted %d", k, n))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		return 0, fmt.Errorf("%d counters differ from a recount (now recounted):\n%s", len(diffs), strings.Join(diffs[:min(len(diffs), 20)], "\n"))
	}
	return len(after), nil
}

// allCounters reads the site's counters and report counters of the days
// from first to last, by day, name and dim; zeros are left out, as a
// recount writes none.
func allCounters(ctx context.Context, db *store.DB, first, last int64) (map[string]int64, error) {
	cs, err := db.Counters(ctx, siteID, first, last)
	if err != nil {
		return nil, err
	}
	rs, err := db.ReportCounters(ctx, siteID, first, last)
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	for _, c := range append(cs, rs...) {
		if c.N != 0 {
			m[fmt.Sprintf("%s %s %q", model.DayStart(c.Day).Format(time.DateOnly), c.Name, c.Dim)] = c.N
		}
	}
	return m, nil
}

// ensureSite creates the benchmark's site, live on Meta, once.
func ensureSite(ctx context.Context, db *store.DB, now time.Time) (*model.Site, error) {
	if s, err := db.SiteByID(ctx, siteID); err == nil {
		return s, nil
	}
	s := &model.Site{ID: siteID, Name: "Scale Dental", APIKeyHash: model.HashAPIKey(apiKey),
		Settings: model.SiteSettings{Origins: []string{"https://scale.example"}, Country: "TR",
			Meta: model.MetaSettings{PixelID: "123456789012345", Mode: model.ModeLive,
				Stages: map[string]model.StageEvent{"won": {Event: "Purchase", Value: 5000, Currency: "TRY"}}}}}
	if err := db.SiteUpsert(ctx, s, now); err != nil {
		return nil, err
	}
	return db.SiteByID(ctx, siteID)
}

var (
	firstNames = []string{"Ayşe", "Mehmet", "Fatma", "Mustafa", "Emine", "Ahmet", "Hatice", "Ali", "Zeynep", "Hüseyin",
		"Elif", "Hasan", "Meryem", "İbrahim", "Şerife", "İsmail", "Sultan", "Osman", "Hanife", "Yusuf", "Anna", "John",
		"Maria", "David", "Sofia", "Lucas", "Emma", "Noah", "Olivia", "Liam"}
	lastNames = []string{"Yılmaz", "Kaya", "Demir", "Şahin", "Çelik", "Yıldız", "Yıldırım", "Öztürk", "Aydın", "Özdemir",
		"Arslan", "Doğan", "Kılıç", "Aslan", "Çetin", "Kara", "Koç", "Kurt", "Özkan", "Şimşek", "Smith", "Müller",
		"Rossi", "García", "Novak", "Berg", "Costa", "Nowak", "Horvat", "Dubois"}
	words = strings.Fields(`merhaba implant tedavisi için randevu almak istiyorum hafta içi öğleden sonra uygundur
		fiyat bilgisi alabilir miyim diş beyazlatma kanal dolgu ortodonti şeffaf plak zirkonyum kaplama lütfen beni
		arayın acil ağrı var çocuğum için muayene sigorta geçerli mi taksit seçenekleri hello I would like an appointment
		for a check-up next week please call me back price of veneers cleaning whitening braces`)
	pages = []string{"/", "/implant", "/fiyatlar", "/iletisim", "/blog/dis-beyazlatma", "/ortodonti", "/kampanya"}
)

// fill stores leads from index have up to size, in transactions of
// o.batch leads taken in order by o.workers goroutines: each lead with its
// visitor, its visits, its lead row, its verdict's history entry, its
// outbox rows (sent) and, for some, stages, all through the store's insert
// functions (which keep the counters). The step's leads are spread over
// o.days up to now in index order, each a little after its slot's start,
// so every time-keyed B-tree (visits, leads, their ids) grows at a few
// points at a time instead of at random places all over a file of
// gigabytes: at a million leads random places made each insert read pages
// the cache no longer held.
func fill(ctx context.Context, db *store.DB, site *model.Site, o options, now time.Time, have, size int) error {
	span := time.Duration(o.days) * 24 * time.Hour
	slots := slots{start: now.Add(-span), step: span / time.Duration(size-have), have: have}
	var next atomic.Int64
	next.Store(int64(have))
	errs := make([]error, max(o.workers, 1))
	var wg sync.WaitGroup
	for w := range errs {
		wg.Go(func() {
			for ctx.Err() == nil {
				first := int(next.Add(int64(o.batch))) - o.batch
				if first >= size {
					return
				}
				last := min(first+o.batch, size)
				err := db.InTx(ctx, func(tx *store.Tx) error {
					for j := first; j < last; j++ {
						if err := fillLead(ctx, tx, site, o.visits, slots, j); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					errs[w] = fmt.Errorf("fill leads %d-%d: %w", first, last, err)
					next.Store(int64(size)) // the others stop after their batch
					return
				}
			}
		})
	}
	wg.Wait()
	return cmp.Or(errors.Join(errs...), ctx.Err())
}

// slots are a fill step's times: lead have at start, one step apart.
type slots struct {
	start time.Time
	step  time.Duration
	have  int
}

// at is lead i's time, somewhere in its slot (drawn from r).
func (s slots) at(i int, r *rand.Rand) time.Time {
	return s.start.Add(time.Duration(i-s.have)*s.step + time.Duration(r.Int64N(int64(max(s.step, 1))))).Truncate(time.Millisecond)
}

func fillLead(ctx context.Context, tx *store.Tx, site *model.Site, visits int, slots slots, i int) error {
	r := rand.New(rand.NewPCG(uint64(i), 33))
	at := slots.at(i, r)
	vid := model.NewUUIDv7(at)
	fbclid := ""
	if r.IntN(4) == 0 {
		fbclid = fmt.Sprintf("IwAR%x", r.Uint64())
	}
	ua := "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
	ip := fmt.Sprintf("85.%d.%d.%d", 100+r.IntN(100), r.IntN(256), 1+r.IntN(254))
	first := at.Add(-time.Duration(r.Int64N(int64(14 * 24 * time.Hour))))
	v := &model.Visitor{ID: vid, SiteID: site.ID, FBP: fmt.Sprintf("fb.1.%d.%d", first.UnixMilli(), r.Int64N(1e10)),
		FirstSeen: first, LastSeen: at, LastIP: ip, LastUserAgent: ua}
	if fbclid != "" {
		v.FBC, v.FBCAt = fmt.Sprintf("fb.1.%d.%s", first.UnixMilli(), fbclid), first
	}
	if err := tx.VisitorUpsert(ctx, v); err != nil {
		return err
	}
	var lastEvent string
	for k := 0; k < visits; k++ {
		vat := first.Add(time.Duration(k) * at.Sub(first) / time.Duration(max(visits, 1)))
		forms := r.IntN(2)
		// The page is drawn as before, so that a fill draws the same leads;
		// a visit no longer keeps its page, IP or agent (migration 0350).
		_ = pages[r.IntN(len(pages))]
		vis := &model.Visit{SiteID: site.ID, VisitorID: vid, At: vat, EventID: model.NewUUIDv7(vat), LeadForms: &forms}
		if k == 0 && fbclid != "" {
			vis.FBClid = fbclid
			_ = r.IntN(5) // the landing URL's campaign, drawn as before
			vis.Source, vis.Medium, vis.Campaign = "facebook", "paid", "implant-"+fmt.Sprint(r.IntN(5))
		}
		if err := tx.VisitInsert(ctx, vis); err != nil {
			return err
		}
		lastEvent = vis.EventID
	}
	fn, ln := firstNames[r.IntN(len(firstNames))], lastNames[r.IntN(len(lastNames))]
	msg := make([]string, 4+r.IntN(16))
	for k := range msg {
		msg[k] = words[r.IntN(len(words))]
	}
	fill := int64(2000 + r.IntN(60000))
	l := &model.Lead{ID: model.LeadID(model.NewID("ld_", at)), SiteID: site.ID, EventID: lastEvent, VisitorID: vid,
		Email: fmt.Sprintf("%s.%s%d@gmail.com", asciiLower(fn), asciiLower(ln), i), Phone: fmt.Sprintf("0532 %03d %02d %02d", i/10000%1000, i/100%100, i%100),
		Name: fn + " " + ln, Message: strings.Join(msg, " "), PageURL: "https://scale.example/iletisim",
		FBC: v.FBC, FBP: v.FBP, FBClid: fbclid, FillMS: &fill, FillBy: model.FillByTracker, ClientIP: ip, UserAgent: ua,
		SubmittedAt: at, ReceivedAt: at}
	l.EmailKey, _ = capi.NormalizeEmail(l.Email)
	l.PhoneKey, _ = capi.NormalizePhone(l.Phone, "TR")
	verdict, score := model.VerdictClean, 0
	switch p := r.IntN(100); {
	case p < 20:
		verdict, score = model.VerdictJunk, 60
	case p < 35:
		verdict, score = model.VerdictReview, 25
	}
	l.Decision = model.Decision{Verdict: verdict, Score: score, DecidedBy: "rules", RulesVersion: "scale"}
	if verdict != model.VerdictClean {
		l.Reasons = []model.Reason{{Code: "short_message", Points: score}}
	}
	if err := tx.LeadInsert(ctx, l); err != nil {
		return err
	}
	if err := tx.HistoryIntakeInsert(ctx, &model.HistoryEntry{ID: model.NewID("h_", at), LeadID: l.ID, At: at, Kind: model.HistoryVerdict,
		Data: map[string]any{"verdict": l.Verdict, "score": l.Score, "decided_by": l.DecidedBy}}, l); err != nil {
		return err
	}
	if verdict == model.VerdictJunk {
		return nil
	}
	kinds := []string{model.KindLead}
	if verdict == model.VerdictClean {
		kinds = append(kinds, model.KindQualified)
	}
	var rows []*model.Delivery
	for _, kind := range kinds {
		ev, err := capi.BuildLeadEvent(capi.BuildParams{Site: site, Lead: l, Kind: kind, EventName: "Lead",
			EventTime: at, ActionSource: "website"})
		if err != nil {
			return err
		}
		payload, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		sent := at.Add(2 * time.Second)
		rows = append(rows, &model.Delivery{ID: model.NewID("dl_", at), SiteID: site.ID, LeadID: l.ID, Kind: kind,
			EventName: ev.EventName, EventID: ev.EventID, PixelID: site.Settings.Meta.PixelID, Payload: payload,
			State: model.DeliverySent, Attempts: 1, NextAt: at, DeadlineAt: at.Add(model.MaxEventAge), Mode: "live",
			Response:  json.RawMessage(`{"events_received":1,"fbtrace_id":"AbCdEfGh123"}`),
			CreatedAt: at, UpdatedAt: sent, SentAt: &sent})
	}
	if _, err := tx.DeliveryInsertAll(ctx, rows); err != nil {
		return err
	}
	if verdict == model.VerdictClean && r.IntN(10) == 0 {
		value := float64(1000 + r.IntN(20000))
		if _, err := tx.LeadStageInsert(ctx, &model.LeadStage{LeadID: l.ID, SiteID: site.ID, Stage: "won",
			At: at.Add(72 * time.Hour), EventName: "Purchase", EventID: "st-" + string(l.ID), Value: &value, Currency: "TRY",
			ActionSource: "system_generated", CreatedAt: at}); err != nil {
			return err
		}
	}
	return nil
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case 'ş', 'Ş':
			return 's'
		case 'ı', 'İ':
			return 'i'
		case 'ç', 'Ç':
			return 'c'
		case 'ö', 'Ö':
			return 'o'
		case 'ü', 'Ü':
			return 'u'
		case 'ğ':
			return 'g'
		case 'í':
			return 'i'
		}
		if r >= 'A' && r <= 'Z' {
			return r + 32
		}
		return r
	}, s)
}

// table is one size's timings.
type table struct {
	leads, visits     int
	rows              []timing
	visitBytes, other int64
}

type timing struct {
	name        string
	median, max time.Duration
	status      int
}

// measure logs in, then times each page o.runs times (after one warm-up).
func measure(ctx context.Context, db *store.DB, base string, o options, size int) (*table, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(base+"/admin/login", url.Values{"email": {adminUser}, "password": {adminPass}})
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("login: %s", resp.Status)
	}
	// A lead from the middle of the data, and a person's name in it.
	leads, err := db.LeadList(ctx, store.LeadFilter{Site: siteID, Limit: 1, Before: time.Now().Add(-180 * 24 * time.Hour)})
	if err != nil || len(leads) == 0 {
		return nil, fmt.Errorf("a lead to read: %v", err)
	}
	mid := leads[0]
	second, err := db.LeadList(ctx, store.LeadFilter{Site: siteID, Limit: 51})
	if err != nil {
		return nil, err
	}
	last := second[len(second)-1]
	pages := []struct{ name, path string }{
		{"dashboard", "/admin/dashboard?site=scale"},
		{"inbox", "/admin/"},
		{"inbox, next page", fmt.Sprintf("/admin/?before=%d&bid=%s", last.ReceivedAt.UnixMilli(), last.ID)},
		{"inbox, junk", "/admin/?verdict=junk"},
		{"inbox, search a person (e-mail)", "/admin/?q=" + url.QueryEscape(mid.Email)},
		{"inbox, search a name", "/admin/?q=" + url.QueryEscape(mid.Name)},
		{"inbox, search a phone", "/admin/?q=" + url.QueryEscape(mid.Phone)},
		{"inbox, search a message word", "/admin/?q=zirkonyum"},
		{"inbox, search nothing matches", "/admin/?q=qxzqv-nobody"},
		{"lead page", "/admin/leads/" + string(mid.ID)},
		{"deliveries", "/admin/deliveries"},
		{"deliveries, sent", "/admin/deliveries?state=sent"},
		{"report (campaigns, funnel)", "/admin/report?site=scale"},
		{"sites", "/admin/sites"},
		{"site settings", "/admin/sites/scale"},
		{"readiness", "/admin/sites/scale/readiness"},
		{"notifications", "/admin/notifications"},
		{"API GET /v1/leads/{id}", "/v1/leads/" + string(mid.ID)},
	}
	t := &table{leads: size}
	for _, p := range pages {
		var ds []time.Duration
		status := 0
		for k := 0; k <= o.runs; k++ {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+p.path, nil)
			if strings.HasPrefix(p.path, "/v1/") {
				req.Header.Set("Authorization", "Bearer "+apiKey)
			}
			start := time.Now()
			resp, err := c.Do(req)
			if err != nil {
				return nil, err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			d := time.Since(start)
			status = resp.StatusCode
			if k > 0 { // the first warms the caches
				ds = append(ds, d)
			}
		}
		slices.Sort(ds)
		t.rows = append(t.rows, timing{name: p.name, median: ds[len(ds)/2], max: ds[len(ds)-1], status: status})
	}
	sizes, err := db.TableSizes(ctx)
	if err != nil {
		return nil, err
	}
	for name, n := range sizes {
		if name == "visits" || name == "visitors" {
			t.visitBytes += n
		} else {
			t.other += n
		}
	}
	t.visits = size * o.visits
	return t, nil
}

func (t *table) print(out io.Writer, d store.Dialect) {
	fmt.Fprintf(out, "\n%s, %d leads, %d visits\n\n| page | median ms | slowest ms | status |\n|---|---:|---:|---:|\n", d, t.leads, t.visits)
	for _, r := range t.rows {
		fmt.Fprintf(out, "| %s | %.1f | %.1f | %d |\n", r.name, ms(r.median), ms(r.max), r.status)
	}
	fmt.Fprintf(out, "\nstorage: %d bytes per visit (visits and visitors with their indexes), %d bytes per lead (every other table)\n",
		t.visitBytes/int64(max(t.visits, 1)), t.other/int64(max(t.leads, 1)))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// printSummary prints each page's median at every size, and the largest
// size's over the smallest's.
func printSummary(out io.Writer, ts []*table) {
	fmt.Fprint(out, "\n| page |")
	for _, t := range ts {
		fmt.Fprintf(out, " %d leads |", t.leads)
	}
	fmt.Fprint(out, " ratio |\n|---|")
	for range ts {
		fmt.Fprint(out, "---:|")
	}
	fmt.Fprint(out, "---:|\n")
	for i, r := range ts[0].rows {
		fmt.Fprintf(out, "| %s |", r.name)
		for _, t := range ts {
			fmt.Fprintf(out, " %.1f |", ms(t.rows[i].median))
		}
		fmt.Fprintf(out, " %.1fx |\n", float64(ts[len(ts)-1].rows[i].median)/float64(max(r.median, time.Microsecond)))
	}
	fmt.Fprint(out, "| bytes per visit |")
	for _, t := range ts {
		fmt.Fprintf(out, " %d |", t.visitBytes/int64(max(t.visits, 1)))
	}
	fmt.Fprint(out, " |\n| bytes per lead |")
	for _, t := range ts {
		fmt.Fprintf(out, " %d |", t.other/int64(max(t.leads, 1)))
	}
	fmt.Fprint(out, " |\n")
}
