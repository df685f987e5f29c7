package qualify

import (
	"slices"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/model"
)

// The scoring rules in the advertiser's words: the grey area whatever
// else the lead typed, fills under two seconds, pitch and job intent from
// several weaker signs, disposable e-mail with a few words, mostly links,
// foreign numbers.

// TestFillSources: under two seconds is junk and final when we measured it
// (the form token, the tracker); a backend's figure is junk by its points
// and says where it came from; a missing time is no evidence.
func TestFillSources(t *testing.T) {
	tests := []struct {
		name    string
		fill    *int64
		ctx     Context
		site    model.Qualify
		verdict model.Verdict
		source  string // "" = no FILL_TOO_FAST
		final   bool
		says    string // in the message
	}{
		{name: "tracker 1.2 s", fill: ms(1200), verdict: model.VerdictJunk, source: FillSourceTracker, final: true, says: "our tracker"},
		{name: "tracker no interaction", fill: ms(0), verdict: model.VerdictJunk, source: FillSourceTracker, final: true},
		{name: "tracker 1999 ms", fill: ms(1999), verdict: model.VerdictJunk, source: FillSourceTracker, final: true},
		{name: "tracker 2 s", fill: ms(2000), verdict: model.VerdictClean},
		{name: "form token 1.5 s, no client figure", ctx: Context{Token: TokenCheck{Checked: true, Valid: true, ServerFillMS: 1500}},
			verdict: model.VerdictJunk, source: FillSourceToken, final: true, says: "form token"},
		{name: "form token wins over a slow client figure", fill: ms(9000), ctx: Context{Token: TokenCheck{Checked: true, Valid: true, ServerFillMS: 800}},
			verdict: model.VerdictJunk, source: FillSourceToken, final: true},
		{name: "fast tracker after a long page view", fill: ms(900), ctx: Context{Token: TokenCheck{Checked: true, Valid: true, ServerFillMS: 40000}},
			verdict: model.VerdictJunk, source: FillSourceTracker, final: true},
		{name: "backend 900 ms", fill: ms(900), ctx: Context{FillBy: FillByBackend}, verdict: model.VerdictJunk, source: FillSourceBackend, says: "site's server"},
		{name: "backend figure under a site's higher junk_from", fill: ms(900), ctx: Context{FillBy: FillByBackend}, site: model.Qualify{JunkFrom: 80},
			verdict: model.VerdictReview, source: FillSourceBackend},
		{name: "backend but our token measured it", fill: ms(9000), ctx: Context{FillBy: FillByBackend, Token: TokenCheck{Checked: true, Valid: true, ServerFillMS: 1100}},
			verdict: model.VerdictJunk, source: FillSourceToken, final: true},
		{name: "backend 30 s", fill: ms(30000), ctx: Context{FillBy: FillByBackend}, verdict: model.VerdictClean},
		{name: "missing", verdict: model.VerdictClean},
		{name: "missing, backend", ctx: Context{FillBy: FillByBackend}, verdict: model.VerdictClean},
		{name: "rule off", fill: ms(300), site: model.Qualify{Weights: map[string]int{CodeFillTooFast: 0}}, verdict: model.VerdictClean},
		{name: "site minimum", fill: ms(2500), site: model.Qualify{MinFillMS: 3000}, verdict: model.VerdictJunk, source: FillSourceTracker, final: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRules(t, tt.site)
			l := realLead()
			l.FillMS = tt.fill
			c := tt.ctx
			c.Country = "TR"
			d := r.Score(&l, c)
			if d.Verdict != tt.verdict {
				t.Errorf("verdict %s (%d %v), want %s", d.Verdict, d.Score, codesOf(d), tt.verdict)
			}
			x := reasonOf(d, CodeFillTooFast)
			if tt.source == "" {
				if x != nil {
					t.Fatalf("unexpected %+v", x)
				}
				return
			}
			if x == nil {
				t.Fatalf("no FILL_TOO_FAST among %v", codesOf(d))
			}
			if x.Evidence["source"] != tt.source || x.Final != tt.final {
				t.Errorf("source %v final %v, want %s %v", x.Evidence["source"], x.Final, tt.source, tt.final)
			}
			if !strings.Contains(x.Message, tt.says) || strings.Contains(x.Message, "{") {
				t.Errorf("message %q, want it to say %q", x.Message, tt.says)
			}
			if tr := Message(x.Code, "tr", x.Evidence); strings.Contains(tr, "{") || tr == x.Message {
				t.Errorf("tr message %q", tr)
			}
		})
	}
	// A site that wants the old weak signal for a missing time turns it on.
	r := mustRules(t, model.Qualify{Weights: map[string]int{CodeFillTimeMissing: 10}})
	l := realLead()
	l.FillMS = nil
	if d := r.Score(&l, Context{Country: "TR"}); reasonOf(d, CodeFillTimeMissing) == nil || d.Verdict != model.VerdictClean {
		t.Errorf("FILL_TIME_MISSING with a weight: %s %v", d.Verdict, codesOf(d))
	}
}

