package qualify

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cleanads/cleanads/internal/model"
)

// CodeTextModel is the reason the site's text model gives: the message reads
// like the messages of leads the owner marked junk (points added) or real
// customers (points taken away).
const CodeTextModel = "TEXT_MODEL"

// The text model's limits.
const (
	// MinJudged is how many owner-judged leads a site needs before its text
	// model counts: below it the model runs in shadow (its reason is shown
	// with 0 points and what it would have given).
	MinJudged = 30
	// DefaultTextMaxPoints caps the points the model gives or takes.
	DefaultTextMaxPoints = 25
	// MaxTextMaxPoints is the highest cap a site may set: the model alone
	// never makes a lead junk on default thresholds.
	MaxTextMaxPoints = 50
	// maxTextFeatures bounds the persisted vocabulary; the rarest features
	// go first.
	maxTextFeatures = 50000
	// maxDocWords bounds the words read from one message.
	maxDocWords = 200
	// minTextPoints: a smaller figure says nothing and gives no reason.
	minTextPoints = 2
)

// Text is a site's text model with the site's settings, handed to Score in
// Context.Text.
type Text struct {
	Model *TextModel
	// MaxPoints caps the points either way; 0 means DefaultTextMaxPoints.
	MaxPoints int
	// LeaveOut, when set, is the owner's word on the lead being judged,
	// which the model learnt from: a replay takes it out of the counts, so
	// a lead is never judged by its own label.
	LeaveOut *bool
}

// TextModel is a multinomial naive Bayes over the words and two-word
// phrases of the messages a site's owner judged, with each feature counted
// once per message (binarised: short messages rarely repeat a word, and it
// makes a feature's count the number of leads that had it, which the
// reason quotes). The two classes are the owner's words: junk and real
// customer. It is immutable once built and safe for concurrent use.
type TextModel struct {
	// Judged is how many owner-judged leads it was trained on; Junk of them
	// were marked junk.
	Judged, Junk int
	// TrainedAt is when it was built.
	TrainedAt time.Time
	// total is the sum of feature counts per class (0 customer, 1 junk).
	total [2]int
	feats map[string][2]int32
}

// Judgement is one lead the owner judged, as the model learns from it.
type Judgement struct {
	Message string `json:"message"`
	// Junk is the owner's word: true for junk, false for a real customer.
	Junk bool `json:"junk"`
}

// TrainText builds a model from the owner's judgements.
func TrainText(js []Judgement, now time.Time) *TextModel {
	m := &TextModel{Judged: len(js), TrainedAt: now.UTC(), feats: make(map[string][2]int32)}
	var buf []string
	for _, j := range js {
		c := 0
		if j.Junk {
			c = 1
			m.Junk++
		}
		buf = TextFeatures(j.Message, buf[:0])
		for _, f := range buf {
			n := m.feats[f]
			n[c]++
			m.feats[f] = n
			m.total[c]++
		}
	}
	m.prune(maxTextFeatures)
	return m
}

// prune keeps the n features seen in the most leads.
func (m *TextModel) prune(n int) {
	if len(m.feats) <= n {
		return
	}
	type fc struct {
		f string
		n int32
	}
	all := make([]fc, 0, len(m.feats))
	for f, c := range m.feats {
		all = append(all, fc{f, c[0] + c[1]})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].n != all[j].n {
			return all[i].n > all[j].n
		}
		return all[i].f < all[j].f
	})
	for _, x := range all[n:] {
		c := m.feats[x.f]
		m.total[0] -= int(c[0])
		m.total[1] -= int(c[1])
		delete(m.feats, x.f)
	}
}

// Features is how many words and phrases the model knows.
func (m *TextModel) Features() int { return len(m.feats) }

// Live reports whether the model counts in the score: it has learnt from
// at least MinJudged owner-judged leads. Before, it runs in shadow.
func (m *TextModel) Live() bool { return m != nil && m.Judged >= MinJudged }

// TextFeatures appends the features of a message to dst: its words, folded
// (Turkish dotted and dotless i alike, diacritics and case dropped, ß as
// ss) and split on anything not a letter or digit, without numbers and
// one-letter words, each once; and each pair of neighbouring words as
// "w1 w2". No stemming: a Turkish suffix after an apostrophe is a word of
// its own, and the two-word phrases carry much of what a stem would.
func TextFeatures(message string, dst []string) []string {
	var wbuf [64]string
	words := tokens(fold(message), wbuf[:0])
	if len(words) > maxDocWords {
		words = words[:maxDocWords]
	}
	start := len(dst)
	prev := ""
	for _, w := range words {
		if utf8.RuneCountInString(w) < 2 || allDigits(w) {
			prev = ""
			continue
		}
		if stopWords[w] {
			continue // no feature, and the words either side make a pair
		}
		dst = appendFeature(dst, start, w)
		if prev != "" {
			dst = appendFeature(dst, start, prev+" "+w)
		}
		prev = w
	}
	return dst
}

