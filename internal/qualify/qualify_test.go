package qualify

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

func ms(v int64) *int64 { return &v }

func mustRules(t testing.TB, s model.Qualify) *Rules {
	t.Helper()
	r, err := New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func codesOf(d model.Decision) []string {
	out := make([]string, len(d.Reasons))
	for i, r := range d.Reasons {
		out[i] = r.Code
	}
	return out
}

func reasonOf(d model.Decision, code string) *model.Reason {
	for i := range d.Reasons {
		if d.Reasons[i].Code == code {
			return &d.Reasons[i]
		}
	}
	return nil
}

// realLead is a lead no rule should mind: a real Istanbul mobile, an e-mail,
// a proper message, a human fill time.
func realLead() model.Lead {
	return model.Lead{
		Name:        "Ayşe Yılmaz",
		Phone:       "0532 418 27 63",
		Email:       "ayse.yilmaz@gmail.com",
		Message:     "İmplant için muayene randevusu almak istiyorum, hafta içi uygunum.",
		FillMS:      ms(42000),
		SubmittedAt: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC),
	}
}

// phraseRules are the default rules without the built-in model's reasons
// and without clean only on evidence: the rules that read phrases, tested
// alone. The model and the evidence rule have their own tests
// (meaning_test.go) and are measured on the corpora (TestCorpus,
// TestHeldout).
func phraseRules(t testing.TB) *Rules {
	t.Helper()
	return mustRules(t, model.Qualify{Weights: map[string]int{CodeModelOffer: 0, CodeModelJob: 0, CodeModelNonsense: 0, CodeNoEvidence: 0}})
}