// TestGreyArea: price-only or empty messages wait for evidence whatever
// else was typed; a price among real detail does not.
func TestGreyArea(t *testing.T) {
	r := phraseRules(t) // the phrase rules alone: see phraseRules
	tests := []struct {
		msg  string
		code string // PRICE_ONLY, NO_MESSAGE or "" (clean)
	}{
		{"Bonding fiyatı?", CodePriceOnly},
		{"diş beyazlatma ücreti", CodePriceOnly},
		{"Ankastre mutfak dolabı fiyatı", CodePriceOnly},
		{"Merhaba, implant fiyatı nedir? Teşekkürler", CodePriceOnly},
		{"quote pls", CodePriceOnly},
		{"your rates?", CodePriceOnly},
		{"cost of a loft conversion", CodePriceOnly},
		{"Hi, what's the price for a full set of veneers? Thanks", CodePriceOnly},
		{"What do you charge for a will?", CodePriceOnly},
		{"Was kostet eine Zahnreinigung?", CodePriceOnly},
		{"Preis für eine Wärmepumpe", CodePriceOnly},
		{"Kostenvoranschlag Badsanierung", CodePriceOnly},
		{"Price 2 implants", CodePriceOnly},
		{"", CodeNoMessage},
		{"   ", CodeNoMessage},
		{"Merhabalar, iyi günler. Bilgi alabilir miyim?", CodeNoMessage},
		{"Hello, please get in touch. Thanks!", CodeNoMessage},
		{"Guten Tag, bitte melden Sie sich bei mir. Danke", CodeNoMessage},
		{"Hi there! Looking forward to hearing from you.", CodeNoMessage},
		// Four words of need or more: more than a price question.
		{"Bu sayfadaki fiyat hala geçerli mi? https://www.istanbuldis.example/implant", CodePriceOnly},
		{"Implant fiyatı ve hafta içi akşam randevu verebilir misiniz?", ""},
		{"Implant fiyatı ne kadar, 3 dişim eksik ve köprü var", ""},
		{"Price for a new kitchen with island and quartz worktops", ""},
		{"Merhaba, üst çenede 4 implant ve köprü düşünüyorum. Fiyat ve tedavi süresi hakkında bilgi alabilir miyim?", ""},
		{"Wir möchten unsere Ölheizung gegen eine Wärmepumpe tauschen, 140 qm. Was würde das kosten?", ""},
	}
	for _, tt := range tests {
		for _, email := range []string{"", "ayse.yilmaz@gmail.com"} {
			t.Run(tt.msg+"/"+email, func(t *testing.T) {
				l := realLead()
				l.Message, l.Email = tt.msg, email
				d := r.Score(&l, Context{Country: "TR"})
				got := ""
				for _, c := range codesOf(d) {
					if c == CodePriceOnly || c == CodeNoMessage {
						got = c
					}
				}
				want := model.VerdictClean
				if tt.code != "" {
					want = model.VerdictReview
				}
				if got != tt.code || d.Verdict != want {
					t.Errorf("%s %s %v, want %s %s", d.Verdict, got, codesOf(d), want, tt.code)
				}
			})
		}
	}
	// The floor holds on a site that raises review_from: an e-mail address
	// is no evidence of intent.
	hi := mustRules(t, model.Qualify{ReviewFrom: 60})
	l := realLead()
	l.Message = "Fiyat?"
	if d := hi.Score(&l, Context{Country: "TR"}); d.Verdict != model.VerdictReview {
		t.Errorf("price-only with e-mail on a site with review_from 60: %s", d.Verdict)
	}
}

