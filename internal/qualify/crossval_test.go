package qualify

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify/intent"
)

// TestCrossValidation measures the whole judgement on the training part of
// the corpus only, by k-fold cross-validation: the model is trained on all
// folds but one and the lines of that fold are scored through Rules.Score.
// It is how the model, its features and the rules are tuned without looking
// at the held-out part, which is scored once (TestHeldout). It trains k
// models, so it runs only when CLEANADS_CROSSVAL is set:
//
//	CLEANADS_CROSSVAL=1 go test ./internal/qualify -run TestCrossValidation -v
func TestCrossValidation(t *testing.T) {
	if os.Getenv("CLEANADS_CROSSVAL") == "" {
		t.Skip("set CLEANADS_CROSSVAL=1 to train and score the folds (a minute or more)")
	}
	es, _, err := intent.ReadCorpus(os.DirFS("corpus"), ".")
	if err != nil {
		t.Fatal(err)
	}
	intent.SortExamples(es)
	var train []intent.Example
	for _, e := range es {
		if e.Split == intent.SplitTrain {
			train = append(train, e)
		}
	}
	const k = 5
	// CLEANADS_CROSSVAL_OPTIONS, a JSON object of intent.TrainOptions
	// fields, tries other training settings than the defaults.
	opts := intent.DefaultTrainOptions()
	if o := os.Getenv("CLEANADS_CROSSVAL_OPTIONS"); o != "" {
		if err := json.Unmarshal([]byte(o), &opts); err != nil {
			t.Fatalf("CLEANADS_CROSSVAL_OPTIONS: %v", err)
		}
	}
	var all judged
	var dump *os.File
	if p := os.Getenv("CLEANADS_CROSSVAL_DUMP"); p != "" {
		if dump, err = os.Create(p); err != nil {
			t.Fatal(err)
		}
		defer dump.Close()
	}
	for fold := range k {
		var fit, held []intent.Example
		for _, e := range train {
			if intent.Fold(e, k) == fold {
				held = append(held, e)
			} else {
				fit = append(fit, e)
			}
		}
		m, _, err := intent.Train(fit, "crossval", opts)
		if err != nil {
			t.Fatal(err)
		}
		r := mustRules(t, model.Qualify{})
		r.intent = m
		all.add(judgeLines(r, held))
		if dump != nil {
			dumpLines(dump, r, held)
		}
	}
	t.Log("\ncross-validation on the training part: " + all.String())
	if testing.Verbose() && os.Getenv("CLEANADS_CROSSVAL") == "wrong" {
		t.Log("wrong:\n" + strings.Join(all.wrong, "\n"))
	}
	for _, l := range all.junkCleanLines {
		t.Log(l)
	}
}

// dumpLines writes, for each line, what the model and the other rules made
// of it, one JSON object a line, to study decision rules without training.
func dumpLines(f *os.File, r *Rules, es []intent.Example) {
	enc := json.NewEncoder(f)
	for _, e := range es {
		l, c := corpusLead(e)
		d := r.Score(l, c)
		base, floor, final := 0, false, false
		var codes []string
		ev := map[string]any{}
		for _, x := range d.Reasons {
			ev[x.Code] = x.Evidence
			switch x.Code {
			case CodeModelRequest, CodeModelOffer, CodeModelJob, CodeModelNonsense, CodeNoEvidence:
				continue
			}
			codes = append(codes, x.Code)
			base += x.Points
			final = final || x.Final
			floor = floor || ruleTable[ruleIndex(x.Code)].AtLeastReview
		}
		j := r.intent.Judge(intent.Digits(e.Message))
		comeIn := r.asksToComeIn(tokens(fold(intent.Digits(e.Message)), nil))
		enc.Encode(map[string]any{"id": e.File + "/" + e.ID, "class": e.Class, "lang": e.Lang,
			"probs": j.Probs, "words": j.Words, "jclass": j.Class.String(), "confident": j.Confident, "evidence": ev, "base": base, "floor": floor, "final": final,
			"comein": comeIn, "codes": codes, "verdict": d.Verdict, "msg": e.Message})
	}
}
