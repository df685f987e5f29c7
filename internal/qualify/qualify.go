// Package qualify owns the scoring rules: pure functions from a lead and its
// context to explainable reasons, and the verdict they add up to. It also
// owns how evidence (a WhatsApp reply, a call, the owner's word) changes a
// verdict, and the word lists the rules read. Nothing in it touches a
// database or the network: the caller looks up what needs looking up (an
// earlier lead of the same person, the form token) and passes it in.
package qualify

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify/intent"
	"github.com/nyaruka/phonenumbers"
)

// Defaults of the per-site settings (model.Qualify zero values).
const (
	DefaultReviewFrom      = 30
	DefaultJunkFrom        = 70
	DefaultMinFillMS       = 2000
	DefaultDuplicateWindow = 7 * 24 * time.Hour
	// DefaultReviewTimeout leaves a margin of four hours before Meta's
	// seven-day limit on an event's age, for the delivery worker to send
	// the qualified event of a lead confirmed at the last minute.
	DefaultReviewTimeout = 6*24*time.Hour + 20*time.Hour
)

// Context is what the caller knows about a lead beyond the lead itself.
type Context struct {
	// Now is the time of scoring.
	Now time.Time
	// Country is the site's default region (ISO 3166-1, e.g. "TR"): phone
	// numbers without a country code are read as numbers of it.
	Country string
	// Previous is the same person's earlier lead on the site within the
	// duplicate window, found by the caller, or nil.
	Previous *Previous
	// Token is the result of the signed form token check; the zero value
	// means it was not checked.
	Token TokenCheck
	// Phone is the lead's phone number judged ahead by CheckPhone, or nil
	// to judge it here. A check of another number or country is ignored.
	Phone *PhoneCheck
	// Text is the site's text model (textmodel.go), or nil for none.
	Text *Text
	// Conversation is set for a lead that is a message on a chat (a
	// Click-to-WhatsApp conversation), not a form: there is no fill time
	// or form token to judge, and their absence is no evidence; and the
	// chat itself reaches the person, so a missing phone is no problem.
	Conversation bool
	// FillBy says who measured the lead's FillMS: FillByTracker (t.js, or
	// a page's own script, in the visitor's browser: a lead posted to the
	// public endpoint) or FillByBackend (the site's own server posted the
	// lead with its API key). Empty means FillByTracker.
	FillBy string
}

// Who measured a lead's fill time (Context.FillBy).
const (
	FillByTracker = model.FillByTracker
	FillByBackend = model.FillByBackend
)

// The sources a FILL_TOO_FAST reason names in its evidence: the form token
// (the server's clock, from the page's token to the submit), the tracker in
// the browser, or the site's backend.
const (
	FillSourceToken   = "form_token"
	FillSourceTracker = "tracker"
	FillSourceBackend = "backend"
)

// PhoneCheck is a phone number judged for a region. Judging parses the
// number with libphonenumber (tens of microseconds): a caller that scores
// inside a transaction can do it before.
type PhoneCheck struct {
	phone, region string
	result        phoneResult
}

// CheckPhone judges phone (a lead's, as given) for the site's country,
// as Score would.
func CheckPhone(phone, country string) *PhoneCheck {
	return CheckPhoneWith(phone, country, nil)
}

// CheckPhoneWith is CheckPhone with the number parsed by parse, which
// parses as phonenumbers.ParseAndKeepRawInputToNumber does (nil:
// phonenumbers.Parse): a caller that also normalises the number parses it
// once.
func CheckPhoneWith(phone, country string, parse func(raw, region string) (*phonenumbers.PhoneNumber, error)) *PhoneCheck {
	// Digits of any script (Arabic-Indic, Persian, full-width) are read as
	// the digits they are.
	p, region := intent.Digits(strings.TrimSpace(phone)), strings.ToUpper(strings.TrimSpace(country))
	return &PhoneCheck{phone: p, region: region, result: checkPhone(p, region, parse)}
}

// Previous is an earlier lead of the same person on the same site.
type Previous struct {
	LeadID model.LeadID
	At     time.Time
	// Match says what matched: "phone" or "email".
	Match string
}