// TestIntent: a strong phrase is review, a strong phrase and a sign or three
// signs are junk, a lone sign is nothing; who wrote (company name, business
// domain) turns a review into junk but never makes one; customers whose
// words come close stay clean.
func TestIntent(t *testing.T) {
	r := phraseRules(t) // the phrase rules alone: see phraseRules
	tests := []struct {
		name, who, email, msg string
		code                  string
		verdict               model.Verdict
	}{
		{"one strong phrase", "", "", "We do SEO.", CodeVendorPitch, model.VerdictReview},
		{"strong and a sign", "", "", "We do SEO, quick call this week?", CodeVendorPitch, model.VerdictJunk},
		{"two signs", "", "", "We help clinics. Quick call?", CodeVendorPitch, model.VerdictReview},
		{"three signs", "", "", "Quick question: we help local businesses. Worth a chat?", CodeVendorPitch, model.VerdictJunk},
		{"a lone sign is nothing", "", "", "Quick question, are you open on Saturdays for a filling?", "", model.VerdictClean},
		{"strong phrase inside counts once", "", "", "Book a free demo.", CodeVendorPitch, model.VerdictReview},
		{"business domain turns review into junk", "", "sam@growthhive.co.uk", "We help clinics. Quick call?", CodeVendorPitch, model.VerdictJunk},
		{"company name turns review into junk", "Growth Hive Ltd", "", "We help clinics. Quick call?", CodeVendorPitch, model.VerdictJunk},
		{"person and company", "Sam @ Growth Hive", "", "We help clinics. Quick call?", CodeVendorPitch, model.VerdictJunk},
		{"business domain alone is nothing", "", "office@brightsmiledental.com", "Our office needs a lawyer to review our lease. Can we schedule a call?", "", model.VerdictClean},
		{"company name alone is nothing", "Kaya Ltd", "", "Ofisimizin mutfağı için dolap yaptırmak istiyoruz, keşfe gelebilir misiniz?", "", model.VerdictClean},
		{"tr pitch", "", "", "Kliniğinizin sosyal medya hesaplarını büyütüyoruz, reklam paketlerimiz hakkında bilgi almak ister misiniz?", CodeVendorPitch, model.VerdictJunk},
		{"de pitch", "", "", "Wir erstellen Ihnen eine moderne Website zum Festpreis. Haben Sie Interesse?", CodeVendorPitch, model.VerdictJunk},
		{"selling leads", "", "", "We sell exclusive solar leads, pay per lead.", CodeVendorPitch, model.VerdictJunk},
		{"price list", "", "", "Diş kliniklerine sarf malzeme tedarik ediyoruz, fiyat listemizi iletebiliriz.", CodeVendorPitch, model.VerdictJunk},
		{"saw the ad", "", "", "Instagram reklamınızda implant kampanyası gördüm, hâlâ geçerli mi?", "", model.VerdictClean},
		{"asks for a distributor", "", "", "Is your company a distributor for Neff appliances? We want the oven fitted with the kitchen.", "", model.VerdictClean},
		{"a family, not a firm", "", "", "Wir sind eine Familie mit drei Kindern und suchen eine neue Zahnarztpraxis.", "", model.VerdictClean},
		{"tradesperson without cv", "", "", "I'm a kitchen fitter with 15 years experience, own van and tools. If you ever need an extra pair of hands, give me a shout.", CodeJobApplication, model.VerdictJunk},
		{"tr usta", "", "", "12 senedir mutfak montajı yapıyorum, kendi aletlerim var, ekibinize usta lazım olursa çalışmaya hazırım.", CodeJobApplication, model.VerdictJunk},
		{"tr pozisyon", "", "", "Asistan pozisyonu için yazıyorum, daha önce 2 yıl klinikte çalıştım.", CodeJobApplication, model.VerdictJunk},
		{"de Stelle", "", "", "Bin gelernter Tischler mit 10 Jahren Berufserfahrung und suche eine neue Stelle.", CodeJobApplication, model.VerdictJunk},
		{"de Ausbildung", "", "", "Ich interessiere mich für eine Ausbildung zur Zahnmedizinischen Fachangestellten.", CodeJobApplication, model.VerdictJunk},
		{"hiring", "", "", "I saw you were hiring for a receptionist, I have 3 years experience.", CodeJobApplication, model.VerdictJunk},
		{"a bad experience is no application", "", "", "We had a bad experience with our last installer. Can you fix our panels?", "", model.VerdictClean},
		{"the job to do", "", "", "Our previous fitter went bust, we need someone to finish the job. Can you help?", "", model.VerdictClean},
		{"working customer", "", "", "I work nights so please call after 2pm, we need a new kitchen.", "", model.VerdictClean},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := realLead()
			if tt.who != "" {
				l.Name = tt.who
			}
			if tt.email != "" {
				l.Email = tt.email
			}
			l.Message = tt.msg
			d := r.Score(&l, Context{Country: "TR"})
			codes := codesOf(d)
			if tt.code != "" && !slices.Contains(codes, tt.code) {
				t.Errorf("want %s among %v", tt.code, codes)
			}
			if tt.code == "" && (slices.Contains(codes, CodeVendorPitch) || slices.Contains(codes, CodeJobApplication)) {
				t.Errorf("no intent wanted: %+v", d.Reasons)
			}
			if d.Verdict != tt.verdict {
				t.Errorf("verdict %s (%d %+v), want %s", d.Verdict, d.Score, d.Reasons, tt.verdict)
			}
			if x := reasonOf(d, tt.code); x != nil && (x.Message == "" || strings.Contains(x.Message, "?)")) {
				t.Errorf("message %q", x.Message)
			}
		})
	}
	// Site weights still rule: a site that turns the pitch rules down (the
	// phrases and the model, which is sure this is an offer) keeps it at
	// review.
	low := mustRules(t, model.Qualify{Weights: map[string]int{CodeVendorPitch: 20, CodeModelOffer: 20}})
	l := realLead()
	l.Message = "Quick question: we help local businesses. Worth a chat?"
	if d := low.Score(&l, Context{Country: "TR"}); d.Verdict == model.VerdictJunk {
		t.Errorf("weight 20: %s %d %+v", d.Verdict, d.Score, d.Reasons)
	}
}

