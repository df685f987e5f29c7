package qualify

import (
	"slices"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/model"
)

// TestCleanOnlyOnEvidence: a lead is clean when something says it is a
// customer's request; a lead nothing understands waits, in every language,
// with a reason that says why.
func TestCleanOnlyOnEvidence(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	l := realLead()
	d := r.Score(&l, Context{Country: "TR"})
	if d.Verdict != model.VerdictClean {
		t.Fatalf("a request: %s %v", d.Verdict, codesOf(d))
	}
	if x := reasonOf(d, CodeModelRequest); x != nil && x.Points != 0 || x != nil && !strings.HasPrefix(x.Message, "Reads like a customer's request") {
		t.Errorf("MODEL_REQUEST: %+v", x)
	}
	for _, msg := range []string{
		"Hyvää päivää, haluaisin tietää lisää teidän palveluistanne ja aikatauluista.", // Finnish: no corpus
		"Jó napot, érdeklődni szeretnék a szolgáltatásaikról.",                         // Hungarian
		"ok",
		"Hmm",
	} {
		l := realLead()
		l.Message = msg
		d := r.Score(&l, Context{Country: "TR"})
		if d.Verdict == model.VerdictClean {
			t.Errorf("%q: clean on no evidence: %v", msg, codesOf(d))
		}
	}
	// The rule says why in plain words, in English and Turkish.
	l.Message = "Hyvää päivää, haluaisin tietää lisää teidän palveluistanne ja aikatauluista."
	d = r.Score(&l, Context{Country: "TR"})
	if x := reasonOf(d, CodeNoEvidence); x != nil {
		if x.Points != 0 || !strings.Contains(x.Message, "held until the person answers") ||
			!strings.Contains(Message(x.Code, "tr", x.Evidence), "bekletilir") {
			t.Errorf("NO_REQUEST_EVIDENCE: %+v / %s", x, Message(x.Code, "tr", x.Evidence))
		}
	}
	// A site that turns the rule off gets the old judgement back.
	off := mustRules(t, model.Qualify{Weights: map[string]int{CodeNoEvidence: 0}})
	l.Message = "ok"
	if d := off.Score(&l, Context{Country: "TR"}); slices.Contains(codesOf(d), CodeNoEvidence) {
		t.Errorf("weight 0: %v", codesOf(d))
	}
}

// TestGreyStaysGrey: nothing the model or the site's text model says lifts
// the advertiser's grey area (a price question, a message that says
// nothing) or a measured fill under two seconds.
func TestGreyStaysGrey(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	// The owner confirmed, 40 times, that leads with these words are real
	// customers: the live text model leans hard toward a customer.
	var js []Judgement
	for range 40 {
		js = append(js, Judgement{Message: "fiyat ne kadar implant randevu"})
		js = append(js, Judgement{Message: "seo hizmeti sunuyoruz", Junk: true})
	}
	text := &Text{Model: TrainText(js, trainedAt), MaxPoints: MaxTextMaxPoints}
	for _, msg := range []string{"implant fiyat ne kadar", "Fiyat?", "merhaba", "¿Cuánto cuesta?", "Quel est le prix ?",
		"Quanto costa?", "Qual o preço?", "كم السعر؟", "Was kostet das?", "price?"} {
		l := realLead()
		l.Message = msg
		d := r.Score(&l, Context{Country: "TR", Text: text})
		if d.Verdict != model.VerdictReview {
			t.Errorf("%q: %s %v, want review", msg, d.Verdict, codesOf(d))
		}
	}
	// A request the model is sure of, from a form filled in 0.8 s, is junk.
	l := realLead()
	l.FillMS = ms(800)
	d := r.Score(&l, Context{Country: "TR", Text: text})
	if d.Verdict != model.VerdictJunk || reasonOf(d, CodeFillTooFast) == nil {
		t.Errorf("fast fill: %s %v", d.Verdict, codesOf(d))
	}
}

