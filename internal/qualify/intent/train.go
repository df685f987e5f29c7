package intent

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"sort"
	"strings"
)

// Version names the feature extraction and training; it goes into the
// model file and the rules' version.
const Version = "intent-5"

// Example is one labelled lead of the corpus (../corpus/FORMAT.md).
type Example struct {
	ID       string `json:"id"`
	Lang     string `json:"lang"`
	Class    string `json:"class"`
	Split    string `json:"split"`
	Business string `json:"business"`
	Country  string `json:"country"`
	Name     string `json:"name"`
	Phone    string `json:"phone"`
	Email    string `json:"email"`
	Message  string `json:"message"`
	Note     string `json:"note,omitempty"`
	// File is the corpus file the line came from.
	File string `json:"-"`
}

// The corpus's splits: the model learns from train only; heldout is scored
// once, at the end, through the whole judgement.
const (
	SplitTrain   = "train"
	SplitHeldout = "heldout"
)

// ReadCorpus reads every *.jsonl file of dir in fsys, checking each line,
// and returns the lines and the corpus's SHA-256 (CorpusHash).
func ReadCorpus(fsys fs.FS, dir string) ([]Example, string, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, "", err
	}
	if len(names) == 0 {
		return nil, "", fmt.Errorf("no *.jsonl files in %s", dir)
	}
	sort.Strings(names)
	h := sha256.New()
	var out []Example
	var errs []error
	seen := map[string]string{}
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, "", err
		}
		base := path.Base(name)
		fmt.Fprintf(h, "%s\n%d\n", base, len(b))
		h.Write(b)
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var e Example
			if err := json.Unmarshal(line, &e); err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: %w", base, n, err))
				continue
			}
			e.File = base
			key := base + "/" + e.ID
			if _, dup := seen[key]; dup || e.ID == "" {
				errs = append(errs, fmt.Errorf("%s:%d: id %q missing or repeated", base, n, e.ID))
			}
			seen[key] = e.ID
			if _, ok := ParseClass(e.Class); !ok {
				errs = append(errs, fmt.Errorf("%s:%d: unknown class %q", base, n, e.Class))
			}
			if e.Split != SplitTrain && e.Split != SplitHeldout {
				errs = append(errs, fmt.Errorf("%s:%d: unknown split %q", base, n, e.Split))
			}
			out = append(out, e)
		}
		if err := sc.Err(); err != nil {
			return nil, "", fmt.Errorf("%s: %w", base, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, "", err
	}
	return out, hex.EncodeToString(h.Sum(nil)), nil
}

// TrainOptions are the training's settings, kept in the model file.
type TrainOptions struct {
	Epochs       int     `json:"epochs"`
	LearningRate float64 `json:"learning_rate"`
	// Decay lowers the learning rate each epoch: lr / (1 + decay*epoch).
	Decay float64 `json:"decay"`
	// L2 pulls the weights a line touches toward zero.
	L2   float64 `json:"l2"`
	Seed uint64  `json:"seed"`
	// CalibrationFolds: the temperature and the confidence thresholds are
	// fitted on every training line, each judged by a model trained on the
	// other folds (cross-validation; the fold by a hash of the line's file
	// and id, the same every time).
	CalibrationFolds int `json:"calibration_folds"`
	// AverageFrom, when above 0, makes the weights the average of the
	// weights at the end of each epoch from this one on (averaged
	// stochastic gradient descent): the last steps' noise evens out, and
	// a line seen late counts no more than one seen early.
	AverageFrom int `json:"average_from,omitempty"`
}

// DefaultTrainOptions are the settings `go generate` trains with.
func DefaultTrainOptions() TrainOptions {
	return TrainOptions{Epochs: 60, LearningRate: 1, Decay: 0.1, L2: 8e-3, Seed: 29, CalibrationFolds: 4, AverageFrom: 30}
}

type doc struct {
	feats []uint32
	class Class
}