// TestDisposableShort: a disposable address with a few words is junk; with
// a real description of a need it waits.
func TestDisposableShort(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	for _, tt := range []struct {
		msg     string
		verdict model.Verdict
	}{
		{"", model.VerdictJunk},
		{"interested", model.VerdictJunk},
		{"Termin bitte", model.VerdictJunk},
		{"I'd like information about veneers.", model.VerdictJunk},
		{"Wir suchen einen Anwalt für Verkehrsrecht, Bußgeldbescheid wegen Blitzer.", model.VerdictReview},
	} {
		t.Run(tt.msg, func(t *testing.T) {
			l := realLead()
			l.Email, l.Message = "someone@yopmail.com", tt.msg
			d := r.Score(&l, Context{Country: "TR"})
			x := reasonOf(d, CodeEmailDisposable)
			if x == nil || d.Verdict != tt.verdict {
				t.Fatalf("%s %d %v, want %s with EMAIL_DISPOSABLE", d.Verdict, d.Score, codesOf(d), tt.verdict)
			}
			if tt.verdict == model.VerdictJunk && (x.Points != 75 || !strings.Contains(x.Message, " word")) {
				t.Errorf("reason %+v", x)
			}
		})
	}
}

// TestLinks: a message that is mostly links is junk; a customer's link in a
// real message is only a link.
func TestLinks(t *testing.T) {
	r := phraseRules(t) // the phrase rules alone: see phraseRules
	for _, tt := range []struct {
		msg     string
		code    string
		verdict model.Verdict
	}{
		{"https://bit.ly/3Kx9QzL https://tinyurl.com/y7hd2kq", CodeMostlyLinks, model.VerdictJunk},
		{"Tıkla kazan: https://t.ly/Xy7Q www.bedava-bonus.site", CodeMostlyLinks, model.VerdictJunk},
		{"bit.ly/3Kx9QzL", CodeMostlyLinks, model.VerdictJunk},
		{"Here's a photo of the layout we want: https://imgur.com/a/x7Kd9Lm - can you quote for something similar?", CodeMessageHasLink, model.VerdictClean},
		{"Fiyat 1/2 oranında mı? 3.5 metre mutfak için soruyorum, ölçü aldırmak istiyoruz.", "", model.VerdictClean},
	} {
		t.Run(tt.msg, func(t *testing.T) {
			l := realLead()
			l.Message = tt.msg
			d := r.Score(&l, Context{Country: "TR"})
			codes := codesOf(d)
			if tt.code != "" && !slices.Contains(codes, tt.code) || d.Verdict != tt.verdict {
				t.Errorf("%s %v, want %s %s", d.Verdict, codes, tt.verdict, tt.code)
			}
			if slices.Contains(codes, CodeMostlyLinks) && slices.Contains(codes, CodeMessageHasLink) {
				t.Errorf("both link reasons: %v", codes)
			}
		})
	}
}

