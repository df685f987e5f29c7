package app_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// The intake benchmarks measure what a visit and a lead cost the server
// below HTTP: Service.Collect and Service.Submit with their store work, on
// the engine under test (SQLite, or PostgreSQL with CLEANADS_TEST_ENGINE=
// postgres and CLEANADS_TEST_POSTGRES), through the public API so that they
// keep measuring while the functions behind it change. benchCallers
// goroutines call at once, as scripts/bench.sh's 256 connections do, so
// SQLite's group commit shares one fsync among many calls as it does in the
// server and the figure is the work, not the disk's latency. The input
// follows cmd/cleanads-load's traffic: new and returning visitors, a quarter
// of landings with an fbclid; leads clean, grey and junk, each with the form
// token and visitor of an earlier visit.
//
//	go test -run '^$' -bench Intake -benchtime 20000x ./internal/app
//	CLEANADS_TEST_ENGINE=postgres CLEANADS_TEST_POSTGRES=... go test -run '^$' -bench Intake ./internal/app

// benchCallers is how many calls are in flight at once.
const benchCallers = 256

// benchClock is the services' time: real time, shifted back while the
// visits whose form tokens the leads use are made, so that those tokens
// are minutes old when the leads arrive, as a person's would be.
type benchClock struct{ shift atomic.Int64 }

func (c *benchClock) now() time.Time { return time.Now().Add(time.Duration(c.shift.Load())) }

// benchService returns a service on a fresh database of the engine under
// test, with the site scripts/bench.sh configures (live Meta mode:
// PageViews go to their queue, lead events to the outbox).
func benchService(b *testing.B) (*app.Service, *model.Site, *benchClock, *store.DB) {
	b.Helper()
	ctx := context.Background()
	db := storetest.New(b)
	site := &model.Site{ID: "dent", Name: "Istanbul Dental", AccessToken: "bench-token", Settings: model.SiteSettings{
		Origins: []string{"https://www.istanbuldis.example"}, Country: "TR",
		Meta: model.MetaSettings{PixelID: "123456789012345", Mode: model.ModeLive}}}
	if err := db.SiteUpsert(ctx, site, time.Now()); err != nil {
		b.Fatal(err)
	}
	site, err := db.SiteByID(ctx, site.ID)
	if err != nil {
		b.Fatal(err)
	}
	clk := &benchClock{}
	svc := app.New(app.Options{Store: db, Now: clk.now, SecretKey: "bench-only-secret-key-0123456789abcdef"})
	return svc, site, clk, db
}

// parallel runs body b.N times over benchCallers goroutines, each with its
// own random source.
func parallel(b *testing.B, body func(rng *rand.Rand)) {
	b.SetParallelism((benchCallers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	var seq atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), seq.Add(1)))
		for pb.Next() {
			body(rng)
		}
	})
}

// counters are what perOp compares with after the timed part.
type counters struct {
	writer model.WriterStats
	cpu    time.Duration
}

// start resets the timer and takes the counters.
func start(b *testing.B, db *store.DB) counters {
	b.ReportAllocs()
	cpu, _ := processCPU()
	c := counters{writer: db.WriterStats(), cpu: cpu}
	b.ResetTimer()
	return c
}

// perOp reports per call, in microseconds: the wall time under name (with
// benchCallers calls in flight, what one costs the machine) and this
// process's CPU time under "cpu_"+name (the steadier figure on a shared
// machine; on PostgreSQL the server's own CPU is not in it); and, on
// SQLite, how many calls shared a commit (the fsync's share).
func perOp(b *testing.B, name string, db *store.DB, before counters) {
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), name)
	if cpu, ok := processCPU(); ok {
		b.ReportMetric(float64((cpu-before.cpu).Microseconds())/float64(b.N), "cpu_"+name)
	}
	if st := db.WriterStats(); st.Commits > before.writer.Commits {
		b.ReportMetric(float64(st.Calls-before.writer.Calls)/float64(st.Commits-before.writer.Commits), "calls/commit")
	}
}

// visitMix makes visits as cmd/cleanads-load's collect traffic does.
type visitMix struct {
	mu    sync.Mutex
	known []string // visitor ids seen, for returning visitors
}

var (
	benchAgents = []string{
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/22F76 [FBAN/FBIOS;FBAV/512.0.0.51.109;FBBV/741398533;FBDV/iPhone15,3;FBMD/iPhone;FBSN/iOS;FBSV/18.5;FBSS/3;FBCR/;FBID/phone;FBLC/tr_TR;FBOP/80]",
		"Mozilla/5.0 (Linux; Android 15; SM-S921B Build/AP3A.240905.015.A2; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/137.0.7151.89 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/516.0.0.58.71;]",
		"Mozilla/5.0 (Linux; Android 14; Redmi Note 13 Pro) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/137.0.0.0 Mobile Safari/537.36",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/137.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.4 Safari/605.1.15",
	}
	benchPages     = []string{"/", "/implant", "/ortodonti", "/dis-beyazlatma", "/iletisim", "/fiyatlar", "/blog/implant-sonrasi-bakim"}
	benchReferrers = []string{"", "", "https://www.google.com/", "https://l.facebook.com/", "https://www.instagram.com/", "https://lm.facebook.com/"}
	benchCampaigns = []string{"implant_tr_2026", "ortho_retarget", "whitening_spring", "brand_search"}
)