func TestScoreRules(t *testing.T) {
	r := phraseRules(t)
	tr := Context{Country: "TR"}
	tests := []struct {
		name    string
		edit    func(*model.Lead)
		ctx     Context
		want    []string // codes that must be there
		notWant []string // codes that must not
		verdict model.Verdict
	}{
		{name: "real lead", edit: func(*model.Lead) {}, ctx: tr, verdict: model.VerdictClean},
		{name: "honeypot", edit: func(l *model.Lead) { l.Honeypot = "x" }, ctx: tr, want: []string{CodeHoneypot}, verdict: model.VerdictJunk},
		{name: "honeypot blank", edit: func(l *model.Lead) { l.Honeypot = "  " }, ctx: tr, notWant: []string{CodeHoneypot}, verdict: model.VerdictClean},
		{name: "fill under min", edit: func(l *model.Lead) { l.FillMS = ms(1500) }, ctx: tr, want: []string{CodeFillTooFast}, verdict: model.VerdictJunk},
		{name: "fill instant", edit: func(l *model.Lead) { l.FillMS = ms(300) }, ctx: tr, want: []string{CodeFillTooFast}, verdict: model.VerdictJunk},
		{name: "fill at min", edit: func(l *model.Lead) { l.FillMS = ms(2000) }, ctx: tr, notWant: []string{CodeFillTooFast}, verdict: model.VerdictClean},
		{name: "fill missing is no evidence", edit: func(l *model.Lead) { l.FillMS = nil }, ctx: tr, notWant: []string{CodeFillTimeMissing}, verdict: model.VerdictClean},
		{name: "server fill wins over client", edit: func(l *model.Lead) { l.FillMS = ms(9000) },
			ctx: Context{Country: "TR", Token: TokenCheck{Checked: true, Valid: true, ServerFillMS: 350}}, want: []string{CodeFillTooFast}, verdict: model.VerdictJunk},
		{name: "fast client fill counts after a long page view", edit: func(l *model.Lead) { l.FillMS = ms(900) },
			ctx: Context{Country: "TR", Token: TokenCheck{Checked: true, Valid: true, ServerFillMS: 30000}}, want: []string{CodeFillTooFast}, verdict: model.VerdictJunk},
		{name: "slow server and client", edit: func(l *model.Lead) { l.FillMS = ms(12000) },
			ctx: Context{Country: "TR", Token: TokenCheck{Checked: true, Valid: true, ServerFillMS: 30000}}, notWant: []string{CodeFillTooFast}, verdict: model.VerdictClean},
		{name: "token forged", edit: func(*model.Lead) {}, ctx: Context{Country: "TR", Token: TokenCheck{Checked: true, Problem: "forged"}}, want: []string{CodeTokenForged}, verdict: model.VerdictJunk},
		{name: "token invalid without problem", edit: func(*model.Lead) {}, ctx: Context{Country: "TR", Token: TokenCheck{Checked: true}}, want: []string{CodeTokenForged}, verdict: model.VerdictJunk},
		{name: "token replayed", edit: func(*model.Lead) {}, ctx: Context{Country: "TR", Token: TokenCheck{Checked: true, Problem: "replayed"}}, want: []string{CodeTokenReplayed}, verdict: model.VerdictReview},
		{name: "token expired is weak", edit: func(*model.Lead) {}, ctx: Context{Country: "TR", Token: TokenCheck{Checked: true, Problem: "expired"}}, want: []string{CodeTokenExpired}, verdict: model.VerdictClean},
		{name: "token not checked", edit: func(*model.Lead) {}, ctx: Context{Country: "TR", Token: TokenCheck{Problem: "forged"}}, notWant: []string{CodeTokenForged}, verdict: model.VerdictClean},
		{name: "duplicate", edit: func(*model.Lead) {},
			ctx:  Context{Country: "TR", Previous: &Previous{LeadID: "L1", At: time.Date(2026, 11, 18, 9, 0, 0, 0, time.UTC), Match: "phone"}},
			want: []string{CodeDuplicate}, verdict: model.VerdictJunk},
		{name: "no contact at all", edit: func(l *model.Lead) { l.Phone, l.Email = "", "" }, ctx: tr, want: []string{CodePhoneMissing}, verdict: model.VerdictReview},
		{name: "e-mail only is fine", edit: func(l *model.Lead) { l.Phone = "" }, ctx: tr, notWant: []string{CodePhoneMissing}, verdict: model.VerdictClean},
		{name: "invalid phone and no e-mail", edit: func(l *model.Lead) { l.Phone, l.Email = "0532 41 7", "" }, ctx: tr, want: []string{CodePhoneInvalid, CodeNoValidContact}, verdict: model.VerdictJunk},
		{name: "invalid phone with e-mail", edit: func(l *model.Lead) { l.Phone = "0532 41 7" }, ctx: tr, want: []string{CodePhoneInvalid}, notWant: []string{CodeNoValidContact}, verdict: model.VerdictReview},
		{name: "disposable e-mail", edit: func(l *model.Lead) { l.Email = "x1@mailinator.com" }, ctx: tr, want: []string{CodeEmailDisposable}, verdict: model.VerdictReview},
		{name: "disposable subdomain", edit: func(l *model.Lead) { l.Email = "x1@000-webmail.myhome-server.de" }, ctx: tr, want: []string{CodeEmailDisposable}, verdict: model.VerdictReview},
		{name: "impossible e-mail", edit: func(l *model.Lead) { l.Email = "ayse@@gmail" }, ctx: tr, want: []string{CodeEmailInvalid}, verdict: model.VerdictReview},
		{name: "example domain", edit: func(l *model.Lead) { l.Email = "ayse@example.com" }, ctx: tr, want: []string{CodeEmailInvalid}},
		{name: "a@b.c", edit: func(l *model.Lead) { l.Email = "a@b.c" }, ctx: tr, want: []string{CodeTestEntry}, verdict: model.VerdictJunk},
		{name: "test message", edit: func(l *model.Lead) { l.Message = "TEST" }, ctx: tr, want: []string{CodeTestEntry}, verdict: model.VerdictJunk},
		{name: "test123 name", edit: func(l *model.Lead) { l.Name = "test123" }, ctx: tr, want: []string{CodeTestEntry}, verdict: model.VerdictJunk},
		{name: "dental test is not a test", edit: func(l *model.Lead) { l.Message = "Can you do a dental test for gum disease?" }, ctx: tr, notWant: []string{CodeTestEntry}, verdict: model.VerdictClean},
		{name: "alerji testi is not a test", edit: func(l *model.Lead) { l.Message = "Alerji testi yaptırdım, implant olur mu?" }, ctx: tr, notWant: []string{CodeTestEntry}, verdict: model.VerdictClean},
		{name: "one-letter name", edit: func(l *model.Lead) { l.Name = "x" }, ctx: tr, want: []string{CodeGibberish}, verdict: model.VerdictReview},
		{name: "initial next to a name", edit: func(l *model.Lead) { l.Name = "Mehmet Ö." }, ctx: tr, notWant: []string{CodeGibberish}, verdict: model.VerdictClean},
		{name: "umlauts are vowels", edit: func(l *model.Lead) { l.Name = "Jürgen Öztürk" }, ctx: tr, notWant: []string{CodeGibberish}, verdict: model.VerdictClean},
		{name: "first and last name fields", edit: func(l *model.Lead) { l.Name, l.FirstName, l.LastName = "", "Şükrü", "Ünal" }, ctx: tr, notWant: []string{CodeGibberish}, verdict: model.VerdictClean},
		{name: "keyboard name", edit: func(l *model.Lead) { l.Name = "Asdfgh" }, ctx: tr, want: []string{CodeGibberish}},
		// Gibberish by the letters' statistics, not by a missing vowel
		// (issue 29: "GmbH" is no gibberish).
		{name: "mash name", edit: func(l *model.Lead) { l.Name = "Xjqzkv" }, ctx: tr, want: []string{CodeGibberish}},
		{name: "home-row mash name", edit: func(l *model.Lead) { l.Name = "Kdjfhs" }, ctx: tr, want: []string{CodeGibberish}},
		{name: "company form is no gibberish", edit: func(l *model.Lead) { l.Name = "Nordlicht Media GmbH" }, ctx: tr, notWant: []string{CodeGibberish}},
		{name: "mashed message and name", edit: func(l *model.Lead) { l.Name, l.Message = "sdfgh", "jhgjhgjhg" }, ctx: tr, want: []string{CodeGibberish}, verdict: model.VerdictJunk},
		{name: "a message of nothing but mash", edit: func(l *model.Lead) { l.Message = "rsrsrsrsrs" }, ctx: tr, want: []string{CodeGibberish}, verdict: model.VerdictJunk},
		{name: "a unit repeated in Arabic script", edit: func(l *model.Lead) { l.Message = "لالالالالا سيبسيبسيب" }, ctx: tr, want: []string{CodeGibberish}},
		{name: "an Arabic request is no gibberish", edit: func(l *model.Lead) {
			l.Message = "أريد حجز موعد لتبييض الأسنان الأسبوع القادم"
		}, ctx: tr, notWant: []string{CodeGibberish}},
		{name: "texting abbreviations are not gibberish", edit: func(l *model.Lead) { l.Message = "mrb slm randevu lazım" }, ctx: tr, notWant: []string{CodeGibberish}},
		{name: "vendor pitch", edit: func(l *model.Lead) {
			l.Message = "Dijital ajans olarak Google reklamları ve sosyal medya yönetimi sunuyoruz."
		}, ctx: tr, want: []string{CodeVendorPitch}, verdict: model.VerdictJunk},
		{name: "vendor pitch in capitals", edit: func(l *model.Lead) {
			l.Message = "DİJİTAL AJANS OLARAK GOOGLE REKLAMLARI VE SOSYAL MEDYA YÖNETİMİ SUNUYORUZ."
		}, ctx: tr, want: []string{CodeVendorPitch}, verdict: model.VerdictJunk},
		{name: "vendor pitch without Turkish letters", edit: func(l *model.Lead) {
			l.Message = "dijital ajans olarak google reklamlari ve sosyal medya yonetimi sunuyoruz"
		}, ctx: tr, want: []string{CodeVendorPitch}, verdict: model.VerdictJunk},
		{name: "seo inside a word is not seo", edit: func(l *model.Lead) { l.Message = "I live in Seoul and visit Istanbul in May for veneers." }, ctx: tr, notWant: []string{CodeVendorPitch}, verdict: model.VerdictClean},
		{name: "one vendor phrase and a link", edit: func(l *model.Lead) { l.Message = "We do SEO, see https://example.net" }, ctx: tr, want: []string{CodeVendorPitch, CodeMessageHasLink}, verdict: model.VerdictJunk},
		{name: "customer link only", edit: func(l *model.Lead) {
			l.Message = "Photo of my teeth: https://imgur.com/a/x7Kd9 - what would you suggest?"
		}, ctx: tr, want: []string{CodeMessageHasLink}, verdict: model.VerdictClean},
		{name: "job application tr", edit: func(l *model.Lead) {
			l.Message = "Kliniğinizde asistan olarak çalışmak istiyorum, CV'mi gönderebilir miyim?"
		}, ctx: tr, want: []string{CodeJobApplication}, verdict: model.VerdictJunk},
		{name: "job application de compound", edit: func(l *model.Lead) { l.Message = "Anbei meine Initiativbewerbung und mein Lebenslauf." }, ctx: tr, want: []string{CodeJobApplication}, verdict: model.VerdictJunk},
		{name: "job application en", edit: func(l *model.Lead) { l.Message = "Are you hiring? I'd like an internship." }, ctx: tr, want: []string{CodeJobApplication}, verdict: model.VerdictJunk},
		{name: "Bewertung is not Bewerbung", edit: func(l *model.Lead) { l.Message = "Ihre Bewertung bei Google ist super, ich möchte einen Termin." }, ctx: tr, notWant: []string{CodeJobApplication}},
		{name: "price only, no e-mail", edit: func(l *model.Lead) { l.Email, l.Message = "", "Fiyat?" }, ctx: tr, want: []string{CodePriceOnly}, verdict: model.VerdictReview},
		{name: "price of one thing, no e-mail", edit: func(l *model.Lead) { l.Email, l.Message = "", "İmplant fiyatı ne kadar?" }, ctx: tr, want: []string{CodePriceOnly}, verdict: model.VerdictReview},
		{name: "how much, no e-mail", edit: func(l *model.Lead) { l.Email, l.Message = "", "How much?" }, ctx: tr, want: []string{CodePriceOnly}, verdict: model.VerdictReview},
		{name: "Preis, no e-mail", edit: func(l *model.Lead) { l.Email, l.Message = "", "Was kostet das?" }, ctx: tr, want: []string{CodePriceOnly}, verdict: model.VerdictReview},
		{name: "price only with e-mail", edit: func(l *model.Lead) { l.Message = "Fiyat?" }, ctx: tr, want: []string{CodePriceOnly}, verdict: model.VerdictReview},
		{name: "says nothing, with e-mail", edit: func(l *model.Lead) { l.Message = "" }, ctx: tr, want: []string{CodeNoMessage}, verdict: model.VerdictReview},
		{name: "says nothing, no e-mail", edit: func(l *model.Lead) { l.Email, l.Message = "", "" }, ctx: tr, want: []string{CodeNoMessage}, verdict: model.VerdictReview},
		{name: "only greetings, no e-mail", edit: func(l *model.Lead) { l.Email, l.Message = "", "Merhaba, bilgi almak istiyorum." }, ctx: tr, want: []string{CodeNoMessage}, verdict: model.VerdictReview},
		{name: "real question, no e-mail", edit: func(l *model.Lead) { l.Email = "" }, ctx: tr, notWant: []string{CodeNoMessage, CodePriceOnly}, verdict: model.VerdictClean},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := realLead()
			tt.edit(&l)
			d := r.Score(&l, tt.ctx)
			got := codesOf(d)
			for _, c := range tt.want {
				if !slices.Contains(got, c) {
					t.Errorf("want %s among %v", c, got)
				}
			}
			for _, c := range tt.notWant {
				if slices.Contains(got, c) {
					t.Errorf("do not want %s among %v", c, got)
				}
			}
			if tt.verdict != "" && d.Verdict != tt.verdict {
				t.Errorf("verdict %s (score %d, %v), want %s", d.Verdict, d.Score, got, tt.verdict)
			}
			if d.RulesVersion != RulesVersion || d.DecidedBy != model.DecidedByRules {
				t.Errorf("version %q by %q", d.RulesVersion, d.DecidedBy)
			}
			for _, x := range d.Reasons {
				if x.Message == "" || strings.Contains(x.Message, "{") || strings.Contains(x.Message, "?)") {
					t.Errorf("%s: message %q", x.Code, x.Message)
				}
			}
		})
	}
}