// TestGreyEveryLanguage: a price question, a greeting or "info please" is
// recognised by the rules in every language the product supports.
func TestGreyEveryLanguage(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	for msg, code := range map[string]string{
		"Fiyat nedir?":                   CodePriceOnly,
		"How much?":                      CodePriceOnly,
		"Was kostet das?":                CodePriceOnly,
		"¿Cuánto cuesta?":                CodePriceOnly,
		"Hola, ¿precio?":                 CodePriceOnly,
		"Bonjour, quel est le prix ?":    CodePriceOnly,
		"Quanto costa?":                  CodePriceOnly,
		"Olá, qual o preço?":             CodePriceOnly,
		"كم السعر؟":                      CodePriceOnly,
		"بكم؟":                           CodePriceOnly,
		"\u200fكم السعر؟\u200f":          CodePriceOnly, // right-to-left marks
		"\u202bالسلام عليكم\u202c":       CodeNoMessage,
		"Merhaba iyi günler":             CodeNoMessage,
		"Hola, buenas tardes":            CodeNoMessage,
		"Bonjour, plus d'infos svp":      CodeNoMessage,
		"Ciao, vorrei informazioni":      CodeNoMessage,
		"Olá, bom dia, quero informação": CodeNoMessage,
		"السلام عليكم":                   CodeNoMessage,
		"مرحبا، أريد معلومات من فضلك": CodeNoMessage,
		"Más información por favor":   CodeNoMessage,
	} {
		l := realLead()
		l.Message = msg
		d := r.Score(&l, Context{Country: "TR"})
		if d.Verdict != model.VerdictReview || reasonOf(d, code) == nil {
			t.Errorf("%q: %s %v, want review with %s", msg, d.Verdict, codesOf(d), code)
		}
	}
}

// TestDigitsEveryScript: a phone typed in Arabic-Indic, Persian or
// full-width digits is the number it says, and digits in a message count as
// digits.
func TestDigitsEveryScript(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	for phone, country := range map[string]string{
		"٠٥٠٣١٨٢٧٤٦":        "SA",
		"+٩٦٦ ٥٠ ٣١٨ ٢٧٤٦":  "SA",
		"۰۵۰ ۳۱۸ ۲۷۴۶":      "AE",
		"٠١٠٠ ٤٨٣ ٢٧١٩":     "EG",
		"０５３２ ４１８ ２７ ６３":    "TR",
		"＋９０ ５３２ ４１８ ２７ ６３": "TR",
		"۰۹۱۲ ۴۸۳ ۲۷۱۹":     "IR",
		"05٣2 418 27 63":    "TR", // digits of two scripts in one number
	} {
		if pc := CheckPhone(phone, country); pc.result.code != "" || !pc.result.usable {
			t.Errorf("%s (%s): %s %v", phone, country, pc.result.code, pc.result.evidence)
		}
		l := realLead()
		l.Phone = phone
		d := r.Score(&l, Context{Country: country})
		for _, c := range codesOf(d) {
			if strings.HasPrefix(c, "PHONE_") || c == CodeNoValidContact {
				t.Errorf("%s: %v", phone, codesOf(d))
			}
		}
	}
	// A pattern in other digits is still a pattern.
	if pc := CheckPhone("٠٥٥٥ ٥٥٥ ٥٥ ٥٥", "TR"); pc.result.code == "" {
		t.Error("555 555 55 55 in Arabic-Indic digits passed")
	}
}

// TestCompanyFormInName: a company's form in the name field is a sign of
// who wrote, not typing without meaning.
func TestCompanyFormInName(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	for _, name := range []string{"Nordlicht Media GmbH", "Brightpath Ltd", "Soluciones Web S.L.", "Agence Lumière SARL",
		"Yıldız Yazılım A.Ş.", "GmbH", "Rossi Impianti S.r.l.", "Construtora Alves Ltda",
		"Kraft Bau UG (haftungsbeschränkt)", "Zahnarztpraxis Dr. Weiß GmbH & Co. KG", "Lumière SAS", "Rossi S.p.A.",
		"Soluciones S.A. de C.V.", "Ribeiro Lda.", "Jansen B.V.", "Nowak Sp. z o.o.", "Özkan Tic. Ltd. Şti.", "شركة النور ذ.م.م"} {
		l := realLead()
		l.Name = name
		if d := r.Score(&l, Context{Country: "TR"}); reasonOf(d, CodeGibberish) != nil {
			t.Errorf("%q: %v", name, reasonOf(d, CodeGibberish).Evidence)
		}
	}
	// Mash is still mash, in any layout.
	for _, name := range []string{"asdfgh", "qwqwqw"} {
		l := realLead()
		l.Name = name
		if d := r.Score(&l, Context{Country: "TR"}); reasonOf(d, CodeGibberish) == nil {
			t.Errorf("%q: no GIBBERISH (%v)", name, codesOf(d))
		}
	}
}