// TokenCheck is the result of checking the server-signed form token.
type TokenCheck struct {
	Checked bool
	Valid   bool
	// Problem is "forged", "replayed", "expired" or "".
	Problem string
	// ServerFillMS is the fill time measured on the server's clock (token
	// issued to submit), 0 when unknown.
	ServerFillMS int64
}

// Rules is one site's compiled rule set. It is immutable and safe for
// concurrent use.
type Rules struct {
	weights         [len(ruleTable)]int
	reviewFrom      int
	junkFrom        int
	minFillMS       int64
	duplicateWindow time.Duration
	reviewTimeout   time.Duration

	vendor, job, price, filler, test *phraseMatcher
	vendorSign, jobSign, company     *phraseMatcher
	book, quote                      *phraseMatcher
	// services are the site's own service words (qualify.services).
	services         *phraseMatcher
	disposable, free map[string]struct{}
	// intent is the built-in model that reads what a message means.
	intent *intent.Model
}

var langCode = regexp.MustCompile(`^[a-z]{2,3}$`)

// New compiles a site's qualification settings over lists (nil means
// DefaultLists). Zero settings take the defaults; a weight of 0 turns a rule
// off. Every invalid setting is reported, each naming its key.
func New(s model.Qualify, lists *Lists) (*Rules, error) {
	if lists == nil {
		lists = DefaultLists()
	}
	r := &Rules{
		reviewFrom:      or(s.ReviewFrom, DefaultReviewFrom),
		junkFrom:        or(s.JunkFrom, DefaultJunkFrom),
		minFillMS:       int64(or(s.MinFillMS, DefaultMinFillMS)),
		duplicateWindow: time.Duration(s.DuplicateWindow),
		reviewTimeout:   time.Duration(s.ReviewTimeout),
		disposable:      lists.disposable,
		free:            lists.free,
		intent:          intent.Default(),
	}
	if r.duplicateWindow == 0 {
		r.duplicateWindow = DefaultDuplicateWindow
	}
	if r.reviewTimeout == 0 {
		r.reviewTimeout = DefaultReviewTimeout
	}
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("qualify.%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if r.reviewFrom < 1 || r.reviewFrom > 100 {
		bad("review_from", "%d is not between 1 and 100", r.reviewFrom)
	}
	if r.junkFrom < 1 || r.junkFrom > 100 {
		bad("junk_from", "%d is not between 1 and 100", r.junkFrom)
	}
	if r.reviewFrom > r.junkFrom {
		bad("review_from", "%d is above junk_from %d", r.reviewFrom, r.junkFrom)
	}
	if r.minFillMS < 0 || r.minFillMS > 60000 {
		bad("min_fill_ms", "%d is not between 0 and 60000", r.minFillMS)
	}
	if r.duplicateWindow < 0 || r.duplicateWindow > 366*24*time.Hour {
		bad("duplicate_window", "%s is not between 0 and 366 days", r.duplicateWindow)
	}
	if r.reviewTimeout < 0 || r.reviewTimeout >= model.MaxEventAge {
		bad("review_timeout", "%s must be positive and under 7 days (Meta refuses older events)", r.reviewTimeout)
	}
	for i, rule := range ruleTable {
		r.weights[i] = rule.Points
	}
	for code, w := range s.Weights {
		i := ruleIndex(code)
		switch {
		case i < 0:
			bad("weights."+code, "unknown reason code")
		case w < 0 || w > 100:
			bad("weights."+code, "%d is not between 0 and 100", w)
		default:
			r.weights[i] = w
		}
	}
	merged := make(map[string][]string)
	for _, list := range ListNames() {
		for _, lang := range lists.Languages(list) {
			merged[list] = append(merged[list], lists.phrases[list][lang]...)
		}
	}
	for list, langs := range s.Phrases {
		if _, ok := lists.phrases[list]; !ok && !isList(list) {
			bad("phrases."+list, "unknown list (want one of %s)", strings.Join(ListNames(), ", "))
			continue
		}
		for lang, phrases := range langs {
			if !langCode.MatchString(lang) {
				bad("phrases."+list+"."+lang, "not a language code like tr, en or de")
				continue
			}
			for i, p := range phrases {
				if _, ok := parsePhrase(p); !ok {
					bad(fmt.Sprintf("phrases.%s.%s[%d]", list, lang, i), "%q has no words", p)
				}
			}
			merged[list] = append(merged[list], phrases...)
		}
	}
	services := servicePatterns(s.Services, bad)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(services) > 0 {
		r.services = newPhraseMatcher(services)
	}
	r.vendor = newPhraseMatcher(merged[ListVendor])
	r.job = newPhraseMatcher(merged[ListJob])
	r.price = newPhraseMatcher(merged[ListPrice])
	r.filler = newPhraseMatcher(merged[ListFiller])
	r.test = newPhraseMatcher(merged[ListTest])
	r.vendorSign = newPhraseMatcher(merged[ListVendorSign])
	r.jobSign = newPhraseMatcher(merged[ListJobSign])
	r.company = newPhraseMatcher(merged[ListCompany])
	r.book = newPhraseMatcher(merged[ListBook])
	r.quote = newPhraseMatcher(merged[ListQuote])
	return r, nil
}

