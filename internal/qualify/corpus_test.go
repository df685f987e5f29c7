package qualify

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
)

// corpusEntry is one labelled lead of testdata/corpus.jsonl.
type corpusEntry struct {
	ID      string        `json:"id"`
	Lang    string        `json:"lang"`
	Expect  model.Verdict `json:"expect"`
	Reason  string        `json:"reason"`
	Country string        `json:"country"`
	// FillBy says who measured lead.fill_ms: "tracker" (t.js in the
	// visitor's browser; the default) or "backend" (the site's own server
	// posted it with the API key).
	FillBy   string     `json:"fill_by"`
	Lead     model.Lead `json:"lead"`
	Previous *struct {
		LeadID model.LeadID `json:"lead_id"`
		At     time.Time    `json:"at"`
		Match  string       `json:"match"`
	} `json:"previous"`
	Token *struct {
		Checked      bool   `json:"checked"`
		Valid        bool   `json:"valid"`
		Problem      string `json:"problem"`
		ServerFillMS int64  `json:"server_fill_ms"`
	} `json:"token"`
}

func (e corpusEntry) context() Context {
	c := Context{Now: e.Lead.SubmittedAt.Add(time.Second), Country: e.Country, FillBy: e.FillBy}
	if p := e.Previous; p != nil {
		c.Previous = &Previous{LeadID: p.LeadID, At: p.At, Match: p.Match}
	}
	if t := e.Token; t != nil {
		c.Token = TokenCheck{Checked: t.Checked, Valid: t.Valid, Problem: t.Problem, ServerFillMS: t.ServerFillMS}
	}
	return c
}

func loadCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	f, err := os.Open("testdata/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var e corpusEntry
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("corpus line %d: %v", n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCorpus scores the labelled corpus, reports precision and recall per
// verdict, and holds the line the product promises: no junk lead is judged
// clean, at most 2% of clean leads are judged junk, and each labelled reason
// is among the reasons given.
func TestCorpus(t *testing.T) {
	corpus := loadCorpus(t)
	if len(corpus) < 150 {
		t.Errorf("corpus has %d leads, want at least 150", len(corpus))
	}
	r, err := New(model.Qualify{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := []model.Verdict{model.VerdictClean, model.VerdictReview, model.VerdictJunk}
	confusion := map[[2]model.Verdict]int{} // {expected, got}
	langs := map[string]int{}
	seen := map[string]bool{}
	for _, e := range corpus {
		if seen[e.ID] {
			t.Errorf("%s: duplicate id", e.ID)
		}
		seen[e.ID] = true
		langs[e.Lang]++
		d := r.Score(&e.Lead, e.context())
		confusion[[2]model.Verdict{e.Expect, d.Verdict}]++
		codes := make([]string, len(d.Reasons))
		for i, x := range d.Reasons {
			codes[i] = x.Code
		}
		if d.Verdict != e.Expect {
			t.Logf("%s: want %s, got %s (score %d, reasons %v)", e.ID, e.Expect, d.Verdict, d.Score, codes)
		}
		if e.Reason != "" && !slices.Contains(codes, e.Reason) {
			t.Errorf("%s: want reason %s among %v", e.ID, e.Reason, codes)
		}
		if e.Expect == model.VerdictJunk && d.Verdict == model.VerdictClean {
			t.Errorf("%s: junk lead judged clean (score %d, reasons %v)", e.ID, d.Score, codes)
		}
		if e.Expect == model.VerdictClean {
			// Real-looking numbers in the corpus must be real numbers.
			for _, c := range codes {
				if strings.HasPrefix(c, "PHONE_") || strings.HasPrefix(c, "EMAIL_") {
					t.Errorf("%s: clean lead has contact reason %s", e.ID, c)
				}
			}
		}
	}
	var b strings.Builder
	correct := 0
	for _, v := range verdicts {
		correct += confusion[[2]model.Verdict{v, v}]
	}
	fmt.Fprintf(&b, "corpus: %d leads (%d tr, %d en, %d de), accuracy %.1f%% (%d correct)\n",
		len(corpus), langs["tr"], langs["en"], langs["de"], pct(correct, len(corpus)), correct)
	fmt.Fprintf(&b, "%-8s %8s %8s %8s %10s %8s\n", "verdict", "labelled", "judged", "correct", "precision", "recall")
	for _, v := range verdicts {
		labelled, judged := 0, 0
		for _, w := range verdicts {
			labelled += confusion[[2]model.Verdict{v, w}]
			judged += confusion[[2]model.Verdict{w, v}]
		}
		ok := confusion[[2]model.Verdict{v, v}]
		fmt.Fprintf(&b, "%-8s %8d %8d %8d %9.1f%% %7.1f%%\n", v, labelled, judged, ok, pct(ok, judged), pct(ok, labelled))
	}
	fmt.Fprintf(&b, "confusion (rows labelled, columns judged clean/review/junk):\n")
	for _, v := range verdicts {
		fmt.Fprintf(&b, "%-8s %4d %4d %4d\n", v, confusion[[2]model.Verdict{v, model.VerdictClean}],
			confusion[[2]model.Verdict{v, model.VerdictReview}], confusion[[2]model.Verdict{v, model.VerdictJunk}])
	}
	t.Log("\n" + b.String())

	clean := 0
	for _, w := range verdicts {
		clean += confusion[[2]model.Verdict{model.VerdictClean, w}]
	}
	if bad := confusion[[2]model.Verdict{model.VerdictClean, model.VerdictJunk}]; float64(bad) > 0.02*float64(clean) {
		t.Errorf("%d of %d clean leads judged junk, more than 2%%", bad, clean)
	}
	for _, l := range []string{"tr", "en", "de"} {
		if langs[l] < 30 {
			t.Errorf("corpus has %d %s leads, want at least 30", langs[l], l)
		}
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}
