package qualify

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify/intent"
)

// The floor the held-out part of the corpus holds (TestHeldout). The
// accuracy is the one reached when the model was trained (see
// docs/qualification.md), less a small margin; a change that loses more, lets
// a junk lead through or turns a second real request into junk fails.
const (
	// heldoutMinAccuracy is the floor of the held-out set in the corpus:
	// k-*.jsonl, written blind while rules 2026-12-06.12-14 were tuned and
	// merged after them, reached 95.4% when it was scored once (2026-12-06,
	// rules 2026-12-06.14; i-*.jsonl before it 93.3%, h-*.jsonl 92.5%). The
	// next round of tuning moves it to training first.
	heldoutMinAccuracy    = 0.94
	heldoutMaxRequestJunk = 1
)

// wantVerdict is the verdict the product owes each class of the corpus: a
// request is clean, the grey area waits, everything else is junk.
func wantVerdict(class string) model.Verdict {
	switch class {
	case "request":
		return model.VerdictClean
	case "grey":
		return model.VerdictReview
	}
	return model.VerdictJunk
}

// corpusLead is a corpus line as a lead from a form a person filled in
// (30 seconds), judged by the site of its country.
func corpusLead(e intent.Example) (*model.Lead, Context) {
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	l := &model.Lead{Name: e.Name, Phone: e.Phone, Email: e.Email, Message: e.Message,
		FillMS: ms(30000), SubmittedAt: at}
	return l, Context{Now: at.Add(time.Second), Country: e.Country}
}

// judged is what the whole judgement made of a set of corpus lines.
type judged struct {
	total, right, junkClean, requestJunk int
	byLang, byClass                      map[string]*tally
	confusion                            map[string]map[model.Verdict]int
	// junkCleanLines and wrong describe the lines judged wrong.
	junkCleanLines, wrong []string
}

type tally struct{ n, right int }

// judgeLines scores corpus lines through r's whole judgement.
func judgeLines(r *Rules, es []intent.Example) judged {
	j := judged{byLang: map[string]*tally{}, byClass: map[string]*tally{}, confusion: map[string]map[model.Verdict]int{}}
	for _, e := range es {
		l, c := corpusLead(e)
		d := r.Score(l, c)
		want := wantVerdict(e.Class)
		ok := d.Verdict == want
		for _, x := range []struct {
			m map[string]*tally
			k string
		}{{j.byLang, e.Lang}, {j.byClass, e.Class}} {
			if x.m[x.k] == nil {
				x.m[x.k] = &tally{}
			}
			x.m[x.k].n++
			if ok {
				x.m[x.k].right++
			}
		}
		if j.confusion[e.Class] == nil {
			j.confusion[e.Class] = map[model.Verdict]int{}
		}
		j.confusion[e.Class][d.Verdict]++
		j.total++
		if ok {
			j.right++
			continue
		}
		if want == model.VerdictJunk && d.Verdict == model.VerdictClean {
			j.junkClean++
			j.junkCleanLines = append(j.junkCleanLines, fmt.Sprintf("%s/%s (%s): junk judged clean: %v %q", e.File, e.ID, e.Class, codesOf(d), e.Message))
		}
		if e.Class == "request" && d.Verdict == model.VerdictJunk {
			j.requestJunk++
		}
		j.wrong = append(j.wrong, fmt.Sprintf("%s/%s %s -> %s %v %q", e.File, e.ID, e.Class, d.Verdict, codesOf(d), e.Message))
	}
	return j
}

// add counts o's lines into j.
func (j *judged) add(o judged) {
	if j.byLang == nil {
		*j = judged{byLang: map[string]*tally{}, byClass: map[string]*tally{}, confusion: map[string]map[model.Verdict]int{}}
	}
	j.total += o.total
	j.right += o.right
	j.junkClean += o.junkClean
	j.requestJunk += o.requestJunk
	j.junkCleanLines = append(j.junkCleanLines, o.junkCleanLines...)
	j.wrong = append(j.wrong, o.wrong...)
	for _, x := range [][2]map[string]*tally{{j.byLang, o.byLang}, {j.byClass, o.byClass}} {
		for k, t := range x[1] {
			if x[0][k] == nil {
				x[0][k] = &tally{}
			}
			x[0][k].n += t.n
			x[0][k].right += t.right
		}
	}
	for c, m := range o.confusion {
		if j.confusion[c] == nil {
			j.confusion[c] = map[model.Verdict]int{}
		}
		for v, n := range m {
			j.confusion[c][v] += n
		}
	}
}

// String is the report: the totals, per language and per class, and the
// confusion table.
func (j judged) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d leads, %d right (%.1f%%), %d junk judged clean, %d requests judged junk\n",
		j.total, j.right, pct(j.right, j.total), j.junkClean, j.requestJunk)
	for _, m := range []map[string]*tally{j.byLang, j.byClass} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-9s %4d leads %5.1f%% right\n", k, m[k].n, pct(m[k].right, m[k].n))
		}
	}
	fmt.Fprintf(&b, "confusion (rows: class; columns: judged clean, review, junk):\n")
	for _, c := range []string{"request", "grey", "offer", "job", "nonsense"} {
		fmt.Fprintf(&b, "  %-9s", c)
		for _, v := range []model.Verdict{model.VerdictClean, model.VerdictReview, model.VerdictJunk} {
			fmt.Fprintf(&b, " %5d", j.confusion[c][v])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestHeldout scores the held-out part of the corpus (split "heldout",
// which training never reads) through the whole judgement, reports it per
// language and per class with the confusion table, and holds the floor: no
// junk lead judged clean, at most heldoutMaxRequestJunk real requests
// judged junk, and the accuracy reached.
func TestHeldout(t *testing.T) {
	es, _, err := intent.ReadCorpus(os.DirFS("corpus"), ".")
	if err != nil {
		t.Fatal(err)
	}
	var held []intent.Example
	for _, e := range es {
		if e.Split == intent.SplitHeldout {
			held = append(held, e)
		}
	}
	if len(held) == 0 {
		// Between two held-out sets: the last one was scored and trains
		// now, the next is not merged yet (corpus/FORMAT.md).
		t.Skip("no corpus line is held out (split \"heldout\"): the last held-out set trains now and the next is not merged yet; nothing to score")
	}
	j := judgeLines(mustRules(t, model.Qualify{}), held)
	t.Log("\nheld-out: " + j.String())
	if testing.Verbose() {
		t.Log("wrong:\n" + strings.Join(j.wrong, "\n"))
	}
	for _, l := range j.junkCleanLines {
		t.Error(l)
	}
	if j.requestJunk > heldoutMaxRequestJunk {
		t.Errorf("%d real requests judged junk, at most %d", j.requestJunk, heldoutMaxRequestJunk)
	}
	if acc := float64(j.right) / float64(j.total); acc < heldoutMinAccuracy {
		t.Errorf("accuracy %.3f under the floor %.3f", acc, heldoutMinAccuracy)
	}
}