func isList(name string) bool {
	for _, l := range ListNames() {
		if l == name {
			return true
		}
	}
	return false
}

func or(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// DuplicateWindow is how far back the caller looks for the same person's
// earlier lead (Context.Previous).
func (r *Rules) DuplicateWindow() time.Duration { return r.duplicateWindow }

// ReviewTimeout is how long after its submit time a review lead waits for
// evidence before it expires unconfirmed; always under Meta's 7 days.
func (r *Rules) ReviewTimeout() time.Duration { return r.reviewTimeout }

// Weight returns the points a reason code gives on this site (0 when the
// rule is off or the code unknown).
func (r *Rules) Weight(code string) int {
	if i := ruleIndex(code); i >= 0 {
		return r.weights[i]
	}
	return 0
}

// Thresholds returns the scores from which a lead is held for review and
// from which it is junk.
func (r *Rules) Thresholds() (reviewFrom, junkFrom int) { return r.reviewFrom, r.junkFrom }

// scoring gathers the reasons of one Score call.
type scoring struct {
	r       *Rules
	reasons []model.Reason
	floor   bool // an AtLeastReview rule fired
	// atMostReview: nothing but the grey area speaks, so the score alone
	// never makes the lead junk (greyWithoutContact).
	atMostReview bool
}

// add gives a reason with points derived from the site's weight for code:
// points = weight * num / den. A rule whose weight is 0 is off.
func (s *scoring) add(code string, num, den int, evidence map[string]any) {
	s.give(code, num, den, ruleTable[ruleIndex(code)].Final, evidence)
}

// give is add with the reason's finality decided by the caller, for a rule
// whose finality depends on its evidence.
func (s *scoring) give(code string, num, den int, final bool, evidence map[string]any) {
	i := ruleIndex(code)
	w := s.r.weights[i]
	if w == 0 {
		return
	}
	pts := min(w*num/den, 100)
	rule := ruleTable[i]
	s.floor = s.floor || rule.AtLeastReview
	s.reasons = append(s.reasons, model.Reason{
		Code:     code,
		Points:   pts,
		Final:    final,
		Evidence: evidence,
		Message:  Message(code, "en", evidence),
	})
}

// Score judges a lead: the reasons, the junk score (their points summed and
// clamped to 0-100) and the verdict. A final reason makes the lead junk
// whatever the score; a missing contact or a grey-area lead (price-only,
// says nothing, whatever else it typed) is held for review at least. Score
// is pure: the same lead and context give the same decision. lead must not
// be nil.
func (r *Rules) Score(lead *model.Lead, c Context) model.Decision {
	s := scoring{r: r, reasons: make([]model.Reason, 0, 4)}

	if strings.TrimSpace(lead.Honeypot) != "" {
		s.add(CodeHoneypot, 1, 1, map[string]any{"hp_len": len(lead.Honeypot)})
	}
	if p := c.Previous; p != nil {
		ev := map[string]any{"lead_id": string(p.LeadID), "match": p.Match}
		if !p.At.IsZero() {
			ev["first_at"] = p.At.UTC().Format(time.RFC3339)
			if !lead.SubmittedAt.IsZero() {
				ev["after_s"] = int64(lead.SubmittedAt.Sub(p.At) / time.Second)
			}
		}
		s.add(CodeDuplicate, 1, 1, ev)
	}
	if lead.FormTimed() {
		// An Instant Form or a chat has no form token or fill time to
		// judge, and their absence is no evidence.
		r.scoreToken(&s, c.Token)
		r.scoreFill(&s, lead, c)
	}

	// Contact: phone, e-mail, and whether anything can reach the person.
	phone := intent.Digits(strings.TrimSpace(lead.Phone))
	email := strings.TrimSpace(lead.Email)
	phoneOK, emailOK := false, false
	if phone != "" {
		region := strings.ToUpper(strings.TrimSpace(c.Country))
		var pr phoneResult
		if pc := c.Phone; pc != nil && pc.phone == phone && pc.region == region {
			pr = pc.result
		} else {
			pr = checkPhone(phone, region, nil)
		}
		if pr.code != "" {
			s.add(pr.code, 1, 1, pr.evidence)
		}
		phoneOK = pr.usable
	}
	var emailLocal, emailDomain string
	if email != "" {
		emailOK, emailLocal, emailDomain = r.scoreEmail(&s, email)
	}
	switch {
	case c.Conversation:
	case phone == "" && email == "":
		s.add(CodePhoneMissing, 1, 1, map[string]any{})
	case !phoneOK && !emailOK:
		s.add(CodeNoValidContact, 1, 1, map[string]any{})
	}

	// Text: the name and the message.
	name := strings.TrimSpace(lead.Name)
	if name == "" {
		name = strings.TrimSpace(lead.FirstName + " " + lead.LastName)
	}
	var buf [96]string
	nameWords := tokens(fold(name), buf[:0])
	rest := buf[:0]
	if n := len(nameWords); n < len(buf) {
		rest = buf[n:n]
	}
	message := intent.Digits(lead.Message)
	msgFolded := fold(message)
	msgWords := tokens(msgFolded, rest)

	r.scoreTest(&s, nameWords, msgWords, emailLocal)
	r.scoreGibberish(&s, nameWords, msgWords, emailLocal)
	r.scoreDisposableShort(&s, msgWords)
	r.scoreVendor(&s, name, nameWords, msgWords, emailDomain)
	r.scoreIntent(&s, CodeJobApplication, r.job, r.jobSign, nameWords, msgWords, nil)
	plain, links := stripLinks(msgFolded)
	greyWords := msgWords
	if links > 0 {
		// A link is not words: "is this price valid? <link>" only asks
		// for a price.
		greyWords = tokens(plain, nil)
	}
	r.scoreLinks(&s, links, countWords(greyWords))
	// The grey area, whatever else the lead typed: an e-mail address is
	// not evidence of intent.
	r.scoreGrey(&s, greyWords)
	meant := r.judgeMeaning(&s, message)
	r.outweighPhrase(&s, meant)
	r.disputePhrases(&s, meant)
	r.agreeJunk(&s, meant)
	meant.comeIn = r.asksToComeIn(msgWords)
	meant.quote = r.asksForQuote(msgWords)
	customer := r.scoreText(&s, c.Text, lead)
	named := !meant.request() && r.scoreServices(&s, msgWords, meant)
	// Clean only on evidence: a lead nothing shows to be a customer's
	// request waits for a reply, a call or the owner's word.
	r.scoreEvidence(&s, meant, customer || named)
	r.greyWithoutContact(&s, meant)

	return r.decide(s)
}

// decide adds the reasons up to a decision.
func (r *Rules) decide(s scoring) model.Decision {
	score, final := 0, false
	for _, x := range s.reasons {
		score += x.Points
		final = final || x.Final
	}
	score = max(0, min(score, 100))
	v := model.VerdictClean
	switch {
	case final || score >= r.junkFrom && !s.atMostReview:
		v = model.VerdictJunk
	case score >= r.reviewFrom || s.floor:
		v = model.VerdictReview
	}
	return model.Decision{
		Verdict:      v,
		Score:        score,
		Reasons:      s.reasons,
		RulesVersion: RulesVersion,
		DecidedBy:    model.DecidedByRules,
	}
}

func (r *Rules) scoreToken(s *scoring, t TokenCheck) {
	if !t.Checked || t.Valid {
		return
	}
	switch t.Problem {
	case "replayed":
		s.add(CodeTokenReplayed, 1, 1, map[string]any{"problem": t.Problem})
	case "expired":
		s.add(CodeTokenExpired, 1, 1, map[string]any{"problem": t.Problem})
	default:
		// A token that fails its check for any other reason was not made
		// by us for this form.
		p := t.Problem
		if p == "" {
			p = "forged"
		}
		s.add(CodeTokenForged, 1, 1, map[string]any{"problem": p})
	}
}

// scoreFill judges the time from the first interaction with the form to
// the submit. Under the minimum no person filled it: junk, a final reason,
// when we measured the time ourselves (the form token on the server's
// clock, or the tracker in the browser); when the site's backend posted the
// figure it gives its points without being final, and says so. A missing
// time is no evidence either way (FILL_TIME_MISSING, off unless a site
// gives it a weight).
func (r *Rules) scoreFill(s *scoring, lead *model.Lead, c Context) {
	t := c.Token
	if lead.FillMS == nil && t.ServerFillMS <= 0 {
		s.add(CodeFillTimeMissing, 1, 1, map[string]any{})
		return
	}
	if r.minFillMS == 0 {
		return
	}
	// The token's figure runs from the page's load, so it is an upper
	// bound that a client cannot shrink: under the minimum it settles the
	// matter. The browser's runs from the first keystroke.
	var ms int64
	source := ""
	switch {
	case t.ServerFillMS > 0 && t.ServerFillMS < r.minFillMS:
		ms, source = t.ServerFillMS, FillSourceToken
	case lead.FillMS != nil && *lead.FillMS < r.minFillMS:
		ms, source = *lead.FillMS, FillSourceTracker
		if c.FillBy == FillByBackend {
			source = FillSourceBackend
		}
	default:
		return
	}
	ev := map[string]any{"fill_ms": ms, "min_ms": r.minFillMS, "source": source}
	s.give(CodeFillTooFast, 1, 1, source != FillSourceBackend, ev)
}

// scoreEmail judges the address and returns whether it can reach someone,
// its folded local part for the text rules, and its domain when it is a
// business's (not a consumer provider's, disposable or reserved).
func (r *Rules) scoreEmail(s *scoring, email string) (ok bool, local, business string) {
	lower := strings.ToLower(email)
	at := strings.LastIndexByte(lower, '@')
	if at >= 0 {
		local = fold(lower[:at])
	}
	if p := emailProblem(email); p != "" {
		// a@b.c and friends are someone trying the form.
		if at == 1 && strings.IndexByte(lower[at+1:], '.') == 1 {
			s.add(CodeTestEntry, 1, 1, map[string]any{"fields": []string{"email"}, "words": []string{"single letters"}})
			return false, "", ""
		}
		s.add(CodeEmailInvalid, 1, 1, map[string]any{"problem": p})
		return false, local, ""
	}
	domain := lower[at+1:]
	if reservedDomain(domain) {
		s.add(CodeEmailInvalid, 1, 1, map[string]any{"problem": "reserved example domain"})
		return false, local, ""
	}
	if d, hit := disposableMatch(r.disposable, domain); hit {
		s.add(CodeEmailDisposable, 1, 1, map[string]any{"domain": d})
		return false, local, ""
	}
	if freeMail(r.free, domain) {
		return true, local, ""
	}
	return true, local, domain
}

// fewWords is the most words a message "of a few words" has.
const fewWords = 6

// countWords counts the words of two letters or more that are not numbers:
// "I'd like info" has three.
func countWords(words []string) int {
	n := 0
	for _, w := range words {
		if len(w) >= 2 && !allDigits(w) {
			n++
		}
	}
	return n
}

// scoreDisposableShort makes a disposable address with a message of a few
// words junk: half as many points again on EMAIL_DISPOSABLE. A throwaway
// address next to a real description of a need stays a review.
func (r *Rules) scoreDisposableShort(s *scoring, msg []string) {
	n := countWords(msg)
	if n > fewWords {
		return
	}
	for i := range s.reasons {
		x := &s.reasons[i]
		if x.Code != CodeEmailDisposable {
			continue
		}
		x.Points = min(r.Weight(CodeEmailDisposable)*3/2, 100)
		x.Evidence["message_words"] = n
		x.Message = Message(x.Code, "en", x.Evidence)
	}
}

// wholeOf reports whether matcher m covers every word, and which phrases it
// used. Words that are only digits are neutral ("test 123").
func wholeOf(m *phraseMatcher, words []string) (bool, []string) {
	if len(words) == 0 {
		return false, nil
	}
	var spanBuf [16]span
	spans := m.find(words, spanBuf[:0])
	covered := 0
	var found []string
	for _, sp := range spans {
		covered += sp.end - sp.start
		found = appendUnique(found, m.phrases[sp.phrase].text)
	}
	letters := 0
	for _, w := range words {
		if !allDigits(w) {
			letters++
		}
	}
	return letters > 0 && covered == letters && covered > 0, found
}

func (r *Rules) scoreTest(s *scoring, name, msg []string, emailLocal string) {
	var fields, words []string
	check := func(field string, ws []string) {
		ws = trimDigits(ws)
		if ok, found := wholeOf(r.test, ws); ok {
			fields = append(fields, field)
			for _, f := range found {
				words = appendUnique(words, f)
			}
		}
	}
	check("name", name)
	check("message", msg)
	if emailLocal != "" {
		var buf [8]string
		check("email", tokens(emailLocal, buf[:0]))
	}
	if len(fields) > 0 {
		s.add(CodeTestEntry, 1, 1, map[string]any{"fields": fields, "words": words})
	}
}

// trimDigits drops trailing digits of each word ("test123" -> "test") in a
// copy when any word changes.
func trimDigits(ws []string) []string {
	var out []string
	for i, w := range ws {
		t := strings.TrimRight(w, "0123456789")
		if t == w || t == "" {
			if out != nil {
				out = append(out, w)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(ws)), ws[:i]...)
		}
		out = append(out, t)
	}
	if out == nil {
		return ws
	}
	return out
}

