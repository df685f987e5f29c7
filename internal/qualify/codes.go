package qualify

import (
	"fmt"
	"strings"
)

// RulesVersion names the rule set; it is stored with every decision so a
// decision can be explained and replayed. Bump it whenever a rule, a default
// weight or a built-in list changes.
//
// 2026-12-04.1: the built-in intent model (MODEL_*), and clean only on
// evidence of a request (NO_REQUEST_EVIDENCE); digits of every script read
// as digits.
// 2026-12-05.1: the intent model intent-2 (n-grams across word boundaries,
// thresholds by cross-validation, a corpus of 5,109 training lines).
// 2026-12-05.2: the intent model intent-3 (offer and job confident on the
// probability of junk, thresholds allowing two requests in a thousand, the
// d-* held-out set now training: 5,775 lines).
// 2026-12-06.1: pitch and job phrases in Spanish, French, Italian,
// Portuguese and Arabic; the intent model intent-4 (the f-* held-out set now
// training: 6,323 lines).
// 2026-12-06.2: the site's own service words (SERVICE_NAMED); the intent
// model intent-5 (the start of the message as a feature, averaged weights,
// the g-* held-out set now training: 6,655 lines).
// 2026-12-06.3: the model's sure reading of a request (97%) outweighs a
// single pitch or job phrase.
// 2026-12-06.4: the model's junk reading is a best guess while a request
// keeps 20%.
// 2026-12-06.5: pitch or job phrases alone never make junk a message the
// model reads as a request.
// 2026-12-06.6: an offer or job reading is confident from 85% of junk.
// 2026-12-06.7: the grey area with no contact waits in review.
// 2026-12-06.8: a repeated unit is gibberish in any script.
// 2026-12-06.9: GIBBERISH counts the message twice.
// 2026-12-06.10: a sure request outweighs a single phrase from 98.5%, not 97%.
// 2026-12-06.11: a request read at 96% or more is confident whatever
// threshold training chose.
// 2026-12-06.12: the i-* held-out set trains (7,499 lines); a rare letter
// pair is a share of the corpus's letter pairs, not a count.
// 2026-12-06.13: asking for a quote or a visit is evidence of a request
// where the model reads one at 80% or more.
// 2026-12-06.14: the model's best guess of an offer or a job seeker and
// the phrases of a pitch or a job seeker that hold the lead together are
// junk.
const RulesVersion = "2026-12-06.14"

// The reason codes the rules give. They are stable: stored decisions, site
// weights and dashboards refer to them.
const (
	CodeHoneypot        = "HONEYPOT"
	CodeDuplicate       = "DUPLICATE"
	CodeTokenForged     = "TOKEN_FORGED"
	CodeTokenReplayed   = "TOKEN_REPLAYED"
	CodeTokenExpired    = "TOKEN_EXPIRED"
	CodeFillTooFast     = "FILL_TOO_FAST"
	CodeFillTimeMissing = "FILL_TIME_MISSING"
	CodePhoneInvalid    = "PHONE_INVALID"
	CodePhonePattern    = "PHONE_PATTERN"
	CodePhoneFictional  = "PHONE_FICTIONAL"
	CodePhonePremium    = "PHONE_PREMIUM"
	CodePhoneBusiness   = "PHONE_BUSINESS"
	CodePhoneMissing    = "PHONE_MISSING"
	CodeNoValidContact  = "NO_VALID_CONTACT"
	CodeEmailInvalid    = "EMAIL_INVALID"
	CodeEmailDisposable = "EMAIL_DISPOSABLE"
	CodeTestEntry       = "TEST_ENTRY"
	CodeGibberish       = "GIBBERISH"
	CodeVendorPitch     = "VENDOR_PITCH"
	CodeJobApplication  = "JOB_APPLICATION"
	CodeMessageHasLink  = "MESSAGE_HAS_LINK"
	CodeMostlyLinks     = "MOSTLY_LINKS"
	CodePriceOnly       = "PRICE_ONLY"
	CodeNoMessage       = "NO_MESSAGE"
)