func docsOf(es []Example) []doc {
	var words []word
	var buf []byte
	var feats []feature
	out := make([]doc, 0, len(es))
	for _, e := range es {
		c, _ := ParseClass(e.Class)
		words, buf = splitWords(e.Message, buf[:0], words[:0])
		feats = extract(words, buf, feats[:0])
		d := doc{feats: make([]uint32, len(feats)), class: c}
		for i, f := range feats {
			d.feats[i] = f.h
		}
		out = append(out, d)
	}
	return out
}

// Report says how a training went: the cross-validation's figures.
type Report struct {
	Lines, Folds int
	// Accuracy is the share of training lines whose likeliest class, by
	// the model trained without their fold, is right (quantised model,
	// before thresholds).
	Accuracy float64
	// Confusion counts training lines by class and likeliest class.
	Confusion [NumClasses][NumClasses]int
}

// Train builds a model from the training lines of the corpus (split
// "train"; other lines are ignored). Each line is first judged by a model
// fitted on the other folds (o.CalibrationFolds); the temperature and the
// per-class confidence thresholds are chosen on those judgements, so they
// are what the model does on lines it has not seen. Then it is fitted again
// on every training line with the same settings. corpus is the corpus's
// hash, written into the header. The result depends only on the lines,
// their order and the options.
func Train(all []Example, corpus string, o TrainOptions) (*Model, Report, error) {
	var train []Example
	for _, e := range all {
		if e.Split == SplitTrain {
			train = append(train, e)
		}
	}
	if len(train) == 0 {
		return nil, Report{}, errors.New("no training lines")
	}
	k := max(o.CalibrationFolds, 2)
	rep := Report{Lines: len(train), Folds: k}
	h := Header{Format: 1, Buckets: Buckets, Classes: NumClasses, Version: Version, Corpus: corpus, Options: o, Temperature: 1}
	for _, e := range train {
		c, _ := ParseClass(e.Class)
		h.Trained[c]++
	}
	docs := docsOf(train)
	folds := make([]int, len(train))
	for i, e := range train {
		folds[i] = Fold(e, k)
	}
	logits := make([][NumClasses]float64, len(docs))
	for f := range k {
		var fit []doc
		for i, d := range docs {
			if folds[i] != f {
				fit = append(fit, d)
			}
		}
		m := fitModel(fit, o, h)
		for i, d := range docs {
			if folds[i] == f {
				logits[i] = m.logits(d.feats)
			}
		}
	}
	h.Temperature = fitTemperature(logits, docs)
	probs := make([][NumClasses]float64, len(docs))
	for i := range docs {
		var l [NumClasses]float64
		for c := range l {
			l[c] = logits[i][c] / h.Temperature
		}
		probs[i] = softmax(l)
		top := argmax(probs[i])
		rep.Confusion[docs[i].class][top]++
		if top == docs[i].class {
			rep.Accuracy++
		}
	}
	rep.Accuracy /= float64(len(docs))
	h.Confident, h.Calibration = thresholds(probs, docs)
	final := fitModel(docs, o, h)
	final.letters, final.LetterPairs = letterCounts(train)
	return final, rep, nil
}

// letterCounts counts the letter pairs of the messages and names of the
// lines that are not nonsense, per bucket (up to 255) and in all.
func letterCounts(es []Example) ([]uint8, int) {
	counts := make([]uint8, letterBuckets)
	total := 0
	for _, e := range es {
		if e.Class == Nonsense.String() {
			continue
		}
		total += countLetters(counts, e.Message)
		total += countLetters(counts, e.Name)
	}
	return counts, total
}

func argmax(p [NumClasses]float64) Class {
	best := Class(0)
	for c := range p {
		if p[c] > p[best] {
			best = Class(c)
		}
	}
	return best
}