func TestPhones(t *testing.T) {
	tests := []struct {
		phone, region string
		code          string // "" = no reason
		evidence      map[string]any
	}{
		// Turkey first.
		{"0532 418 27 63", "TR", "", nil},
		{"+90 532 418 27 63", "TR", "", nil},
		{"905324182763", "TR", "", nil},
		{"0090 532 418 27 63", "TR", "", nil},
		{"0212 244 55 66", "TR", "", nil},   // Istanbul landline
		{"(0216) 347 82 19", "TR", "", nil}, // Istanbul, Asian side
		{"0312 418 27 90", "TR", "", nil},   // Ankara
		{"0555 813 47 92", "TR", "", nil},   // 555 is a real Turkish prefix
		{"+905324182763", "", "", nil},      // no site region, international form
		{"05324182763", "", "", nil},        // no site region: digits only
		{"555 555 55 55", "TR", CodePhonePattern, map[string]any{"pattern": "all_same", "part": "number"}},
		{"0000000000", "TR", CodePhonePattern, map[string]any{"pattern": "all_same", "part": "number"}},
		{"1234567890", "TR", CodePhonePattern, map[string]any{"pattern": "ascending", "part": "number"}},
		{"9876543210", "TR", CodePhonePattern, map[string]any{"pattern": "descending", "part": "number"}},
		{"0532 111 11 11", "TR", CodePhonePattern, map[string]any{"pattern": "all_same", "part": "subscriber"}},
		{"0543 123 45 67", "TR", CodePhonePattern, map[string]any{"pattern": "ascending", "part": "subscriber"}},
		{"0532 121 21 21", "TR", CodePhonePattern, map[string]any{"pattern": "few_distinct", "part": "subscriber"}},
		{"0532 123 12 31", "TR", CodePhonePattern, map[string]any{"pattern": "repeating", "part": "subscriber"}},
		{"0532 41 7", "TR", CodePhoneInvalid, nil},
		{"0999 812 34 56", "TR", CodePhoneInvalid, nil},
		{"not a number", "TR", CodePhoneInvalid, nil},
		{"444 1 444", "TR", CodePhoneBusiness, map[string]any{"type": "company_number"}},
		{"0850 302 47 19", "TR", CodePhoneBusiness, map[string]any{"type": "company_number"}},
		{"0800 211 47 19", "TR", CodePhoneBusiness, map[string]any{"type": "toll_free"}},
		{"0900 412 47 19", "TR", CodePhonePremium, map[string]any{"type": "premium_rate"}},
		// Every country correct.
		{"0151 2739 4816", "DE", "", nil},
		{"030 8847 2913", "DE", "", nil},
		{"+49 171 3948275", "TR", "", nil}, // a German on a Turkish site
		{"0176 1111111", "DE", CodePhonePattern, nil},
		{"07830 514 296", "GB", "", nil},
		{"020 8741 3926", "GB", "", nil},
		{"+44 7830 514 296", "DE", "", nil},
		{"07700 900461", "GB", CodePhoneFictional, map[string]any{"range": "UK drama 07700 900xxx"}},
		{"01632 960 712", "GB", CodePhoneFictional, nil},
		{"020 7946 0958", "GB", CodePhoneFictional, nil},
		{"0121 496 0123", "GB", CodePhoneFictional, nil},
		{"(415) 867-2309", "US", "", nil},
		{"+1 212 555 0143", "TR", CodePhoneFictional, map[string]any{"range": "NANP 555-01xx"}},
		{"312-555-2368", "US", CodePhoneFictional, nil},
		{"(123) 456-7890", "US", CodePhonePattern, nil},
		{"0491 570 156", "AU", CodePhoneFictional, nil},
		{"0412 739 058", "AU", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.region+" "+tt.phone, func(t *testing.T) {
			got := checkPhone(tt.phone, tt.region, nil)
			if got.code != tt.code {
				t.Fatalf("code %q %v, want %q", got.code, got.evidence, tt.code)
			}
			for k, v := range tt.evidence {
				if got.evidence[k] != v {
					t.Errorf("evidence %s = %v, want %v", k, got.evidence[k], v)
				}
			}
			if tt.code == "" && !got.usable {
				t.Error("a valid number must be usable")
			}
		})
	}
}