// TestModelJunk: an offer, a job seeker and keyboard mash the model is sure
// of are junk, with their evidence quoted from the message, in English and
// Turkish.
func TestModelJunk(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	for msg, code := range map[string]string{
		"Hola, somos una agencia de marketing digital. Conseguimos 40 pacientes nuevos al mes para clínicas dentales como la suya, ¿le llamamos?": CodeModelOffer,
		"Bonjour, je suis étudiante en troisième année de kiné et je cherche un stage de six semaines dans votre cabinet à partir de mars.":       CodeModelJob,
	} {
		l := realLead()
		l.Message = msg
		d := r.Score(&l, Context{Country: "TR"})
		x := reasonOf(d, code)
		if d.Verdict == model.VerdictClean || x == nil {
			t.Errorf("%q: %s %v, want %s", msg, d.Verdict, codesOf(d), code)
			continue
		}
		q, _ := x.Evidence["quote"].(string)
		if q == "" || !strings.Contains(msg, q) {
			t.Errorf("%q: quote %q", msg, q)
		}
		if tr := Message(code, "tr", x.Evidence); !strings.Contains(tr, q) || strings.Contains(tr, "Reads") {
			t.Errorf("Turkish message: %s", tr)
		}
	}
}

// TestOwnerWordIsEvidence: the site's live text model leaning toward the
// leads the owner marked real customers is evidence of a request, where the
// built-in model cannot read the language.
func TestOwnerWordIsEvidence(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	var js []Judgement
	for range 20 {
		js = append(js, Judgement{Message: "Hyvää päivää, haluaisin varata ajan hammastarkastukseen ensi viikolla"},
			Judgement{Message: "Tarjoamme hakukoneoptimointia ja mainontaa yrityksellenne", Junk: true})
	}
	text := &Text{Model: TrainText(js, trainedAt)}
	l := realLead()
	l.Message = "Hyvää päivää, haluaisin varata ajan hammastarkastukseen"
	if d := r.Score(&l, Context{Country: "TR"}); d.Verdict == model.VerdictClean {
		t.Fatalf("without the owner's word: %s %v", d.Verdict, codesOf(d))
	}
	d := r.Score(&l, Context{Country: "TR", Text: text})
	if d.Verdict != model.VerdictClean || reasonOf(d, CodeTextModel) == nil {
		t.Errorf("with the owner's word: %s %v", d.Verdict, codesOf(d))
	}
	// In shadow it is no evidence yet.
	shadow := &Text{Model: TrainText(js[:MinJudged-1], trainedAt)}
	if d := r.Score(&l, Context{Country: "TR", Text: shadow}); d.Verdict == model.VerdictClean {
		t.Errorf("in shadow: %s %v", d.Verdict, codesOf(d))
	}
}

// TestSureRequestOutweighsPhrase: one pitch or job phrase in a message the
// model is sure is a customer's request is shown but not counted; with a
// company in the name, or in a real pitch, the phrase keeps its weight.
func TestSureRequestOutweighsPhrase(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	l := realLead()
	l.Message = "My mother passed in May and left no will. My brother and I need advice on the estate and her flat. Could we book a consultation next week?"
	d := r.Score(&l, Context{Country: "TR"})
	x := reasonOf(d, CodeVendorPitch)
	if d.Verdict != model.VerdictClean || x == nil || x.Points != 0 || !strings.Contains(x.Message, "not counted") ||
		!strings.Contains(Message(x.Code, "tr", x.Evidence), "sayılmadı") {
		t.Fatalf("a sure request with %q: %s %v %+v", "we book", d.Verdict, codesOf(d), x)
	}
	// A company in the name is more than one phrase.
	l.Name = "Ayşe Yılmaz - Nova Dijital"
	if d := r.Score(&l, Context{Country: "TR"}); d.Verdict == model.VerdictClean {
		t.Errorf("with a company in the name: %s %v", d.Verdict, codesOf(d))
	}
	// A pitch stays a pitch.
	l = realLead()
	l.Message = "We book 20 new patients a month for clinics like yours, free demo this week?"
	if d := r.Score(&l, Context{Country: "TR"}); d.Verdict == model.VerdictClean {
		t.Errorf("a pitch: %s %v", d.Verdict, codesOf(d))
	}
}

// TestDoubtfulJunkWaits: the model's confident reading of a job seeker or
// an offer, in a message it still gives a request one chance in five, is
// only a best guess: the lead waits for review. A plain job seeker stays
// junk.
func TestDoubtfulJunkWaits(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	for _, msg := range []string{
		"I am a qualified electrician moving to Dublin, need a solicitor to check my work contract, what do you charge?",
		"Experienced chef, 15 years, need advice on my employment contract, my boss owes me wages",
	} {
		l := realLead()
		l.Message = msg
		d := r.Score(&l, Context{Country: "TR"})
		if d.Verdict != model.VerdictReview || reasonOf(d, CodeModelJob) == nil && reasonOf(d, CodeModelOffer) == nil {
			t.Errorf("%q: %s %v", msg, d.Verdict, codesOf(d))
		}
	}
	l := realLead()
	l.Message = "Kitchen fitter looking for work, can do everything from first fix to worktops"
	if d := r.Score(&l, Context{Country: "TR"}); d.Verdict != model.VerdictJunk {
		t.Errorf("a job seeker: %s %v", d.Verdict, codesOf(d))
	}
}