func (r *Rules) scoreGibberish(s *scoring, name, msg []string, emailLocal string) {
	var fields, kinds []string
	hit := func(field, kind string) {
		fields = append(fields, field)
		kinds = append(kinds, kind)
	}
	// Name: only single letters ("a", "x y"), or a word typed without
	// meaning. An initial next to a real name ("Mehmet Ö.") is fine.
	if len(name) > 0 {
		single, digits := true, true
		kind, judged := "", 0
		// A company's form or a role in the name ("GmbH", "Ltd", "S.L.",
		// "SARL", "A.Ş.") is a sign of who wrote, never typing without
		// meaning: those words are not judged.
		var companyBuf [8]span
		var company [96]bool
		for _, sp := range r.company.find(name, companyBuf[:0]) {
			for i := sp.start; i < sp.end && i < len(company); i++ {
				company[i] = true
			}
		}
		for i, w := range name {
			if i < len(company) && company[i] {
				continue
			}
			judged++
			single = single && len([]rune(w)) == 1 && !allDigits(w)
			digits = digits && allDigits(w)
			if kind == "" {
				kind = r.gibberish(strings.TrimRight(w, "0123456789"))
			}
		}
		switch {
		case judged == 0:
		case digits:
			hit("name", "digits")
		case single:
			hit("name", "one_letter")
		case kind != "":
			hit("name", kind)
		}
	}
	// Message: every word of three letters or more is typed without
	// meaning. Short words and texting abbreviations ("mrb", "slm") are
	// not judged.
	judged, mashed, kind := 0, 0, ""
	for _, w := range msg {
		if len(w) < 3 || allDigits(w) {
			continue
		}
		judged++
		if k := r.gibberish(w); k != "" {
			mashed++
			kind = k
		}
	}
	if judged > 0 && mashed == judged {
		hit("message", kind)
	}
	if emailLocal != "" {
		var buf [8]string
		for _, w := range tokens(emailLocal, buf[:0]) {
			if k := mash(strings.TrimRight(w, "0123456789")); k != "" {
				hit("email", k)
				break
			}
		}
	}
	if len(fields) > 0 {
		// One field: the weight; each further field adds half. The
		// message counts twice: a message of nothing but mash is junk
		// whatever the name says.
		units := len(fields) + 1
		if slices.Contains(fields, "message") {
			units++
		}
		s.add(CodeGibberish, units, 2, map[string]any{"fields": fields, "kinds": kinds})
	}
}