func TestEmailProblem(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"ayse.yilmaz@gmail.com", true},
		{"first+tag@sub.example.co.uk", true},
		{"o'brien@eircom.net", true},
		{"müller@gmx.de", true},
		{"info@xn--mller-kva.de", true},
		{"ayse@@gmail.com", false},
		{"aysegmail.com", false},
		{"ayse@gmail", false},
		{"ayse@gmail.c", false},
		{"ayse.@gmail.com", false},
		{"ay..se@gmail.com", false},
		{"ayse yilmaz@gmail.com", false},
		{"@gmail.com", false},
		{"ayse@-gmail.com", false},
		{"ayse@gmail..com", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if p := emailProblem(tt.addr); (p == "") != tt.ok {
				t.Errorf("problem %q, want ok=%v", p, tt.ok)
			}
		})
	}
}

func TestFold(t *testing.T) {
	tests := []struct{ in, want string }{
		{"İŞ BAŞVURUSU", "is basvurusu"},
		{"iş başvurusu", "is basvurusu"},
		{"IŞIK", "isik"},
		{"Lebenslauf für Straße", "lebenslauf fur strasse"},
		{"Özgeçmiş", "ozgecmis"},
		{"résumé", "resume"},
		{"plain ascii", "plain ascii"},
	}
	for _, tt := range tests {
		if got := fold(tt.in); got != tt.want {
			t.Errorf("fold(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := tokens(fold("CV'mi Google'da, www.seo-ajans.com!"), nil); !reflect.DeepEqual(got, []string{"cv", "mi", "google", "da", "www", "seo", "ajans", "com"}) {
		t.Errorf("tokens = %q", got)
	}
}

func TestDecideThresholdsAndFloors(t *testing.T) {
	r := mustRules(t, model.Qualify{ReviewFrom: 60, JunkFrom: 90})
	l := realLead()
	l.Phone, l.Email = "", ""
	// PHONE_MISSING gives 40, under this site's review_from, yet a lead
	// nobody can reach is never clean.
	if d := r.Score(&l, Context{Country: "TR"}); d.Verdict != model.VerdictReview {
		t.Errorf("missing contact: %s %d %v", d.Verdict, d.Score, codesOf(d))
	}
	l = realLead()
	l.FillMS = ms(300) // a backend's figure: 70 points, junk by default, review here
	if d := r.Score(&l, Context{Country: "TR", FillBy: FillByBackend}); d.Verdict != model.VerdictReview || d.Score != 70 {
		t.Errorf("fast fill: %s %d %v", d.Verdict, d.Score, codesOf(d))
	}
	// Measured by the tracker, the same figure is final.
	if d := r.Score(&l, Context{Country: "TR"}); d.Verdict != model.VerdictJunk {
		t.Errorf("fast fill by the tracker: %s %d %v", d.Verdict, d.Score, codesOf(d))
	}
	l.Honeypot = "x"
	if d := r.Score(&l, Context{Country: "TR"}); d.Verdict != model.VerdictJunk || d.Score != 100 {
		t.Errorf("final reason: %s %d", d.Verdict, d.Score)
	}
}

func TestWeights(t *testing.T) {
	// Every rule that reads a pitch off (the phrases, the built-in model, and
	// clean only on evidence, which a pitch never gives): only the fill time
	// is left.
	r := mustRules(t, model.Qualify{Weights: map[string]int{CodeVendorPitch: 0, CodeFillTooFast: 20,
		CodeModelOffer: 0, CodeNoEvidence: 0}})
	l := realLead()
	l.Message = "We offer SEO services and link building."
	l.FillMS = ms(1500)
	d := r.Score(&l, Context{Country: "TR", FillBy: FillByBackend})
	if slices.Contains(codesOf(d), CodeVendorPitch) {
		t.Errorf("weight 0 must turn the rule off: %v", codesOf(d))
	}
	if x := reasonOf(d, CodeFillTooFast); x == nil || x.Points != 20 {
		t.Errorf("FILL_TOO_FAST = %+v, want 20 points", x)
	}
	if d.Verdict != model.VerdictClean {
		t.Errorf("verdict %s", d.Verdict)
	}
	if r.Weight(CodeFillTooFast) != 20 || r.Weight(CodeHoneypot) != 100 || r.Weight("NOPE") != 0 {
		t.Error("Weight")
	}
}

func TestSitePhrases(t *testing.T) {
	r := mustRules(t, model.Qualify{Phrases: map[string]map[string][]string{
		ListVendor: {"tr": {"tanıtım videosu", "drone çekim*"}},
		ListJob:    {"de": {"Quereinsteiger"}},
	}})
	l := realLead()
	l.Message = "Firmanız için TANITIM VİDEOSU ve drone çekimi yapıyoruz."
	d := r.Score(&l, Context{Country: "TR"})
	x := reasonOf(d, CodeVendorPitch)
	if x == nil || !reflect.DeepEqual(x.Evidence["phrases"].([]string)[:2], []string{"tanıtım videosu", "drone çekim*"}) {
		t.Fatalf("vendor reason %+v", x)
	}
	if d.Verdict != model.VerdictJunk {
		t.Errorf("verdict %s %d", d.Verdict, d.Score)
	}
	l.Message = "Ich bin Quereinsteiger."
	if d := r.Score(&l, Context{Country: "TR"}); reasonOf(d, CodeJobApplication) == nil {
		t.Errorf("site job phrase not found: %v", codesOf(d))
	}
	// Another site does not see them.
	if d := mustRules(t, model.Qualify{}).Score(&l, Context{Country: "TR"}); reasonOf(d, CodeJobApplication) != nil {
		t.Errorf("phrases leaked between sites: %v", codesOf(d))
	}
}

func TestNewInvalid(t *testing.T) {
	tests := []struct {
		name string
		s    model.Qualify
		key  string
	}{
		{"review above junk", model.Qualify{ReviewFrom: 80}, "qualify.review_from"},
		{"junk over 100", model.Qualify{JunkFrom: 101}, "qualify.junk_from"},
		{"negative fill", model.Qualify{MinFillMS: -1}, "qualify.min_fill_ms"},
		{"negative window", model.Qualify{DuplicateWindow: model.Duration(-time.Hour)}, "qualify.duplicate_window"},
		{"timeout 7 days", model.Qualify{ReviewTimeout: model.Duration(7 * 24 * time.Hour)}, "qualify.review_timeout"},
		{"unknown code", model.Qualify{Weights: map[string]int{"FAST": 10}}, "qualify.weights.FAST"},
		{"weight range", model.Qualify{Weights: map[string]int{CodeHoneypot: 101}}, "qualify.weights.HONEYPOT"},
		{"evidence code is no rule", model.Qualify{Weights: map[string]int{CodeOwnerJunk: 10}}, "qualify.weights.OWNER_JUNK"},
		{"unknown list", model.Qualify{Phrases: map[string]map[string][]string{"spam": {"en": {"x"}}}}, "qualify.phrases.spam"},
		{"bad language", model.Qualify{Phrases: map[string]map[string][]string{"vendor": {"Turkish": {"x"}}}}, "qualify.phrases.vendor.Turkish"},
		{"empty phrase", model.Qualify{Phrases: map[string]map[string][]string{"vendor": {"tr": {" * "}}}}, "qualify.phrases.vendor.tr[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.s, nil)
			if err == nil || !strings.Contains(err.Error(), tt.key+":") {
				t.Errorf("err = %v, want one naming %s", err, tt.key)
			}
		})
	}
	// Every problem is reported at once.
	_, err := New(model.Qualify{JunkFrom: 200, MinFillMS: -5}, nil)
	if err == nil || !strings.Contains(err.Error(), "junk_from") || !strings.Contains(err.Error(), "min_fill_ms") {
		t.Errorf("err = %v", err)
	}
}

func TestDefaultsAndDurations(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	if r.DuplicateWindow() != 7*24*time.Hour || r.ReviewTimeout() != 6*24*time.Hour+20*time.Hour {
		t.Errorf("defaults %s %s", r.DuplicateWindow(), r.ReviewTimeout())
	}
	if a, b := r.Thresholds(); a != 30 || b != 70 {
		t.Errorf("thresholds %d %d", a, b)
	}
	r = mustRules(t, model.Qualify{DuplicateWindow: model.Duration(72 * time.Hour), ReviewTimeout: model.Duration(5 * 24 * time.Hour)})
	if r.DuplicateWindow() != 72*time.Hour || r.ReviewTimeout() != 5*24*time.Hour {
		t.Errorf("settings %s %s", r.DuplicateWindow(), r.ReviewTimeout())
	}
}

func TestScorePure(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	l := realLead()
	l.Message = "We offer SEO and web design, see www.x.io"
	l.FillMS = ms(700)
	c := Context{Country: "TR", Previous: &Previous{LeadID: "L9", Match: "email"}}
	a, _ := json.Marshal(r.Score(&l, c))
	for range 5 {
		b, _ := json.Marshal(r.Score(&l, c))
		if string(a) != string(b) {
			t.Fatalf("not pure:\n%s\n%s", a, b)
		}
	}
	if d := r.Score(&l, c); d.Score != 100 {
		t.Errorf("score must clamp at 100, got %d", d.Score)
	}
}

func TestApplyEvidence(t *testing.T) {
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	review := model.Decision{Verdict: model.VerdictReview, Score: 35, Reasons: []model.Reason{{Code: CodePriceOnly, Points: 35}}, RulesVersion: RulesVersion, DecidedBy: model.DecidedByRules}
	junk := model.Decision{Verdict: model.VerdictJunk, Score: 75, Reasons: []model.Reason{{Code: CodeVendorPitch, Points: 75}}, DecidedBy: model.DecidedByRules}
	clean := model.Decision{Verdict: model.VerdictClean, DecidedBy: model.DecidedByRules}
	ownerJunk := model.Decision{Verdict: model.VerdictJunk, DecidedBy: model.DecidedByOwner}
	tests := []struct {
		name    string
		cur     model.Decision
		ev      Evidence
		verdict model.Verdict
		by      string
		changed bool
		code    string
	}{
		{"whatsapp moves review to clean", review, Evidence{Type: EvidenceWhatsAppReply, At: at}, model.VerdictClean, model.DecidedByEvidence, true, CodeEvidenceWhatsApp},
		{"long call moves review to clean", review, Evidence{Type: EvidenceCall, DurationS: 75, At: at}, model.VerdictClean, model.DecidedByEvidence, true, CodeEvidenceCall},
		{"60 s call is enough", review, Evidence{Type: EvidenceCall, DurationS: 60}, model.VerdictClean, model.DecidedByEvidence, true, CodeEvidenceCall},
		{"short call changes nothing", review, Evidence{Type: EvidenceCall, DurationS: 59}, model.VerdictReview, model.DecidedByRules, false, ""},
		{"whatsapp does not clean rules junk", junk, Evidence{Type: EvidenceWhatsAppReply}, model.VerdictJunk, model.DecidedByRules, false, ""},
		{"call does not clean rules junk", junk, Evidence{Type: EvidenceCall, DurationS: 600}, model.VerdictJunk, model.DecidedByRules, false, ""},
		{"owner customer reverses junk", junk, Evidence{Type: EvidenceCustomer, At: at}, model.VerdictClean, model.DecidedByOwner, true, CodeOwnerCustomer},
		{"owner junk on review", review, Evidence{Type: EvidenceJunk}, model.VerdictJunk, model.DecidedByOwner, true, CodeOwnerJunk},
		{"owner junk on clean", clean, Evidence{Type: EvidenceJunk}, model.VerdictJunk, model.DecidedByOwner, true, CodeOwnerJunk},
		{"owner confirms clean", clean, Evidence{Type: EvidenceCustomer}, model.VerdictClean, model.DecidedByOwner, false, CodeOwnerCustomer},
		{"evidence does not override the owner", ownerJunk, Evidence{Type: EvidenceWhatsAppReply}, model.VerdictJunk, model.DecidedByOwner, false, ""},
		{"owner changes their mind", ownerJunk, Evidence{Type: EvidenceCustomer}, model.VerdictClean, model.DecidedByOwner, true, CodeOwnerCustomer},
		{"owner repeats themself", ownerJunk, Evidence{Type: EvidenceJunk}, model.VerdictJunk, model.DecidedByOwner, false, ""},
		{"unknown type", review, Evidence{Type: "sms"}, model.VerdictReview, model.DecidedByRules, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(tt.cur.Reasons)
			got, changed := ApplyEvidence(tt.cur, tt.ev)
			if got.Verdict != tt.verdict || got.DecidedBy != tt.by || changed != tt.changed {
				t.Errorf("got %s by %s changed=%v, want %s by %s changed=%v", got.Verdict, got.DecidedBy, changed, tt.verdict, tt.by, tt.changed)
			}
			if len(tt.cur.Reasons) != before {
				t.Error("cur was changed")
			}
			if tt.code != "" {
				last := got.Reasons[len(got.Reasons)-1]
				if last.Code != tt.code || last.Points != 0 || last.Message == "" {
					t.Errorf("last reason %+v, want %s", last, tt.code)
				}
				if got.Score != tt.cur.Score {
					t.Errorf("score changed to %d", got.Score)
				}
			} else if len(got.Reasons) != before {
				t.Errorf("reasons %v", codesOf(got))
			}
		})
	}
}