// The reason codes ApplyEvidence adds (0 points: they explain a verdict
// change, they do not score).
const (
	CodeEvidenceWhatsApp = "EVIDENCE_WHATSAPP_REPLY"
	CodeEvidenceCall     = "EVIDENCE_CALL"
	CodeOwnerCustomer    = "OWNER_CUSTOMER"
	CodeOwnerJunk        = "OWNER_JUNK"
	// CodeCRMQualified is added when a stage from the site's CRM (any of
	// its meta.stages) makes a lead clean: the CRM met the person.
	CodeCRMQualified = "CRM_QUALIFIED"
)

// Rule describes one scoring rule: its code, default points, whether it
// forces junk, and whether it holds a lead at least in review whatever the
// thresholds.
type Rule struct {
	Code   string
	Points int
	Final  bool
	// AtLeastReview rules mark leads that must not be forwarded unconfirmed
	// (missing contact, the grey area) even if a site raises review_from.
	AtLeastReview bool
}

// ruleTable is the rule set in the order reasons are given.
var ruleTable = [...]Rule{
	{Code: CodeHoneypot, Points: 100, Final: true},
	{Code: CodeDuplicate, Points: 70, Final: true},
	{Code: CodeTokenForged, Points: 80},
	// A replayed token may be a person pressing back and sending again:
	// review alone, junk with anything else.
	{Code: CodeTokenReplayed, Points: 60},
	{Code: CodeTokenExpired, Points: 10},
	// Under two seconds no person filled the form: final when we measured
	// it (the form token, the tracker); a backend's figure gives its points,
	// junk by default, without being final.
	{Code: CodeFillTooFast, Points: 70, Final: true},
	// A missing time is no evidence either way: off unless a site gives it
	// a weight.
	{Code: CodeFillTimeMissing, Points: 0},
	{Code: CodePhoneInvalid, Points: 50},
	{Code: CodePhonePattern, Points: 70},
	{Code: CodePhoneFictional, Points: 70},
	{Code: CodePhonePremium, Points: 60},
	// A company line (Turkey's 444 and 850, toll-free, shared-cost) reaches
	// a switchboard, not a person: a supplier or a B2B enquiry, held for
	// review, not junk.
	{Code: CodePhoneBusiness, Points: 35},
	{Code: CodePhoneMissing, Points: 40, AtLeastReview: true},
	{Code: CodeNoValidContact, Points: 20, AtLeastReview: true},
	{Code: CodeEmailInvalid, Points: 40},
	// With a message of a few words it gives half as much again (75).
	{Code: CodeEmailDisposable, Points: 50},
	{Code: CodeTestEntry, Points: 70},
	// Each further field typed without meaning adds half again.
	{Code: CodeGibberish, Points: 50},
	// One strong phrase, or two weaker signs, is review; each further sign
	// adds half again (a strong phrase counts as two signs), so a phrase
	// and a sign, or three signs, are junk.
	{Code: CodeVendorPitch, Points: 50},
	{Code: CodeJobApplication, Points: 50},
	{Code: CodeMessageHasLink, Points: 20},
	// A message that is mostly links is spam.
	{Code: CodeMostlyLinks, Points: 70},
	// The grey area, whatever else the lead typed.
	{Code: CodePriceOnly, Points: 35, AtLeastReview: true},
	{Code: CodeNoMessage, Points: 35, AtLeastReview: true},
	// The built-in model (meaning.go): its weight when it is confident
	// (junk alone), a quarter when that is only its best guess.
	{Code: CodeModelOffer, Points: 70},
	{Code: CodeModelJob, Points: 70},
	{Code: CodeModelNonsense, Points: 70},
	// Clean only on evidence: a lead nothing shows to be a request waits.
	// It gives no points whatever its weight (waiting is no sign of junk,
	// and must not tip other reasons into junk): a weight of 0 turns it
	// off, any other leaves it on.
	{Code: CodeNoEvidence, Points: 1, AtLeastReview: true},
}

// DefaultRules returns the rule set with default points, in the order reasons are
// given.
func DefaultRules() []Rule { return append([]Rule(nil), ruleTable[:]...) }

func ruleIndex(code string) int {
	for i := range ruleTable {
		if ruleTable[i].Code == code {
			return i
		}
	}
	return -1
}