// gibberish tells why a folded word looks typed without meaning (mash, then
// the letters' statistics), or "".
func (r *Rules) gibberish(w string) string {
	if k := mash(w); k != "" {
		return k
	}
	return r.unusual(w)
}

// scoreVendor judges the pitch: the strong and weaker phrases of the
// message (scoreIntent), and, only once those hold the lead for review, what
// the other fields say about who wrote: a company or a role in the name
// field ("Burak - Nova Dijital", "Lead Solutions LLC", "Sales Manager") and
// a business's e-mail domain ("" for a person's).
func (r *Rules) scoreVendor(s *scoring, name string, nameWords, msg []string, domain string) {
	var ctxBuf [4]string
	context := ctxBuf[:0]
	var spanBuf [8]span
	if spans := r.company.find(nameWords, spanBuf[:0]); len(spans) > 0 {
		context = append(context, "name: "+r.company.phrases[spans[0].phrase].text)
	} else if len(nameWords) > 1 && (strings.ContainsAny(name, "|@/") || strings.Contains(name, " - ") || strings.Contains(name, " – ")) {
		// "Sophie @ BrightFox", "Ece | Parlak Medya": a person and
		// their company.
		context = append(context, "name: person and company")
	}
	if domain != "" {
		context = append(context, "business e-mail: "+domain)
	}
	r.scoreIntent(s, CodeVendorPitch, r.vendor, r.vendorSign, nameWords, msg, context)
}