func TestEvidenceValidate(t *testing.T) {
	for _, e := range []Evidence{{Type: "whatsapp_reply"}, {Type: "call", DurationS: 75}, {Type: "customer"}, {Type: "junk"}} {
		if err := e.Validate(); err != nil {
			t.Errorf("%+v: %v", e, err)
		}
	}
	for _, e := range []Evidence{{Type: "sms"}, {Type: ""}, {Type: "call", DurationS: -1}} {
		if err := e.Validate(); err == nil {
			t.Errorf("%+v: want an error", e)
		}
	}
}

func TestMessage(t *testing.T) {
	ev := map[string]any{"fill_ms": int64(830), "min_ms": int64(2000)}
	if got := Message(CodeFillTooFast, "en", ev); got != "The form was filled in 830 ms; a person needs at least 2000 ms." {
		t.Errorf("en: %q", got)
	}
	if got := Message(CodeFillTooFast, "tr", ev); !strings.Contains(got, "830 ms") || !strings.Contains(got, "doldurulmuş") {
		t.Errorf("tr: %q", got)
	}
	// Evidence read back from JSON has float64 numbers and []any lists.
	var back map[string]any
	_ = json.Unmarshal([]byte(`{"fill_ms": 830, "min_ms": 2000, "phrases": ["seo", "backlink*"]}`), &back)
	if got := Message(CodeFillTooFast, "de", back); !strings.Contains(got, "830 ms") {
		t.Errorf("json evidence: %q", got)
	}
	// A phrase pattern reads as a word cut short; the evidence keeps it.
	if got := Message(CodeVendorPitch, "en", back); !strings.Contains(got, "seo, backlink…") {
		t.Errorf("list evidence: %q", got)
	}
	if got := Message(CodeJobApplication, "en", map[string]any{"phrases": []string{"*bewerbung", "pozisyon"}}); !strings.Contains(got, "(…bewerbung, pozisyon)") {
		t.Errorf("a suffix pattern: %q", got)
	}
	// One of a thing is singular in English; Turkish needs no plural.
	one := map[string]any{"links": 1, "words": 1}
	if got := Message(CodeMostlyLinks, "en", one); !strings.Contains(got, "1 link, 1 word)") {
		t.Errorf("singular: %q", got)
	}
	if got := Message(CodeMostlyLinks, "en", map[string]any{"links": 11, "words": 21}); !strings.Contains(got, "11 links, 21 words") {
		t.Errorf("plural: %q", got)
	}
	if got := Message(CodeTextModel, "en", map[string]any{"like": 1, "words": []string{"seo"}}); !strings.Contains(got, "like 1 lead you marked junk") {
		t.Errorf("singular: %q", got)
	}
	if Message("NOPE", "en", nil) != "NOPE" {
		t.Error("unknown code")
	}
	for _, rule := range DefaultRules() {
		for _, lang := range []string{"en", "tr"} {
			if m := messages[rule.Code][0]; m == "" || messages[rule.Code][1] == "" {
				t.Errorf("%s: no %s message", rule.Code, lang)
			}
		}
	}
}

