package qualify

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

var trainedAt = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// ownerJudgements is the fixture: 40 messages in Turkish, English and German
// an owner judged, junk and real customers in turn.
func ownerJudgements(t testing.TB) []Judgement {
	t.Helper()
	b, err := os.ReadFile("testdata/owner_judgements.json")
	if err != nil {
		t.Fatal(err)
	}
	var js []Judgement
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	if len(js) != 40 {
		t.Fatalf("the fixture has %d judgements, want 40", len(js))
	}
	return js
}

func TestTextFeatures(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		// Turkish dotted and dotless i fold alike; diacritics drop.
		{"İMPLANT Işık", []string{"implant", "isik", "implant isik"}},
		{"Diş beyazlatma", []string{"dis", "beyazlatma", "dis beyazlatma"}},
		// German ß and umlauts; case.
		{"Größe ÄRGER", []string{"grosse", "arger", "grosse arger"}},
		// Numbers and one-letter words are no features and break a pair;
		// a word repeated counts once.
		{"SEO 2024 a SEO paket seo paket", []string{"seo", "paket", "seo paket", "paket seo"}},
		// The Turkish suffix after an apostrophe is a word of its own;
		// function words and greetings are no features, the words either
		// side make a pair.
		{"Merhaba, Google'da reklam için teklif", []string{"google", "reklam", "google reklam", "teklif", "reklam teklif"}},
		{"Guten Tag, ich hätte gerne einen Termin", []string{"hatte", "gerne", "hatte gerne", "termin", "gerne termin"}},
		{"", nil},
	} {
		if got := TextFeatures(tc.in, nil); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("TextFeatures(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTextModelExplains(t *testing.T) {
	m := TrainText(ownerJudgements(t), trainedAt)
	if m.Judged != 40 || m.Junk != 20 || !m.Live() {
		t.Fatalf("trained on %d (%d junk), live %v", m.Judged, m.Junk, m.Live())
	}
	junk := m.Judge("Special backlink offer for your clinic website", nil)
	if !junk.Junk || junk.LogOdds <= 1 || !slices.Contains(junk.Words, "backlink") || junk.Like < 2 {
		t.Errorf("a backlink pitch: %+v", junk)
	}
	cust := m.Judge("İmplant için randevu almak istiyorum", nil)
	if cust.Junk || cust.LogOdds >= -1 || len(cust.Words) == 0 || cust.Like < 2 {
		t.Errorf("an appointment request: %+v", cust)
	}
	for _, w := range cust.Words {
		if !strings.Contains("implant icin randevu almak istiyorum", w) {
			t.Errorf("word %q is not in the message", w)
		}
	}
	if j := m.Judge("Zzyzx qwv", nil); j.Known != 0 || j.LogOdds != 0 || len(j.Words) != 0 {
		t.Errorf("unknown words: %+v", j)
	}

	// The reason, in both languages.
	r := mustRules(t, model.Qualify{})
	lead := realLead()
	lead.Message = "We offer backlinks and a special SEO offer for your website"
	d := r.Score(&lead, Context{Country: "TR", Text: &Text{Model: m}})
	tm := reasonOf(d, CodeTextModel)
	if tm == nil || tm.Points <= 0 || tm.Points > DefaultTextMaxPoints || tm.Evidence["shadow"] != nil {
		t.Fatalf("text model reason: %+v in %v", tm, codesOf(d))
	}
	if !strings.HasPrefix(tm.Message, "The message is like ") || !strings.Contains(tm.Message, "leads you marked junk (words: ") ||
		!strings.Contains(tm.Message, "offer") {
		t.Errorf("message: %q", tm.Message)
	}
	if got := Message(CodeTextModel, "tr", tm.Evidence); !strings.Contains(got, "çöp olarak işaretlediğiniz") {
		t.Errorf("Turkish message: %q", got)
	}
	// Toward a real customer it takes back what the rules that read words
	// gave (here the link's points), and no more.
	lead.Message = "Merhaba, kanal tedavisi için randevu almak istiyorum, www.istanbuldis.example/randevu sayfasından"
	d = r.Score(&lead, Context{Country: "TR", Text: &Text{Model: m}})
	link := reasonOf(d, CodeMessageHasLink)
	if tm := reasonOf(d, CodeTextModel); tm == nil || link == nil || tm.Points >= 0 || tm.Points < -link.Points ||
		!strings.Contains(tm.Message, "real customers") || !strings.Contains(Message(CodeTextModel, "tr", tm.Evidence), "gerçek müşteri") {
		t.Errorf("a customer-like message with a link: %+v in %+v", tm, d.Reasons)
	}
	// A fast fill is not about words: nothing to take back.
	lead.Message, lead.FillMS = "Merhaba, kanal tedavisi için randevu almak istiyorum", ms(800)
	d = r.Score(&lead, Context{Country: "TR", Text: &Text{Model: m}})
	if tm := reasonOf(d, CodeTextModel); tm == nil || tm.Points != 0 || d.Verdict == model.VerdictClean {
		t.Errorf("a fast fill with a customer's words: %s, %+v", d.Verdict, tm)
	}
}

// neutralJudgements are n judgements whose junk messages use words no rule
// minds, so that the model alone moves the score.
func neutralJudgements(n int) []Judgement {
	js := make([]Judgement, n)
	for i := range js {
		js[i] = Judgement{Message: "Randevu almak istiyorum, hafta içi uygunum"}
		if i%2 == 0 {
			js[i] = Judgement{Message: "Quokka numbat wombat", Junk: true}
		}
	}
	return js
}

func TestTextModelShadowCountsNothing(t *testing.T) {
	m := TrainText(neutralJudgements(MinJudged-1), trainedAt)
	if m.Live() {
		t.Fatal("29 judgements made the model live")
	}
	// Words no model knows would wait for evidence: with that rule and the
	// built-in model's off, the lead is clean, and the shadow's would-be
	// verdict shows.
	r := mustRules(t, model.Qualify{Weights: map[string]int{CodeNoEvidence: 0, CodeModelNonsense: 0, CodeModelOffer: 0, CodeModelJob: 0}})
	lead := realLead()
	lead.Message = "quokka numbat wombat"
	without := r.Score(&lead, Context{Country: "TR"})
	with := r.Score(&lead, Context{Country: "TR", Text: &Text{Model: m, MaxPoints: 50}})
	tm := reasonOf(with, CodeTextModel)
	if tm == nil || tm.Points != 0 || tm.Evidence["shadow"] != true {
		t.Fatalf("shadow reason: %+v", tm)
	}
	if with.Score != without.Score || with.Verdict != without.Verdict {
		t.Errorf("in shadow the score moved: %d %s -> %d %s", without.Score, without.Verdict, with.Score, with.Verdict)
	}
	would, _ := tm.Evidence["points"].(int)
	if would < 30 {
		t.Errorf("it would have given %d points", would)
	}
	// 50 points on a clean lead: it would have been held for review.
	if without.Verdict != model.VerdictClean || tm.Evidence["would_verdict"] != string(model.VerdictReview) {
		t.Errorf("would_verdict %v (verdict %s)", tm.Evidence["would_verdict"], without.Verdict)
	}
	if !strings.HasPrefix(tm.Message, "In shadow, not counted until you have judged 30 leads (29 so far)") {
		t.Errorf("message: %q", tm.Message)
	}
}

func TestTextModelThreshold(t *testing.T) {
	js := neutralJudgements(40)
	r := mustRules(t, model.Qualify{})
	lead := realLead()
	lead.Message = "quokka numbat wombat"
	base := r.Score(&lead, Context{Country: "TR"}).Score
	for _, n := range []int{MinJudged - 1, MinJudged, len(js)} {
		m := TrainText(js[:n], trainedAt)
		d := r.Score(&lead, Context{Country: "TR", Text: &Text{Model: m}})
		tm := reasonOf(d, CodeTextModel)
		if tm == nil {
			t.Fatalf("%d judged: no reason", n)
		}
		counted := d.Score - base
		switch live := n >= MinJudged; {
		case live && (counted != tm.Points || counted <= 0 || tm.Evidence["shadow"] != nil):
			t.Errorf("%d judged: counted %d, reason %+v", n, counted, tm)
		case !live && (counted != 0 || tm.Points != 0):
			t.Errorf("%d judged: in shadow but counted %d", n, counted)
		}
	}
}

func TestTextModelCapAndSwitch(t *testing.T) {
	m := TrainText(ownerJudgements(t), trainedAt)
	r := mustRules(t, model.Qualify{})
	lead := realLead()
	for _, msg := range []string{"backlink SEO offer guest post cheap price special offer backlinks website",
		"randevu almak istiyorum implant muayene hafta içi uygun"} {
		lead.Message = msg
		for _, capPts := range []int{1, 10, 50} {
			d := r.Score(&lead, Context{Country: "TR", Text: &Text{Model: m, MaxPoints: capPts}})
			if tm := reasonOf(d, CodeTextModel); tm != nil && (tm.Points > capPts || tm.Points < -capPts) {
				t.Errorf("cap %d: %d points", capPts, tm.Points)
			}
		}
	}
	// No model (the site's switch is off, or nothing learnt): no reason.
	if d := r.Score(&lead, Context{Country: "TR"}); reasonOf(d, CodeTextModel) != nil {
		t.Error("a reason without a model")
	}
	for _, bad := range []int{-1, MaxTextMaxPoints + 1} {
		if err := CheckTextSettings(model.TextModelSettings{MaxPoints: bad}); err == nil || !strings.HasPrefix(err.Error(), "qualify.text_model.max_points: ") {
			t.Errorf("max_points %d: %v", bad, err)
		}
	}
	if err := CheckTextSettings(model.TextModelSettings{MaxPoints: 20}); err != nil {
		t.Error(err)
	}
}

func TestTextModelPersists(t *testing.T) {
	m := TrainText(ownerJudgements(t), trainedAt)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back TextModel
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Judged != m.Judged || back.Junk != m.Junk || !back.TrainedAt.Equal(m.TrainedAt) || back.Features() != m.Features() {
		t.Fatalf("round trip: %+v", back)
	}
	for _, msg := range []string{"backlink offer", "randevu almak istiyorum", "Termin für eine Zahnreinigung"} {
		if a, b := m.Judge(msg, nil), back.Judge(msg, nil); !reflect.DeepEqual(a, b) {
			t.Errorf("%q: %+v after a round trip, %+v before", msg, b, a)
		}
	}
	for _, bad := range []string{`{"v":2}`, `{"v":1,"judged":1,"junk":0,"total":[5,0],"features":{"a":[1,0]}}`,
		`{"v":1,"judged":1,"junk":2,"total":[0,0],"features":{}}`, `{"v":1,"features":{"a":[-1,1]},"total":[0,1]}`, `[`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}

func TestTextModelLeavesOut(t *testing.T) {
	// A message only one judged lead had: with that lead left out, the model
	// knows none of its words.
	js := []Judgement{{Message: "zanzibar quokka", Junk: true}, {Message: "randevu istiyorum"}, {Message: "seo teklif", Junk: true}}
	m := TrainText(js, trainedAt)
	if j := m.Judge("zanzibar quokka", nil); !j.Junk || j.Known == 0 {
		t.Fatalf("with its own label: %+v", j)
	}
	junk := true
	if j := m.Judge("zanzibar quokka", &junk); j.Known != 0 {
		t.Errorf("left out, it still knows %d features", j.Known)
	}
	// Left out of the only customer, the model has one class: it says nothing.
	no := false
	if j := m.Judge("randevu istiyorum", &no); j.Known != 0 {
		t.Errorf("one class left: %+v", j)
	}
}

func BenchmarkScoreWithTextModel(b *testing.B) {
	m := TrainText(ownerJudgements(b), trainedAt)
	r := mustRules(b, model.Qualify{})
	lead := realLead()
	lead.Message = "Merhaba, web siteniz için SEO ve backlink teklifimiz var, ilk ay ücretsiz deneme."
	c := Context{Country: "TR", Phone: CheckPhone(lead.Phone, "TR"), Text: &Text{Model: m}}
	b.ReportAllocs()
	for b.Loop() {
		r.Score(&lead, c)
	}
}

func BenchmarkScoreWithoutTextModel(b *testing.B) {
	r := mustRules(b, model.Qualify{})
	lead := realLead()
	lead.Message = "Merhaba, web siteniz için SEO ve backlink teklifimiz var, ilk ay ücretsiz deneme."
	c := Context{Country: "TR", Phone: CheckPhone(lead.Phone, "TR")}
	b.ReportAllocs()
	for b.Loop() {
		r.Score(&lead, c)
	}
}

func BenchmarkTrainText(b *testing.B) {
	base := ownerJudgements(b)
	js := make([]Judgement, 0, 5000)
	for i := 0; len(js) < cap(js); i++ {
		j := base[i%len(base)]
		j.Message += " " + strings.Repeat("x", 2+i%7) // some new words, as real messages have
		js = append(js, j)
	}
	b.ReportAllocs()
	for b.Loop() {
		TrainText(js, trainedAt)
	}
}

// TestTextModelKeepsTheHolds: however sure the live model is that a message
// is a real customer's, and at the highest cap, it takes back only what the
// word rules gave: the grey area's hold stays review, a fill under two
// seconds that we measured stays junk, and a backend's fast fill keeps its
// points.
func TestTextModelKeepsTheHolds(t *testing.T) {
	var js []Judgement
	for i := 0; i < MinJudged; i++ {
		js = append(js, Judgement{Message: "bonding fiyatı nedir www.klinik.example/bonding", Junk: false},
			Judgement{Message: "seo backlink paketi teklifimiz", Junk: true})
	}
	m := TrainText(js, trainedAt)
	if !m.Live() {
		t.Fatal("the model is not live")
	}
	r := mustRules(t, model.Qualify{})
	text := &Text{Model: m, MaxPoints: MaxTextMaxPoints}
	for _, tt := range []struct {
		name    string
		message string
		fill    int64
		fillBy  string
		verdict model.Verdict
		keep    string // a reason that must keep its points
	}{
		{"price only", "bonding fiyatı nedir", 9000, "", model.VerdictReview, CodePriceOnly},
		{"price only with a link, the link taken back", "bonding fiyatı nedir www.klinik.example/bonding", 9000, "", model.VerdictReview, CodePriceOnly},
		{"our tracker's fast fill", "bonding fiyatı nedir www.klinik.example/bonding", 800, FillByTracker, model.VerdictJunk, CodeFillTooFast},
		{"the backend's fast fill", "bonding fiyatı nedir www.klinik.example/bonding", 800, FillByBackend, model.VerdictJunk, CodeFillTooFast},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lead := realLead()
			lead.Message, lead.FillMS = tt.message, &tt.fill
			d := r.Score(&lead, Context{Country: "TR", Text: text, FillBy: tt.fillBy})
			tm := reasonOf(d, CodeTextModel)
			if tm == nil || tm.Evidence["toward"] != "customer" {
				t.Fatalf("the model's reason: %+v", tm)
			}
			if tm.Points == 0 && !strings.Contains(tm.Message, "only takes back what the rules that read words gave") {
				t.Errorf("a reason of 0 points does not say why: %q", tm.Message)
			}
			if d.Verdict != tt.verdict {
				t.Errorf("verdict %s (%d %v), want %s", d.Verdict, d.Score, codesOf(d), tt.verdict)
			}
			if k := reasonOf(d, tt.keep); k == nil || k.Points != r.Weight(tt.keep) {
				t.Errorf("%s: %+v", tt.keep, k)
			}
			words := 0
			for _, x := range d.Reasons {
				if textCodes[x.Code] {
					words += x.Points
				}
			}
			if -tm.Points > words {
				t.Errorf("the model took back %d points, the word rules gave %d", -tm.Points, words)
			}
		})
	}
}