// fitModel runs stochastic gradient descent on the softmax loss, each class
// weighted so that every class counts as much in total, over the lines in an
// order shuffled by the seed, and quantises the weights.
func fitModel(docs []doc, o TrainOptions, h Header) *Model {
	w := make([]float64, Buckets*NumClasses)
	var bias [NumClasses]float64
	var count [NumClasses]int
	for _, d := range docs {
		count[d.class]++
	}
	var cw [NumClasses]float64
	for c, n := range count {
		if n > 0 {
			cw[c] = float64(len(docs)) / float64(NumClasses*n)
		}
	}
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	var avg []float64
	var avgBias [NumClasses]float64
	averaged := 0
	for epoch := range o.Epochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		lr := o.LearningRate / (1 + o.Decay*float64(epoch))
		for _, i := range order {
			d := docs[i]
			norm := 1 / math.Sqrt(float64(len(d.feats)))
			var l [NumClasses]float64
			for c := range l {
				l[c] = bias[c]
			}
			for _, f := range d.feats {
				row := w[int(f)*NumClasses : int(f)*NumClasses+NumClasses]
				for c := range l {
					l[c] += float64(row[c] * norm)
				}
			}
			p := softmax(l)
			var g [NumClasses]float64
			for c := range g {
				y := 0.0
				if Class(c) == d.class {
					y = 1
				}
				g[c] = float64((p[c] - y) * cw[d.class])
				bias[c] -= float64(lr * g[c] * 0.1)
			}
			for _, f := range d.feats {
				row := w[int(f)*NumClasses : int(f)*NumClasses+NumClasses]
				for c := range row {
					row[c] -= float64(lr * float64(g[c]*norm+o.L2*row[c]))
				}
			}
		}
		if o.AverageFrom > 0 && epoch+1 >= o.AverageFrom {
			if avg == nil {
				avg = make([]float64, len(w))
			}
			for i, x := range w {
				avg[i] += x
			}
			for c := range avgBias {
				avgBias[c] += bias[c]
			}
			averaged++
		}
	}
	if averaged > 0 {
		for i := range w {
			w[i] = avg[i] / float64(averaged)
		}
		for c := range bias {
			bias[c] = avgBias[c] / float64(averaged)
		}
	}
	maxAbs := 0.0
	for _, x := range w {
		maxAbs = max(maxAbs, math.Abs(x))
	}
	if maxAbs == 0 {
		maxAbs = 1
	}
	h.Scale = maxAbs / 127
	h.Bias = bias
	m := &Model{Header: h, w: make([]byte, len(w))}
	for i, x := range w {
		m.w[i] = byte(int8(math.Round(x / h.Scale)))
	}
	return m
}

// logits are the model's raw scores of a line's features, before the
// temperature.
func (m *Model) logits(feats []uint32) [NumClasses]float64 {
	var sums [NumClasses]int32
	for _, f := range feats {
		row := m.w[int(f)*NumClasses : int(f)*NumClasses+NumClasses]
		for c := range sums {
			sums[c] += int32(int8(row[c]))
		}
	}
	norm := 1 / math.Sqrt(float64(len(feats)))
	var l [NumClasses]float64
	for c := range l {
		l[c] = m.Bias[c] + float64(sums[c])*m.Scale*norm
	}
	return l
}

// fitTemperature finds the temperature (0.2 to 5, in steps of 0.05) with the
// least log loss on the calibration lines.
func fitTemperature(logits [][NumClasses]float64, docs []doc) float64 {
	best, bestLoss := 1.0, math.Inf(1)
	for k := 4; k <= 100; k++ {
		t := float64(k) * 0.05
		loss := 0.0
		for i, l := range logits {
			var s [NumClasses]float64
			for c := range s {
				s[c] = l[c] / t
			}
			loss -= math.Log(max(softmax(s)[docs[i].class], 1e-12))
		}
		if loss < bestLoss {
			best, bestLoss = t, loss
		}
	}
	return best
}