func TestLists(t *testing.T) {
	l := DefaultLists()
	if l != DefaultLists() {
		t.Error("DefaultLists must be parsed once")
	}
	for _, list := range ListNames() {
		for _, lang := range []string{"tr", "en", "de"} {
			if len(l.Phrases(list, lang)) == 0 {
				t.Errorf("no %s phrases in %s", list, lang)
			}
		}
	}
	if !l.IsDisposable("mailinator.com") || !l.IsDisposable("MAILINATOR.COM") || l.IsDisposable("gmail.com") {
		t.Error("embedded disposable list")
	}
	path := filepath.Join(t.TempDir(), "newer.conf")
	if err := os.WriteFile(path, []byte("# newer list\nfresh-burner.net\n\nburner.test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l2, err := l.WithDisposableFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !l2.IsDisposable("fresh-burner.net") || l2.IsDisposable("mailinator.com") || !l.IsDisposable("mailinator.com") {
		t.Error("WithDisposableFile must replace the set in a copy")
	}
	r, err := New(model.Qualify{}, l2)
	if err != nil {
		t.Fatal(err)
	}
	lead := realLead()
	lead.Email = "a.b@fresh-burner.net"
	if d := r.Score(&lead, Context{Country: "TR"}); reasonOf(d, CodeEmailDisposable) == nil {
		t.Errorf("newer list not used: %v", codesOf(d))
	}
	if _, err := LoadDisposable(strings.NewReader("not a domain\n")); err == nil {
		t.Error("LoadDisposable must refuse junk lines")
	}
	if _, err := l.WithDisposableFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file")
	}
	l3, err := l.WithPhrases(ListVendor, "tr", []string{"drone çekimi"})
	if err != nil || !slices.Contains(l3.Phrases(ListVendor, "tr"), "drone çekimi") || slices.Contains(l.Phrases(ListVendor, "tr"), "drone çekimi") {
		t.Errorf("WithPhrases: %v", err)
	}
	if _, err := l.WithPhrases("spam", "tr", nil); err == nil {
		t.Error("WithPhrases unknown list")
	}
}