// stopWords are the commonest function words and greetings of Turkish,
// English and German, folded: every kind of lead has them, so they would
// only add noise to the model and its evidence. "your" and "our" are not
// among them: pitches are full of them.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		ve veya ile icin bir bu su o da de mi mu ne ki cok daha en gibi kadar ama ya var yok olarak
		ben biz siz sen onlar benim bizim sizin size bana
		merhaba selam slm mrb iyi gunler gunaydin aksamlar tesekkur tesekkurler ederim lutfen rica
		the an and or for to of in on at by is are was be been am it its this that these with from as
		hi hello dear thanks thank please
		der die das den dem des und oder fur zu von im in ist sind ich sie wir es ein eine einen mit auf an bei
		hallo guten tag bitte danke vielen`) {
		m[w] = true
	}
	return m
}()

// appendFeature appends f unless dst[start:] has it.
func appendFeature(dst []string, start int, f string) []string {
	for _, x := range dst[start:] {
		if x == f {
			return dst
		}
	}
	return append(dst, f)
}

// TextJudgement is what the model says of one message.
type TextJudgement struct {
	// LogOdds is log P(junk | words) - log P(customer | words) with even
	// priors: what the words alone say, whatever share of leads the owner
	// happened to judge each way.
	LogOdds float64
	// Known is how many of the message's features the model has seen.
	Known int
	// Junk is the direction: toward junk (true) or a real customer.
	Junk bool
	// Words are the features that weigh most in that direction, strongest
	// first, at most three; Like is how many judged leads of that class had
	// the strongest of them.
	Words []string
	Like  int
}

// Judge tells what the model makes of a message. leaveOut, when not nil,
// is the message's own judgement to take out of the counts first (a replay
// of a lead the model learnt from must not be judged by its own label).
func (m *TextModel) Judge(message string, leaveOut *bool) TextJudgement {
	var fbuf [96]string
	feats := TextFeatures(message, fbuf[:0])
	var out TextJudgement
	total := m.total
	docs := [2]int{m.Judged - m.Junk, m.Junk}
	lo := -1
	if leaveOut != nil {
		lo = 0
		if *leaveOut {
			lo = 1
		}
		docs[lo]--
		for _, f := range feats {
			if m.feats[f][lo] > 0 {
				total[lo]--
			}
		}
	}
	if docs[0] <= 0 || docs[1] <= 0 {
		return out
	}
	v := float64(len(m.feats))
	type contrib struct {
		f string
		w float64
		n [2]int32
	}
	var cbuf [96]contrib
	cs := cbuf[:0]
	for _, f := range feats {
		n, ok := m.feats[f]
		if !ok {
			continue
		}
		if lo >= 0 && n[lo] > 0 {
			n[lo]--
		}
		if n[0]+n[1] <= 0 {
			continue // only the left-out lead had it
		}
		out.Known++
		// Laplace smoothing over the vocabulary.
		w := math.Log((float64(n[1])+1)/(float64(total[1])+v)) - math.Log((float64(n[0])+1)/(float64(total[0])+v))
		out.LogOdds += w
		cs = append(cs, contrib{f, w, n})
	}
	if out.Known == 0 {
		return out
	}
	out.Junk = out.LogOdds > 0
	sort.SliceStable(cs, func(i, j int) bool { return math.Abs(cs[i].w) > math.Abs(cs[j].w) })
	c := 0
	if out.Junk {
		c = 1
	}
	for _, x := range cs {
		if len(out.Words) == 3 || (x.w > 0) != out.Junk || x.n[c] == 0 || featureOverlaps(out.Words, x.f) {
			continue
		}
		out.Words = append(out.Words, x.f)
		out.Like = max(out.Like, int(x.n[c]))
	}
	return out
}

// featureOverlaps tells whether feature f shares a word with one of fs ("seo"
// and "seo teklif"): the evidence names different words.
func featureOverlaps(fs []string, f string) bool {
	a1, a2, _ := strings.Cut(f, " ")
	for _, g := range fs {
		b1, b2, _ := strings.Cut(g, " ")
		if a1 == b1 || a1 == b2 || a2 != "" && (a2 == b1 || a2 == b2) {
			return true
		}
	}
	return false
}

// Points turns log-odds into points within ±maxPoints: maxPoints times how
// far the words move the odds from even (2p-1, p the probability of junk).
func textPoints(logOdds float64, maxPoints int) int {
	p := 1 / (1 + math.Exp(-logOdds))
	return int(math.Round(float64(maxPoints) * (2*p - 1)))
}

// scoreText adds the text model's reason. In shadow (fewer than MinJudged
// owner-judged leads) the reason has 0 points and says what it would have
// given, and which verdict that would have made when it differs. It
// reports whether the live model leans toward the owner's real customers:
// the owner's confirmed word, which is evidence of a request.
func (r *Rules) scoreText(s *scoring, t *Text, lead *model.Lead) (customer bool) {
	if t == nil || t.Model == nil || strings.TrimSpace(lead.Message) == "" {
		return false
	}
	m := t.Model
	j := m.Judge(lead.Message, t.LeaveOut)
	if j.Known == 0 || len(j.Words) == 0 {
		return false
	}
	maxPts := t.MaxPoints
	if maxPts <= 0 {
		maxPts = DefaultTextMaxPoints
	}
	pts := textPoints(j.LogOdds, maxPts)
	if pts > -minTextPoints && pts < minTextPoints {
		return false
	}
	customer = pts < 0 && m.Live()
	if pts < 0 {
		// Toward a real customer the model takes back at most what the
		// rules that read words gave: a fill time, a phone number or a
		// token are not about words, and words are what a bot copies.
		text := 0
		for _, x := range s.reasons {
			if textCodes[x.Code] {
				text += x.Points
			}
		}
		pts = max(pts, -text)
	}
	toward := "junk"
	if !j.Junk {
		toward = "customer"
	}
	variant := toward
	if toward == "customer" && pts == 0 && m.Live() {
		// Nothing to take back: the reason says why it counts for nothing.
		variant = "customer_nothing"
	}
	ev := map[string]any{"toward": toward, "like": j.Like, "words": j.Words, "points": pts,
		"judged": m.Judged, "min_judged": MinJudged}
	reason := model.Reason{Code: CodeTextModel, Points: pts, Evidence: ev}
	if !m.Live() {
		ev["shadow"] = true
		variant += "_shadow"
		reason.Points = 0
		with := scoring{r: r, reasons: append(append([]model.Reason(nil), s.reasons...), model.Reason{Points: pts}), floor: s.floor}
		if now, would := r.decide(*s).Verdict, r.decide(with).Verdict; would != now {
			ev["would_verdict"] = string(would)
		}
	}
	ev["variant"] = variant
	reason.Message = Message(CodeTextModel, "en", ev)
	s.reasons = append(s.reasons, reason)
	return customer
}

// textCodes are the reasons the rules give for the words of a lead, which
// the text model may take back.
var textCodes = map[string]bool{CodeVendorPitch: true, CodeJobApplication: true, CodeMessageHasLink: true, CodeMostlyLinks: true,
	CodeTestEntry: true, CodeGibberish: true, CodeModelOffer: true, CodeModelJob: true, CodeModelNonsense: true}

// RuleReason tells whether a reason code is one the rules give (the text
// model's included), not one added by evidence or a person.
func RuleReason(code string) bool {
	return ruleIndex(code) >= 0 || code == CodeTextModel || code == CodeModelRequest || code == CodeServiceNamed
}

// TextReason returns a decision's text-model reason, if it has one.
func TextReason(d model.Decision) (model.Reason, bool) {
	for _, r := range d.Reasons {
		if r.Code == CodeTextModel {
			return r, true
		}
	}
	return model.Reason{}, false
}

// textModelJSON is the persisted form of a TextModel.
type textModelJSON struct {
	Version   int                 `json:"v"`
	Judged    int                 `json:"judged"`
	Junk      int                 `json:"junk"`
	TrainedAt int64               `json:"trained_at"`
	Total     [2]int              `json:"total"`
	Features  map[string][2]int32 `json:"features"`
}

// MarshalJSON encodes the model for storage.
func (m *TextModel) MarshalJSON() ([]byte, error) {
	return json.Marshal(textModelJSON{Version: 1, Judged: m.Judged, Junk: m.Junk,
		TrainedAt: m.TrainedAt.UnixMilli(), Total: m.total, Features: m.feats})
}

// UnmarshalJSON decodes a stored model, checking that its counts add up.
func (m *TextModel) UnmarshalJSON(b []byte) error {
	var j textModelJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("text model: %w", err)
	}
	if j.Version != 1 {
		return fmt.Errorf("text model: unknown version %d", j.Version)
	}
	var total [2]int
	for _, n := range j.Features {
		if n[0] < 0 || n[1] < 0 {
			return errors.New("text model: negative count")
		}
		total[0] += int(n[0])
		total[1] += int(n[1])
	}
	if total != j.Total || j.Junk < 0 || j.Junk > j.Judged {
		return errors.New("text model: counts do not add up")
	}
	if j.Features == nil {
		j.Features = map[string][2]int32{}
	}
	*m = TextModel{Judged: j.Judged, Junk: j.Junk, TrainedAt: time.UnixMilli(j.TrainedAt).UTC(), total: total, feats: j.Features}
	return nil
}

// CheckTextSettings reports what is wrong with a site's text_model settings,
// each problem naming its key under qualify.
func CheckTextSettings(s model.TextModelSettings) error {
	if s.MaxPoints < 0 || s.MaxPoints > MaxTextMaxPoints {
		return fmt.Errorf("qualify.text_model.max_points: %d is not between 1 and %d (0 means %d)",
			s.MaxPoints, MaxTextMaxPoints, DefaultTextMaxPoints)
	}
	return nil
}