func pick(rng *rand.Rand, list []string) string { return list[rng.IntN(len(list))] }

func benchIP(rng *rand.Rand) string {
	if rng.IntN(5) == 0 {
		return fmt.Sprintf("2a02:e0:%x:%x::%x", rng.IntN(1<<16), rng.IntN(1<<16), rng.IntN(1<<16))
	}
	return fmt.Sprintf("%d.%d.%d.%d", 78+rng.IntN(120), rng.IntN(256), rng.IntN(256), 1+rng.IntN(254))
}

func benchClickID(rng *rand.Rand) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
	b := make([]byte, 40+rng.IntN(40))
	for i := range b {
		b[i] = chars[rng.IntN(len(chars))]
	}
	return "IwAR" + string(b)
}

// next is one page view: about a third from a returning visitor once some
// are known, a quarter of landings from an ad click (fbclid and UTM tags).
func (m *visitMix) next(rng *rand.Rand) *app.CollectInput {
	page := "https://www.istanbuldis.example" + pick(rng, benchPages)
	if rng.IntN(4) == 0 {
		q := url.Values{"fbclid": {benchClickID(rng)}, "utm_source": {"facebook"}, "utm_medium": {"paid"}, "utm_campaign": {pick(rng, benchCampaigns)}}
		page += "?" + q.Encode()
	}
	in := &app.CollectInput{PageURL: page, Referrer: pick(rng, benchReferrers), ClientIP: benchIP(rng), UserAgent: pick(rng, benchAgents)}
	if rng.IntN(3) == 0 {
		m.mu.Lock()
		if len(m.known) > 0 {
			in.VisitorID = m.known[rng.IntN(len(m.known))]
		}
		m.mu.Unlock()
	}
	return in
}

// seen remembers a new visitor for later visits (the first 5,000).
func (m *visitMix) seen(in *app.CollectInput, res *app.CollectResult) {
	if in.VisitorID != "" || res.Visitor == nil {
		return
	}
	m.mu.Lock()
	if len(m.known) < 5000 {
		m.known = append(m.known, res.Visitor.ID)
	}
	m.mu.Unlock()
}

// BenchmarkIntakeCollect is one visit: the visitor looked up or created,
// the visit stored, its PageView queued, a form token signed.
func BenchmarkIntakeCollect(b *testing.B) {
	svc, site, _, db := benchService(b)
	ctx := context.Background()
	mix := &visitMix{}
	before := start(b, db)
	parallel(b, func(rng *rand.Rand) {
		in := mix.next(rng)
		res, err := svc.Collect(ctx, site, in)
		if err != nil {
			b.Error(err)
			return
		}
		mix.seen(in, res)
	})
	perOp(b, "us/visit", db, before)
}

// formVisit is a visitor and the form token its visit got.
type formVisit struct{ visitor, token string }

var (
	benchFirst   = []string{"Ayşe", "Mehmet", "Fatma", "Mustafa", "Zeynep", "Ahmet", "Elif", "Emre", "Hatice", "Burak", "Selin", "Can", "Deniz", "Hakan", "Merve", "Oğuz"}
	benchLast    = []string{"Yılmaz", "Kaya", "Demir", "Şahin", "Çelik", "Yıldız", "Aydın", "Öztürk", "Arslan", "Doğan", "Koç", "Kurt"}
	benchHosts   = []string{"gmail.com", "gmail.com", "gmail.com", "hotmail.com", "outlook.com", "yahoo.com", "icloud.com", "yandex.com"}
	benchMobiles = []string{"530", "532", "533", "535", "536", "538", "541", "542", "543", "505", "506", "507", "551", "552", "553", "561"}
	benchClean   = []string{
		"Merhaba, implant tedavisi hakkında bilgi almak ve muayene randevusu oluşturmak istiyorum. Hafta içi akşam saatleri uygun.",
		"İyi günler, üst çenemde iki diş eksik. Köprü mü implant mı daha uygun olur, muayene için ne zaman gelebilirim?",
		"Kızım için şeffaf plak tedavisi düşünüyoruz, önce bir muayene olmak istiyoruz. Cumartesi randevu var mı?",
		"Hello, I will be in Istanbul next month and would like a consultation for veneers. Could you call me back?",
		"Diş eti kanamam var ve sol alt dişimde ağrı başladı, en kısa zamanda muayene olmak istiyorum.",
		"Merhaba, zirkonyum kaplama için randevu almak istiyorum, öğleden sonra arayabilirsiniz.",
	}
	benchGrey   = []string{"Fiyat nedir?", "", "fiyat", "İmplant fiyatı ne kadar?", "how much?"}
	benchVendor = []string{
		"Merhaba, web siteniz için SEO hizmeti sunuyoruz, Google'da ilk sayfaya çıkarıyoruz. Teklifimizi iletmek isteriz.",
		"Hi, we are a digital marketing agency. We can get you more patients with our lead generation services. Can we schedule a call?",
	}
	benchJob = []string{
		"Merhaba, diş hekimi asistanı olarak iş başvurusu yapmak istiyorum, CV'mi nereye gönderebilirim?",
		"Hello, I am applying for the dental nurse position. Please find my CV attached.",
	}
	asciiFold = strings.NewReplacer("ı", "i", "İ", "i", "ş", "s", "Ş", "s", "ğ", "g", "ü", "u", "Ü", "u", "ö", "o", "Ö", "o", "ç", "c", "Ç", "c")
)