func BenchmarkScore(b *testing.B) {
	r := mustRules(b, model.Qualify{})
	cases := map[string]model.Lead{
		"clean": realLead(),
		"vendor": {
			Name: "Daniel from RankUp", Email: "daniel@rankupdigital.co", Phone: "+1 415 226 7790", FillMS: ms(27000),
			Message: "Hi, I noticed your website isn't ranking on the first page of Google. We offer affordable SEO services and link building. Can I send you a free audit? https://rankup.example",
		},
		"grey": {Name: "Yusuf", Phone: "0542 916 03 78", Message: "Merhaba fiyat bilgisi alabilir miyim", FillMS: ms(9100)},
	}
	for name, l := range cases {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			c := Context{Country: "TR"}
			for b.Loop() {
				_ = r.Score(&l, c)
			}
		})
	}
}

func BenchmarkCorpus(b *testing.B) {
	r := mustRules(b, model.Qualify{})
	corpus := loadCorpus(b)
	ctxs := make([]Context, len(corpus))
	for i, e := range corpus {
		ctxs[i] = e.context()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		j := i % len(corpus)
		_ = r.Score(&corpus[j].Lead, ctxs[j])
	}
}

func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_, _ = New(model.Qualify{}, nil)
	}
}

// A phone judged ahead with CheckPhone gives the decision Score reaches
// alone; a check of another number or country is ignored.
func TestScorePhoneCheckedAhead(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	for _, phone := range []string{"0532 418 27 63", "555 555 55 55", "0900 412 47 19", "not a number"} {
		l := realLead()
		l.Phone = phone
		alone := r.Score(&l, Context{Country: "TR"})
		for name, pc := range map[string]*PhoneCheck{
			"same":          CheckPhone(" "+phone, "tr"),
			"other number":  CheckPhone("0212 244 55 66", "TR"),
			"other country": CheckPhone(phone, "DE"),
		} {
			got := r.Score(&l, Context{Country: "TR", Phone: pc})
			if !reflect.DeepEqual(got, alone) {
				t.Errorf("%s, check of %s: %+v, want %+v", phone, name, got, alone)
			}
		}
	}
}