// messages holds each reason's message per language; {key} is replaced by
// the evidence value of that key.
var messages = map[string][2]string{ // code -> {en, tr}
	CodeHoneypot: {
		"A hidden field people cannot see was filled in (bots fill every field).",
		"Ziyaretçilerin görmediği gizli alan doldurulmuş (botlar her alanı doldurur).",
	},
	CodeDuplicate: {
		"The same person ({match}) already sent a lead before this one; this one repeats it.",
		"Aynı kişi ({match}) bundan önce de bir talep göndermiş; bu talep onun tekrarı.",
	},
	CodeTokenForged: {
		"The form token was not signed by this server.",
		"Form anahtarı bu sunucu tarafından imzalanmamış.",
	},
	CodeTokenReplayed: {
		"The form token was already used by another submission.",
		"Form anahtarı daha önce başka bir gönderimde kullanılmış.",
	},
	CodeTokenExpired: {
		"The form token had expired (the page was open for a long time).",
		"Form anahtarının süresi dolmuş (sayfa uzun süre açık kalmış).",
	},
	CodeFillTooFast: {
		"The form was filled in {fill_ms} ms; a person needs at least {min_ms} ms.",
		"Form {fill_ms} ms içinde doldurulmuş; bir insan en az {min_ms} ms harcar.",
	},
	CodeFillTooFast + "/" + FillSourceToken: {
		"The form was sent {fill_ms} ms after the page got its form token (our server's clock); a person needs at least {min_ms} ms.",
		"Form, sayfa form anahtarını aldıktan {fill_ms} ms sonra gönderilmiş (sunucumuzun saati); bir insan en az {min_ms} ms harcar.",
	},
	CodeFillTooFast + "/" + FillSourceTracker: {
		"The form was filled in {fill_ms} ms, measured by our tracker in the visitor's browser; a person needs at least {min_ms} ms.",
		"Form {fill_ms} ms içinde doldurulmuş (ziyaretçinin tarayıcısında izleyicimiz ölçtü); bir insan en az {min_ms} ms harcar.",
	},
	CodeFillTooFast + "/" + FillSourceBackend: {
		"The site's server reported the form was filled in {fill_ms} ms (its figure, not measured by us); a person needs at least {min_ms} ms.",
		"Sitenin sunucusu formun {fill_ms} ms içinde doldurulduğunu bildirdi (bizim ölçümümüz değil); bir insan en az {min_ms} ms harcar.",
	},
	CodeFillTimeMissing: {
		"The page did not report how long filling the form took.",
		"Formun ne kadar sürede doldurulduğu bilinmiyor.",
	},
	CodePhoneInvalid: {
		"The phone number is not a valid number ({problem}, region {region}).",
		"Telefon numarası geçerli değil ({problem}, bölge {region}).",
	},
	CodePhonePattern: {
		"The phone number is a made-up pattern ({pattern} in the {part}).",
		"Telefon numarası uydurma bir desen ({part}: {pattern}).",
	},
	CodePhoneFictional: {
		"The phone number is in a range reserved for films and examples ({range}).",
		"Telefon numarası film ve örnekler için ayrılmış bir aralıkta ({range}).",
	},
	CodePhonePremium: {
		"The phone number is a premium-rate line, not a person's.",
		"Telefon numarası kişisel değil, ücretli (premium) bir hat.",
	},
	CodePhoneBusiness: {
		"The phone number is a company line ({type}), not a person's.",
		"Telefon numarası kişisel değil, kurumsal bir hat ({type}).",
	},
	CodePhoneMissing: {
		"Neither a phone number nor an e-mail address was given.",
		"Ne telefon numarası ne de e-posta adresi verilmiş.",
	},
	CodeNoValidContact: {
		"No usable phone number or e-mail address: the person cannot be reached.",
		"Kullanılabilir bir telefon ya da e-posta yok: kişiye ulaşılamaz.",
	},
	CodeEmailInvalid: {
		"The e-mail address is impossible ({problem}).",
		"E-posta adresi geçersiz ({problem}).",
	},
	CodeEmailDisposable: {
		"The e-mail address is at a disposable e-mail provider ({domain}).",
		"E-posta adresi tek kullanımlık bir sağlayıcıda ({domain}).",
	},
	// With a message of a few words (scoreDisposableShort).
	CodeEmailDisposable + "/short": {
		"The e-mail address is at a disposable e-mail provider ({domain}) and the message has only {message_words} words.",
		"E-posta adresi tek kullanımlık bir sağlayıcıda ({domain}) ve mesaj yalnızca {message_words} kelime.",
	},
	CodeTestEntry: {
		"A test entry: {fields} ({words}).",
		"Deneme girişi: {fields} ({words}).",
	},
	CodeGibberish: {
		"Typed without meaning: {fields} ({kinds}).",
		"Anlamsız giriş: {fields} ({kinds}).",
	},
	CodeVendorPitch: {
		"The message reads like a sales pitch ({phrases}).",
		"Mesaj bir satış teklifi gibi ({phrases}).",
	},
	CodeJobApplication: {
		"The message reads like a job application ({phrases}).",
		"Mesaj bir iş başvurusu gibi ({phrases}).",
	},
	// A single phrase the model's sure reading of a request outweighs
	// (outweighPhrase): shown, not counted.
	CodeVendorPitch + ":outweighed": {
		"A phrase reads like a sales pitch ({phrases}), but the whole message reads like a customer's request ({request_p}% sure): not counted.",
		"Bir ifade satış teklifi gibi ({phrases}), ama mesajın tümü bir müşteri talebi gibi okunuyor (%{request_p} emin): sayılmadı.",
	},
	// Phrases the model disputes (disputePhrases): they hold the lead
	// for review, never make it junk alone.
	CodeVendorPitch + ":disputed": {
		"The message has a sales pitch's phrases ({phrases}), but the built-in model reads a customer's request ({request_p}%): held for review, not junk.",
		"Mesajda satış teklifi ifadeleri var ({phrases}), ama yerleşik model bir müşteri talebi okuyor (%{request_p}): çöp değil, incelemeye alındı.",
	},
	CodeJobApplication + ":disputed": {
		"The message has a job application's phrases ({phrases}), but the built-in model reads a customer's request ({request_p}%): held for review, not junk.",
		"Mesajda iş başvurusu ifadeleri var ({phrases}), ama yerleşik model bir müşteri talebi okuyor (%{request_p}): çöp değil, incelemeye alındı.",
	},
	CodeJobApplication + ":outweighed": {
		"A phrase reads like a job application ({phrases}), but the whole message reads like a customer's request ({request_p}% sure): not counted.",
		"Bir ifade iş başvurusu gibi ({phrases}), ama mesajın tümü bir müşteri talebi gibi okunuyor (%{request_p} emin): sayılmadı.",
	},
	CodeMessageHasLink: {
		"The message contains a link.",
		"Mesajda bağlantı (link) var.",
	},
	CodeMostlyLinks: {
		"The message is mostly links ({links} links, {words} words).",
		"Mesaj neredeyse yalnızca bağlantılardan oluşuyor ({links} bağlantı, {words} kelime).",
	},
	CodePriceOnly: {
		"Only asks for a price: held until the person answers (an e-mail address is no sign of intent).",
		"Yalnızca fiyat soruyor: kişi yanıt verene kadar bekletilir (e-posta adresi niyet göstermez).",
	},
	CodeNoMessage: {
		"Says nothing: held until the person answers (an e-mail address is no sign of intent).",
		"Bir şey yazmamış: kişi yanıt verene kadar bekletilir (e-posta adresi niyet göstermez).",
	},
	CodeEvidenceWhatsApp: {
		"The person replied on WhatsApp.",
		"Kişi WhatsApp'tan yanıt verdi.",
	},
	CodeEvidenceCall: {
		"A call of {duration_s} s took place.",
		"{duration_s} saniyelik bir görüşme yapıldı.",
	},
	CodeOwnerCustomer: {
		"The owner marked the lead as a real customer.",
		"İşletme sahibi talebi gerçek müşteri olarak işaretledi.",
	},
	CodeOwnerJunk: {
		"The owner marked the lead as junk.",
		"İşletme sahibi talebi çöp olarak işaretledi.",
	},
	CodeCRMQualified: {
		"The CRM reported the stage {stage}: the person is real.",
		"CRM {stage} aşamasını bildirdi: kişi gerçek.",
	},
	// The built-in model's reasons (meaning.go).
	CodeModelRequest: {
		"Reads like a customer's request ({p}% sure): “{quote}”.",
		"Müşteri talebi gibi okunuyor (%{p} emin): “{quote}”.",
	},
	CodeModelOffer: {
		"Reads like an offer to the business ({p}% sure): “{quote}”.",
		"İşletmeye yapılan bir teklif gibi okunuyor (%{p} emin): “{quote}”.",
	},
	CodeModelJob: {
		"Reads like someone offering themselves for work, a job or an internship ({p}% sure): “{quote}”.",
		"Kendini işe, staja öneren biri gibi okunuyor (%{p} emin): “{quote}”.",
	},
	CodeModelOffer + ":agrees": {
		"Reads like an offer to the business (its best guess, {p}%: “{quote}”), and a pitch's phrases say so too.",
		"İşletmeye yapılan bir teklif gibi okunuyor (en iyi tahmini, %{p}: “{quote}”); satış ifadeleri de bunu söylüyor.",
	},
	CodeModelJob + ":agrees": {
		"Reads like someone offering themselves for work (its best guess, {p}%: “{quote}”), and a job seeker's phrases say so too.",
		"Kendini işe öneren biri gibi okunuyor (en iyi tahmini, %{p}: “{quote}”); iş arayan ifadeleri de bunu söylüyor.",
	},
	CodeModelNonsense: {
		"Reads as typed without meaning ({p}% sure): “{quote}”.",
		"Anlamsız bir giriş gibi okunuyor (%{p} emin): “{quote}”.",
	},
	CodeServiceNamed: {
		"Names a service you sell (“{services}”) and reads like a request ({p}%): the evidence of a customer's request.",
		"Sattığınız bir hizmeti anıyor (“{services}”) ve talep gibi okunuyor (%{p}): müşteri talebinin kanıtı.",
	},
	CodeNoEvidence: {
		"Nothing shows a concrete request for the business's service yet (the built-in model's best guess: {class}, {p}%): held until the person answers.",
		"Henüz işletmenin hizmetine yönelik somut bir talep görünmüyor (yerleşik modelin tahmini: {class}, %{p}): kişi yanıt verene kadar bekletilir.",
	},
	CodeNoEvidence + ":grey": {
		"Reads like only a price question, a greeting or a request to be called, without a concrete need ({p}% sure: “{quote}”): held until the person answers.",
		"Yalnızca fiyat sorusu, selamlama ya da aranma isteği gibi okunuyor, somut bir ihtiyaç yok (%{p} emin: “{quote}”): kişi yanıt verene kadar bekletilir.",
	},
	CodeNoEvidence + ":unread": {
		"The message has no words to read, so nothing shows a request: held until the person answers.",
		"Mesajda okunacak kelime yok, bu yüzden talep görünmüyor: kişi yanıt verene kadar bekletilir.",
	},
	// The text model's reason (textmodel.go), one message per direction
	// and mode, chosen by the evidence's "variant".
	CodeTextModel: {
		"The message is like {like} leads you marked junk (words: {words}).",
		"Mesaj, çöp olarak işaretlediğiniz {like} talebe benziyor (kelimeler: {words}).",
	},
	CodeTextModel + ":customer": {
		"The message is like {like} leads you marked real customers (words: {words}).",
		"Mesaj, gerçek müşteri olarak işaretlediğiniz {like} talebe benziyor (kelimeler: {words}).",
	},
	CodeTextModel + ":customer_nothing": {
		"The message is like {like} leads you marked real customers (words: {words}); it gives 0 points, as it only takes back what the rules that read words gave, and they gave none.",
		"Mesaj, gerçek müşteri olarak işaretlediğiniz {like} talebe benziyor (kelimeler: {words}); 0 puan verir, çünkü yalnızca kelimeleri okuyan kuralların verdiği puanı geri alır ve onlar puan vermedi.",
	},
	CodeTextModel + ":junk_shadow": {
		"In shadow, not counted until you have judged {min_judged} leads ({judged} so far): like {like} leads you marked junk (words: {words}); it would give {points} points.",
		"Gölge modda, {min_judged} talep değerlendirilene kadar sayılmaz (şimdiye dek {judged}): çöp olarak işaretlediğiniz {like} talebe benziyor (kelimeler: {words}); {points} puan verirdi.",
	},
	CodeTextModel + ":customer_shadow": {
		"In shadow, not counted until you have judged {min_judged} leads ({judged} so far): like {like} leads you marked real customers (words: {words}); it would give {points} points.",
		"Gölge modda, {min_judged} talep değerlendirilene kadar sayılmaz (şimdiye dek {judged}): gerçek müşteri olarak işaretlediğiniz {like} talebe benziyor (kelimeler: {words}); {points} puan verirdi.",
	},
}