// leadMix makes leads as cmd/cleanads-load's leads traffic does.
type leadMix struct {
	mu     sync.Mutex
	visits []formVisit // each used once
	emails []string    // sent, for the same person again
}

func benchUUID(rng *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// next is one form submit: about 60% clean, 25% grey, 15% junk (vendors,
// job seekers, test entries, bots, keyboard mashing) and a few people
// sending again, with the form token and visitor of a visit.
func (m *leadMix) next(rng *rand.Rand) *app.LeadInput {
	first, last := pick(rng, benchFirst), pick(rng, benchLast)
	in := &app.LeadInput{
		EventID: benchUUID(rng), FirstName: first, LastName: last,
		Email:   fmt.Sprintf("%s.%s%d@%s", strings.ToLower(asciiFold.Replace(first)), strings.ToLower(asciiFold.Replace(last)), rng.IntN(1_000_000), pick(rng, benchHosts)),
		Phone:   fmt.Sprintf("0%s %03d %02d %02d", pick(rng, benchMobiles), 200+rng.IntN(800), rng.IntN(100), rng.IntN(100)),
		Message: pick(rng, benchClean), FillMS: i64(int64(15000 + rng.IntN(90000))),
		PageURL: "https://www.istanbuldis.example" + pick(rng, benchPages), ClientIP: benchIP(rng), UserAgent: pick(rng, benchAgents),
	}
	yes := true
	in.Consent = &yes
	m.mu.Lock()
	defer m.mu.Unlock()
	switch n := rng.IntN(100); {
	case n < 60: // clean
	case n < 85:
		in.Message = pick(rng, benchGrey)
	case n < 88:
		in.Message = pick(rng, benchVendor)
	case n < 90:
		in.Message = pick(rng, benchJob)
	case n < 93:
		in.FirstName, in.LastName, in.Message, in.Phone = "test", "test", "test", "0555 555 55 55"
	case n < 95:
		in.Honeypot, in.FillMS = "http://cheap-pills.example", i64(int64(300+rng.IntN(500)))
	case n < 97:
		in.FirstName, in.LastName, in.Message, in.Email = "asdfgh", "qwerty", "sdfsdf sdfsdf", "xkq3@mailinator.com"
	default:
		if len(m.emails) > 0 {
			in.Email = m.emails[rng.IntN(len(m.emails))]
		}
	}
	if len(m.emails) < 2000 {
		m.emails = append(m.emails, in.Email)
	}
	if n := len(m.visits); n > 0 {
		in.VisitorID, in.FormToken = m.visits[n-1].visitor, m.visits[n-1].token
		m.visits = m.visits[:n-1]
	}
	return in
}

// BenchmarkIntakeSubmit is one lead: the replay look-up, the form token
// checked and spent, the visitor linked, the lead judged, stored with its
// history and its events queued. The visits that give the leads their form
// tokens are made first, before the timer, with the clock set back ten
// minutes (the time a person takes to fill the form); the verdicts are
// reported as shares of the leads, to show the mix.
func BenchmarkIntakeSubmit(b *testing.B) {
	svc, site, clk, db := benchService(b)
	ctx := context.Background()
	mix := &leadMix{}
	visits := &visitMix{}
	clk.shift.Store(int64(-10 * time.Minute))
	var made atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
			for made.Add(1) <= int64(b.N) {
				in := visits.next(rng)
				res, err := svc.Collect(ctx, site, in)
				if err != nil {
					b.Error(err)
					return
				}
				visits.seen(in, res)
				if res.Visitor != nil && res.FormToken != "" {
					mix.mu.Lock()
					mix.visits = append(mix.visits, formVisit{res.Visitor.ID, res.FormToken})
					mix.mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	clk.shift.Store(0)
	var verdicts [3]atomic.Int64 // clean, review, junk
	before := start(b, db)
	parallel(b, func(rng *rand.Rand) {
		l, _, err := svc.Submit(ctx, site, mix.next(rng))
		if err != nil {
			b.Error(err)
			return
		}
		switch l.Verdict {
		case model.VerdictClean:
			verdicts[0].Add(1)
		case model.VerdictReview:
			verdicts[1].Add(1)
		default:
			verdicts[2].Add(1)
		}
	})
	perOp(b, "us/lead", db, before)
	b.ReportMetric(100*float64(verdicts[0].Load())/float64(b.N), "clean_pct")
	b.ReportMetric(100*float64(verdicts[2].Load())/float64(b.N), "junk_pct")
}