// TestEveryCodeHasBothMessages reads every reason code this package
// declares and wants a message for it in English and in Turkish, each
// different and none a bare code: the owner reads these, in their language.
func TestEveryCodeHasBothMessages(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	codes := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Code") || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						codes[name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
	}
	if len(codes) < 30 {
		t.Fatalf("found only %d codes: the scan is broken", len(codes))
	}
	for name, code := range codes {
		m, ok := messages[code]
		if !ok {
			t.Errorf("%s (%s): no message", name, code)
			continue
		}
		if m[0] == "" || m[1] == "" || m[0] == m[1] {
			t.Errorf("%s: English %q, Turkish %q", code, m[0], m[1])
		}
		if Label(code, "en") == code || Label(code, "tr") == code || Label(code, "en") == Label(code, "tr") {
			t.Errorf("%s: label %q, %q", code, Label(code, "en"), Label(code, "tr"))
		}
	}
	for key, m := range messages {
		for i, lang := range []string{"en", "tr"} {
			if m[i] == "" || regexp.MustCompile(`\b[A-Z]{3,}_[A-Z_]+\b`).MatchString(m[i]) {
				t.Errorf("%s in %s: %q", key, lang, m[i])
			}
		}
	}
	// A repeat names how it was recognised, in the reader's language, and
	// no internal lead id.
	ev := map[string]any{"lead_id": "ld_01HX", "match": "phone"}
	for lang, want := range map[string]string{"en": "the same phone number", "tr": "aynı telefon numarası"} {
		if got := Message(CodeDuplicate, lang, ev); !strings.Contains(got, want) || strings.Contains(got, "ld_") {
			t.Errorf("%s: %q", lang, got)
		}
	}
}