// Message returns the human message of a reason code in lang ("en" or "tr";
// anything else gives English), with the evidence values filled in. An
// unknown code gives the code itself.
func Message(code, lang string, evidence map[string]any) string {
	m, ok := messages[code]
	if !ok {
		return code
	}
	// A reason whose evidence names its source, or its variant, may have a
	// message of its own.
	if v, _ := evidence["variant"].(string); v != "" {
		if mv, ok := messages[code+":"+v]; ok {
			m = mv
		}
	}
	if src, _ := evidence["source"].(string); src != "" {
		if v, ok := messages[code+"/"+src]; ok {
			m = v
		}
	}
	if _, short := evidence["message_words"]; short {
		if v, ok := messages[code+"/short"]; ok {
			m = v
		}
	}
	tmpl := m[0]
	if lang == "tr" {
		tmpl = m[1]
	}
	if strings.IndexByte(tmpl, '{') < 0 {
		return tmpl
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		b.WriteString(tmpl[:i])
		key := tmpl[i+1 : i+j]
		v := evidenceString(evidence[key])
		switch key {
		case "class":
			v = className(v, lang)
		case "match":
			v = matchName(v, lang)
		}
		b.WriteString(v)
		tmpl = tmpl[i+j+1:]
		if v == "1" && lang != "tr" {
			// "1 lead", "1 word": Turkish counts without a plural.
			for _, noun := range [...]string{" leads", " words", " links", " points"} {
				if rest, ok := strings.CutPrefix(tmpl, noun); ok {
					b.WriteString(noun[:len(noun)-1])
					tmpl = rest
					break
				}
			}
		}
	}
}