// TestDisputedPhrasesReview: pitch or job phrases alone never make junk a
// message the model reads as a customer's request; a pitch the model reads
// as one stays junk.
func TestDisputedPhrasesReview(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	l := realLead()
	l.Message = "dizim ağrıyor, personal trainer ile haftada 3 gün çalışmak istiyorum, akşam 6 gibi uygun mu"
	d := r.Score(&l, Context{Country: "TR"})
	x := reasonOf(d, CodeJobApplication)
	if d.Verdict != model.VerdictReview || x == nil || x.Evidence["variant"] != "disputed" ||
		!strings.Contains(x.Message, "not junk") || !strings.Contains(Message(x.Code, "tr", x.Evidence), "çöp değil") {
		t.Fatalf("a request with a job seeker's words: %s %v %+v", d.Verdict, codesOf(d), x)
	}
	l.Message = "We are a digital agency, we book 20 new patients a month for clinics like yours, free demo?"
	if d := r.Score(&l, Context{Country: "TR"}); d.Verdict != model.VerdictJunk {
		t.Errorf("a pitch: %s %v", d.Verdict, codesOf(d))
	}
}

// TestGreyWithoutContactWaits: a greeting or a price question with no
// phone and no e-mail waits in review, as the grey area does; mash with no
// contact, or a fast fill, stays junk.
func TestGreyWithoutContactWaits(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	for _, msg := range []string{"merhaba", "Preis?", "info please"} {
		l := realLead()
		l.Phone, l.Email, l.Message = "", "", msg
		d := r.Score(&l, Context{Country: "TR"})
		if d.Verdict != model.VerdictReview || !slices.Contains(codesOf(d), CodePhoneMissing) {
			t.Errorf("%q without contact: %s %v", msg, d.Verdict, codesOf(d))
		}
		l.FillMS = ms(400)
		if d := r.Score(&l, Context{Country: "TR"}); d.Verdict != model.VerdictJunk {
			t.Errorf("%q without contact, fast fill: %s %v", msg, d.Verdict, codesOf(d))
		}
	}
	l := realLead()
	l.Phone, l.Email, l.Message = "", "", "sdgsdg sdgsdg 4545"
	if d := r.Score(&l, Context{Country: "TR"}); d.Verdict != model.VerdictJunk {
		t.Errorf("mash without contact: %s %v", d.Verdict, codesOf(d))
	}
}

// TestQuoteIsEvidence: a message that asks for a quote or a visit is
// evidence of a request where the model leans to one (80% or more) without
// being sure; a quote asked alone stays a price question, and a supplier
// offering a quote stays junk.
func TestQuoteIsEvidence(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	const org = "We are a logistics company with 30 drivers. We would like an on-site first aid course for our team"
	for msg, want := range map[string]model.Verdict{
		org + ", please send a quote.": model.VerdictClean,
		org + ".":                      model.VerdictReview,
		"quote please":                 model.VerdictReview,
		"Preventivo?":                  model.VerdictReview,
		"We supply branded uniforms to clinics at trade prices, happy to send a quote for your team": model.VerdictJunk,
	} {
		l := realLead()
		l.Message = msg
		if d := r.Score(&l, Context{Country: "TR"}); d.Verdict != want {
			t.Errorf("%q: %s %v, want %s", msg, d.Verdict, codesOf(d), want)
		}
	}
}

// TestAgreeingReadingsJunk: the model's best guess of an offer and a
// pitch's phrase, each of which alone would only hold the lead, make it
// junk together; the model's reason says the phrases agree.
func TestAgreeingReadingsJunk(t *testing.T) {
	r := mustRules(t, model.Qualify{})
	l := realLead()
	l.Message = "Hi, I run a small SEO services agency, would love to help"
	d := r.Score(&l, Context{Country: "TR"})
	x := reasonOf(d, CodeModelOffer)
	if d.Verdict != model.VerdictJunk || x == nil || x.Evidence["variant"] != "agrees" {
		t.Fatalf("%s %v", d.Verdict, codesOf(d))
	}
	if !strings.Contains(x.Message, "phrases say so too") {
		t.Errorf("message %q", x.Message)
	}
}