// scoreIntent gives code when the words show an intent: each phrase of
// strong (in the name or the message) counts two, each phrase of signs in
// the message one. The weight goes with two, half of it with each further
// one: one strong phrase or two signs are review, a strong phrase and a sign
// or three signs are junk. A lone sign says nothing. Each of context counts
// one more once the words alone reach two.
func (r *Rules) scoreIntent(s *scoring, code string, strong, signs *phraseMatcher, name, msg []string, context []string) {
	var spanBuf [24]span
	spans := strong.find(name, spanBuf[:0])
	nameStrong := len(spans)
	spans = strong.find(msg, spans)
	var found []string
	for _, sp := range spans {
		found = appendUnique(found, strong.phrases[sp.phrase].text)
	}
	nStrong := len(found)
	strongSpans := spans[nameStrong:]
	weak := 0
	var signBuf [16]span
	for _, sp := range signs.find(msg, signBuf[:0]) {
		if overlaps(strongSpans, sp) {
			// "free demo" is one strong phrase, not a sign "demo" too.
			continue
		}
		if t := signs.phrases[sp.phrase].text; !slices.Contains(found, t) {
			found = append(found, t)
			weak++
		}
	}
	units := 2*nStrong + weak
	if units < 2 {
		return
	}
	// Who wrote (a company name, a business's domain) never makes the
	// reason; next to an offer it turns a review into junk.
	for _, c := range context {
		found = append(found, c)
		weak++
		units++
	}
	ev := map[string]any{"phrases": found[:min(len(found), 8)]}
	if weak > 0 {
		ev["signs"] = weak
	}
	s.add(code, min(units, 8), 2, ev)
}