// TestForeignNumbers: a customer abroad is not a fake number, with or
// without the "+".
func TestForeignNumbers(t *testing.T) {
	for _, p := range []string{"+353 87 214 3968", "0049 160 4827 3915", "+971 50 318 2746", "46 70 482 1735", "44 7830 514 296", "+7 916 482-17-35", "49 1512 3948207"} {
		if got := checkPhone(p, "TR", nil); got.code != "" || !got.usable {
			t.Errorf("%s: %q %v", p, got.code, got.evidence)
		}
	}
	// A short or patterned number stays what it is.
	for p, code := range map[string]string{"44 555 5555": CodePhonePattern, "0532 41 7": CodePhoneInvalid, "44 7700 900461": CodePhoneInvalid} {
		if got := checkPhone(p, "TR", nil); got.code != code {
			t.Errorf("%s: %q, want %s", p, got.code, code)
		}
	}
}

func TestKeyboardRunOneLayout(t *testing.T) {
	for w, want := range map[string]bool{"asdfg": true, "poiuy": true, "qwertz": true, "oguzerdem": false, "guzer": false} {
		if got := keyboardRun(w, 5); got != want {
			t.Errorf("keyboardRun(%q) = %v", w, got)
		}
	}
}

func TestFreeMail(t *testing.T) {
	l := DefaultLists()
	for d, want := range map[string]bool{
		"gmail.com": true, "hotmail.co.uk": true, "hotmail.com.tr": true, "gmx.de": true, "web.de": true,
		"student.manchester.ac.uk": true, "uni-hamburg.de": true, "mail.uni-koeln.de": true,
		"brightfoxsocial.co.uk": false, "meyer-partner.de": false, "hotmailer.com": false,
	} {
		if got := freeMail(l.free, d); got != want {
			t.Errorf("freeMail(%s) = %v", d, got)
		}
	}
}

// TestAskingToComeIn: a price question that also asks to come in is a
// person who wants to come, not the grey area, however short; the price of
// an appointment or a booking fee is still only a price question.
func TestAskingToComeIn(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	for msg, want := range map[string]model.Verdict{
		"Zirkonyum fiyatı ne kadar, randevu almak istiyorum":  model.VerdictClean,
		"fiyat ve randevu lütfen":                             model.VerdictClean,
		"İmplant fiyatı nedir, muayene randevusu":             model.VerdictClean,
		"price and appointment please":                        model.VerdictClean,
		"How much? Can I book in on Friday?":                  model.VerdictClean,
		"Preis und Termin bitte":                              model.VerdictClean,
		"Was kostet das? Ich möchte einen Termin vereinbaren": model.VerdictClean,
		"Bonding fiyatı?":                                     model.VerdictReview,
		"muayene ücreti ne kadar":                             model.VerdictReview,
		"how much is the booking fee?":                        model.VerdictReview,
		"Was kostet ein Termin?":                              model.VerdictReview,
	} {
		l := realLead()
		l.Message = msg
		if d := r.Score(&l, Context{Country: "TR"}); d.Verdict != want {
			t.Errorf("%q: %s %v, want %s", msg, d.Verdict, codesOf(d), want)
		}
	}
}