// className names a class of the built-in model as an owner reads it.
func className(c, lang string) string {
	names, ok := classNames[c]
	if !ok {
		return c
	}
	if lang == "tr" {
		return names[1]
	}
	return names[0]
}

// matchName says how a repeat was recognised, as an owner reads it.
func matchName(m, lang string) string {
	names, ok := matchNames[m]
	if !ok {
		return m
	}
	if lang == "tr" {
		return names[1]
	}
	return names[0]
}

var matchNames = map[string][2]string{
	"phone": {"the same phone number", "aynı telefon numarası"},
	"email": {"the same e-mail address", "aynı e-posta adresi"},
}

var classNames = map[string][2]string{
	"request":  {"a request", "talep"},
	"grey":     {"a price question or greeting", "fiyat sorusu ya da selamlama"},
	"offer":    {"an offer to the business", "işletmeye teklif"},
	"job":      {"someone looking for work", "iş arayan biri"},
	"nonsense": {"typed without meaning", "anlamsız giriş"},
}

// phraseText writes a list's phrase as an owner reads it: a prefix or
// suffix pattern ("bewerbe*", "*bewerbung") with "…" for the rest of the
// word. The evidence keeps the pattern as the list has it.
func phraseText(p string) string {
	if strings.HasSuffix(p, "*") {
		p = strings.TrimSuffix(p, "*") + "…"
	}
	if strings.HasPrefix(p, "*") {
		p = "…" + strings.TrimPrefix(p, "*")
	}
	return p
}

func evidenceString(v any) string {
	switch v := v.(type) {
	case nil:
		return "?"
	case string:
		return v
	case []string:
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = phraseText(x)
		}
		return strings.Join(s, ", ")
	case []any:
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = phraseText(fmt.Sprint(x))
		}
		return strings.Join(s, ", ")
	case float64: // evidence read back from JSON
		if v == float64(int64(v)) {
			return fmt.Sprint(int64(v))
		}
	}
	return fmt.Sprint(v)
}