// overlaps reports whether sp shares a word with any of spans.
func overlaps(spans []span, sp span) bool {
	for _, x := range spans {
		if sp.start < x.end && x.start < sp.end {
			return true
		}
	}
	return false
}

// scoreGrey holds a lead that says nothing (only greetings and politeness)
// or only asks for a price, whatever else it typed: it may be a real person,
// but nothing yet shows it, so it waits for a reply or a call. A price
// question has at most three words besides the price words and the
// filler, for the thing priced: "fiyat?", "diş beyazlatma ücreti", "cost of
// a loft conversion", "Preis für eine Wärmepumpe". Numbers and single
// letters say nothing either way. Asking to come in ("randevu almak
// istiyorum", "book", "einen Termin") is more than a price question, however
// short: "fiyat ve randevu lütfen" is a person who wants to come.
func (r *Rules) scoreGrey(s *scoring, msg []string) {
	if len(msg) == 0 {
		s.add(CodeNoMessage, 1, 1, map[string]any{"empty": true})
		return
	}
	if len(msg) > 64 {
		return
	}
	if r.asksToComeIn(msg) {
		return
	}
	var covered [64]bool
	var spanBuf [16]span
	var priceWords []string
	for _, sp := range r.price.find(msg, spanBuf[:0]) {
		for i := sp.start; i < sp.end; i++ {
			covered[i] = true
		}
		priceWords = appendUnique(priceWords, r.price.phrases[sp.phrase].text)
	}
	for _, sp := range r.filler.find(msg, spanBuf[:0]) {
		for i := sp.start; i < sp.end; i++ {
			covered[i] = true
		}
	}
	other := 0
	for i, w := range msg {
		if !covered[i] && !allDigits(w) && len(w) >= 2 {
			other++
		}
	}
	switch {
	case len(priceWords) > 0 && other <= 3:
		s.add(CodePriceOnly, 1, 1, map[string]any{"phrases": priceWords})
	case other == 0:
		s.add(CodeNoMessage, 1, 1, map[string]any{"empty": false})
	}
}