// thresholds chooses, per class, the probability from which the model's
// word counts, on the lines judged by cross-validation. For request (which
// lets a lead be clean): above the lines of offer, job or nonsense the
// model took for a request, by a margin, and from there the one with the
// fewest mistakes among requests and grey lines. For offer, job and
// nonsense (which make a lead junk): above the real requests taken for
// them, by a margin (for offer and job, their junk probability, JunkP);
// for grey, above the requests taken for grey. Above all
// such lines but one in a thousand for request, two for the others
// (tolerancePerMille, junkTolerancePerMille): over thousands of lines the
// single most confident mistake is an outlier that would hold every real
// request back, and the rules' own reasons stand behind the model. None is
// below 0.5 or above 0.995.
func thresholds(probs [][NumClasses]float64, docs []doc) ([NumClasses]float64, string) {
	const margin = 0.01
	// mistakes[c] are the probabilities of the lines wrongly taken for c
	// that set c's threshold; against[c] counts the lines they are drawn
	// from (junk for request, requests for the others).
	var mistakes [NumClasses][]float64
	var against [NumClasses]int
	for i, p := range probs {
		top := argmax(p)
		truth := docs[i].class
		switch truth {
		case Offer, Job, Nonsense:
			against[Request]++
		case Request:
			for c := range against {
				if Class(c) != Request {
					against[c]++
				}
			}
		}
		if top == truth {
			continue
		}
		switch {
		case top == Request && truth != Grey:
			mistakes[Request] = append(mistakes[Request], p[top])
		case truth == Request:
			mistakes[top] = append(mistakes[top], confidentP(p, top))
		}
	}
	var t [NumClasses]float64
	for c := range t {
		t[c] = 0.5
		m := mistakes[c]
		sort.Float64s(m)
		tol := tolerancePerMille
		if Class(c) != Request {
			tol = junkTolerancePerMille
		}
		allow := against[c] * tol / 1000
		if len(m) > allow {
			t[c] = max(t[c], m[len(m)-1-allow]+margin)
		}
	}
	// From the floor junk sets, the threshold for a request that gets the
	// most requests and grey lines right.
	floor := t[Request]
	best, bestErr := floor, math.MaxInt
	for k := 0; k <= 100; k++ {
		tau := floor + (0.995-floor)*float64(k)/100
		errs := 0
		for i, p := range probs {
			pass := argmax(p) == Request && p[Request] >= tau
			switch docs[i].class {
			case Request:
				if !pass {
					errs++
				}
			case Grey:
				if pass {
					errs++
				}
			}
		}
		if errs < bestErr {
			best, bestErr = tau, errs
		}
	}
	t[Request] = best
	var notes []string
	for c := range t {
		t[c] = min(t[c], 0.995)
		notes = append(notes, fmt.Sprintf("%s %.3f", Class(c), t[c]))
	}
	return t, "temperature and thresholds by cross-validation on the training lines (least log loss); confident from: " + strings.Join(notes, ", ")
}

// tolerancePerMille is how many junk lines in a thousand the request
// threshold may let be taken for requests (thresholds): a junk lead judged
// clean is the mistake the product exists to prevent.
const tolerancePerMille = 1

// junkTolerancePerMille is how many real requests in a thousand the offer,
// job, nonsense and grey thresholds may let be taken for them. Two, not
// one: measured by cross-validation (docs/qualification.md), it calls
// about 1,000 more training lines of junk junk for one more request, and
// the rules' own reasons still stand behind the model.
const junkTolerancePerMille = 2

// SortExamples orders lines by file and id, the order training reads them.
func SortExamples(es []Example) {
	slices.SortStableFunc(es, func(a, b Example) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// Fold is the fold of k, from 0, a line belongs to in cross-validation:
// chosen by a hash of its file and id, the same every time.
func Fold(e Example, k int) int {
	h := fnv.New32a()
	h.Write([]byte("fold/" + e.File + "/" + e.ID))
	return int(h.Sum32() % uint32(k))
}