// asksForQuote reports whether the words ask for a quote or for someone to
// come and see the job (the quote list): "devis", "presupuesto", "keşfe
// gelin".
func (r *Rules) asksForQuote(msg []string) bool {
	var buf [4]span
	return len(r.quote.find(msg, buf[:0])) > 0
}

// asksToComeIn reports whether the words ask to come in (the book list):
// "randevu almak istiyorum", "can I book in on Friday", "einen Termin".
func (r *Rules) asksToComeIn(msg []string) bool {
	var bookBuf [4]span
	return len(r.book.find(msg, bookBuf[:0])) > 0
}

// scoreLinks gives MESSAGE_HAS_LINK for a message with links, and
// MOSTLY_LINKS instead when the links are most of it: no more than two
// words of text a link ("see here: http://...").
func (r *Rules) scoreLinks(s *scoring, links, words int) {
	switch {
	case links == 0:
	case words <= 2*links:
		s.add(CodeMostlyLinks, 1, 1, map[string]any{"links": links, "words": words})
	default:
		s.add(CodeMessageHasLink, 1, 1, map[string]any{"links": links})
	}
}

// stripLinks returns folded text without its links, and how many there
// were; text without links comes back as it is.
func stripLinks(folded string) (string, int) {
	if !strings.ContainsAny(folded, "/.") {
		return folded, 0
	}
	links := 0
	var b strings.Builder
	for f := range strings.FieldsSeq(folded) {
		if isLink(f) {
			links++
			continue
		}
		b.WriteString(f)
		b.WriteByte(' ')
	}
	if links == 0 {
		return folded, 0
	}
	return b.String(), links
}

// isLink reports whether a whitespace-separated piece of folded text is a
// web link: http(s)://..., www...., or a domain with a path (bit.ly/x).
func isLink(f string) bool {
	if strings.Contains(f, "http://") || strings.Contains(f, "https://") || strings.Contains(f, "www.") {
		return true
	}
	slash := strings.IndexByte(f, '/')
	if slash <= 0 {
		return false
	}
	host := f[:slash]
	dot := strings.LastIndexByte(host, '.')
	if dot <= 0 || dot == len(host)-1 {
		return false
	}
	for i := dot + 1; i < len(host); i++ {
		if host[i] < 'a' || host[i] > 'z' {
			return false
		}
	}
	return true
}

func allDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
