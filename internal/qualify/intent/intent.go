// Package intent owns the built-in model that reads what a lead's message
// means, in any language: a request to the business for its service, a
// price question or greeting with no concrete need (the grey area), an
// offer to the business (marketing, software, funding, staff...), someone
// offering themselves (a job, an internship), or nothing at all (keyboard
// mash, "test").
//
// It is a multinomial logistic regression over hashed character n-grams
// (2 to 5 letters, on lower-cased text with diacritics, Arabic letter
// variants and digits folded), word unigrams and bigrams and how the
// message starts, so unseen word forms of Turkish, German or Arabic still
// count by their pieces. It is
// trained by `go generate` (train/) on the labelled corpus in
// ../corpus, deterministically, with its probabilities calibrated by a
// temperature; the weights are quantised to int8 and embedded (model.bin).
// The model file names the SHA-256 of the corpus it was trained on, and a
// test fails when the corpus has changed since.
package intent

//go:generate go run ./train -corpus ../corpus -out model.bin

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
)

// Class is what a message is.
type Class uint8

// The classes, in the order of the model's rows.
const (
	Request  Class = iota // a customer's request for the business's service
	Grey                  // a price question, greeting or "call me" without a concrete need
	Offer                 // someone offering something to the business
	Job                   // someone offering themselves: a job, an internship
	Nonsense              // keyboard mash, "test", emoji only
	// NumClasses is how many classes there are.
	NumClasses = 5
)

var classNames = [NumClasses]string{"request", "grey", "offer", "job", "nonsense"}

// String is the class's name as the corpus writes it.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", c)
}

// ParseClass reads a class name as the corpus writes it.
func ParseClass(s string) (Class, bool) {
	for i, n := range classNames {
		if n == s {
			return Class(i), true
		}
	}
	return 0, false
}

// Header is what the model file says about itself, before the weights.
type Header struct {
	Format  int    `json:"format"`
	Buckets int    `json:"buckets"`
	Classes int    `json:"classes"`
	Version string `json:"version"`
	// Corpus is the SHA-256 of the corpus files it was trained on
	// (CorpusHash).
	Corpus string `json:"corpus"`
	// Scale turns a quantised weight into its value.
	Scale float64             `json:"scale"`
	Bias  [NumClasses]float64 `json:"bias"`
	// Temperature divides the logits before the softmax: fitted on a part
	// of the training split held out from fitting, so the probabilities
	// mean what they say.
	Temperature float64 `json:"temperature"`
	// Confident is, per class, the probability from which the class is
	// taken as said; chosen on the same calibration part. For offer and
	// job the probability compared is the junk's (JunkP): a pitch that
	// reads half like a job seeker's letter is no less junk.
	Confident [NumClasses]float64 `json:"confident"`
	// Trained counts the training lines per class; Calibration describes
	// how Temperature and Confident were found.
	Trained     [NumClasses]int `json:"trained"`
	Calibration string          `json:"calibration"`
	Options     TrainOptions    `json:"options"`
	// LetterPairs is how many letter pairs the letter statistics counted
	// in all (letters.go): what a pair's count is measured against.
	LetterPairs int `json:"letter_pairs"`
}

// Model is the built-in intent model. It is immutable and safe for
// concurrent use.
type Model struct {
	Header
	// w holds Buckets rows of NumClasses quantised weights, each an int8
	// kept as its byte: so the embedded model's are read where the binary
	// holds them (Default), not copied to the heap.
	w []byte
	// letters counts the pairs of neighbouring letters of the training
	// lines' words that are not nonsense (letters.go), up to 255.
	letters []uint8
	pool    sync.Pool
}

//go:embed model.bin
var embedded []byte

// builtIn parses the embedded model once. Its weights and letter counts
// stay in the binary's data (1.4 MB, pages of the file that scoring reads
// in) instead of a copy on the heap, which the GC counted twice at peak.
var builtIn = sync.OnceValues(func() (*Model, error) { return parse(embedded, false) })

// Default returns the model embedded in the binary, parsed once.
func Default() *Model {
	m, err := builtIn()
	if err != nil {
		// The file is part of the binary and covered by tests.
		panic("intent: embedded model: " + err.Error())
	}
	return m
}

const magic = "CLEANADS-INTENT\n"

// Load reads a model file: the magic line, one line of JSON header, then
// the weights.
func Load(b []byte) (*Model, error) { return parse(b, true) }

// parse is Load; clone says whether the model's weights are copied out of
// b, so that b may change afterwards.
func parse(b []byte, clone bool) (*Model, error) {
	rest, ok := bytes.CutPrefix(b, []byte(magic))
	if !ok {
		return nil, errors.New("not an intent model file")
	}
	line, weights, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		return nil, errors.New("intent model: no header")
	}
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, fmt.Errorf("intent model header: %w", err)
	}
	if h.Format != 1 || h.Buckets != Buckets || h.Classes != NumClasses {
		return nil, fmt.Errorf("intent model: format %d with %d buckets and %d classes, want 1, %d, %d",
			h.Format, h.Buckets, h.Classes, Buckets, NumClasses)
	}
	if len(weights) != Buckets*NumClasses+letterBuckets {
		return nil, fmt.Errorf("intent model: %d bytes of weights and letter counts, want %d",
			len(weights), Buckets*NumClasses+letterBuckets)
	}
	if h.Temperature <= 0 || h.Scale <= 0 {
		return nil, errors.New("intent model: temperature and scale must be positive")
	}
	if clone {
		weights = bytes.Clone(weights)
	}
	n := Buckets * NumClasses
	return &Model{Header: h, w: weights[:n:n], letters: weights[n:]}, nil
}

// Encode writes the model file Load reads.
func (m *Model) Encode() ([]byte, error) {
	h, err := json.Marshal(m.Header)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(magic)
	b.Write(h)
	b.WriteByte('\n')
	b.Write(m.w)
	b.Write(m.letters)
	return b.Bytes(), nil
}

// Judgement is what the model makes of one message.
type Judgement struct {
	// Probs are the calibrated probabilities of each class.
	Probs [NumClasses]float64
	// Class is the likeliest class and P its probability.
	Class Class
	P     float64
	// Confident says P (JunkP for offer and job) reaches the class's
	// confidence threshold.
	Confident bool
	// Words is how many words the message has.
	Words int
	// Evidence are the stretches of the message, as typed, that pushed
	// most toward Class (at most two, strongest first).
	Evidence []string
}

// JunkP is the probability that the message is junk: an offer, a job
// seeker or nonsense.
func (j Judgement) JunkP() float64 { return junkP(j.Probs) }

func junkP(p [NumClasses]float64) float64 { return p[Offer] + p[Job] + p[Nonsense] }

// confidentP is the probability compared with class c's threshold: the
// junk's for offer and job, whose lines are often read as a bit of both,
// c's own for the others.
func confidentP(p [NumClasses]float64, c Class) float64 {
	if c == Offer || c == Job {
		return junkP(p)
	}
	return p[c]
}

// Prob returns the probability of class c.
func (j Judgement) Prob(c Class) float64 { return j.Probs[c] }

type scratch struct {
	words []word
	buf   []byte
	feats []feature
}

// Judge reads a message. An empty message (no word) is judged on its
// length alone, which says it is grey.
func (m *Model) Judge(message string) Judgement {
	sc, _ := m.pool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	defer m.pool.Put(sc)
	sc.words, sc.buf = splitWords(message, sc.buf[:0], sc.words[:0])
	sc.feats = extract(sc.words, sc.buf, sc.feats[:0])
	var logits [NumClasses]float64
	var sums [NumClasses]int32
	for _, f := range sc.feats {
		row := m.w[int(f.h)*NumClasses : int(f.h)*NumClasses+NumClasses]
		for c := range sums {
			sums[c] += int32(int8(row[c]))
		}
	}
	norm := 1 / math.Sqrt(float64(len(sc.feats)))
	for c := range logits {
		logits[c] = (m.Bias[c] + float64(sums[c])*m.Scale*norm) / m.Temperature
	}
	j := Judgement{Words: len(sc.words)}
	j.Probs = softmax(logits)
	for c := range j.Probs {
		if j.Probs[c] > j.P {
			j.Class, j.P = Class(c), j.Probs[c]
		}
	}
	j.Confident = confidentP(j.Probs, j.Class) >= m.Confident[j.Class]
	j.Evidence = m.evidence(message, sc, j.Class, j.Probs)
	return j
}

// oneLine writes a stretch of a message with its runs of white space as
// one space.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\t\n\r\v\f  ") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

func softmax(l [NumClasses]float64) [NumClasses]float64 {
	mx := l[0]
	for _, x := range l[1:] {
		mx = max(mx, x)
	}
	var p [NumClasses]float64
	sum := 0.0
	for c, x := range l {
		p[c] = math.Exp(x - mx)
		sum += p[c]
	}
	for c := range p {
		p[c] /= sum
	}
	return p
}

// evidence finds the stretches of up to four words that pushed most toward
// class c against the likeliest other class, and returns them as typed.
func (m *Model) evidence(message string, sc *scratch, c Class, probs [NumClasses]float64) []string {
	n := len(sc.words)
	if n == 0 {
		return nil
	}
	rival, best := Class(0), -1.0
	for k, p := range probs {
		if Class(k) != c && p > best {
			rival, best = Class(k), p
		}
	}
	var pushBuf [maxWords]float64
	push := pushBuf[:n]
	for _, f := range sc.feats {
		if f.a < 0 {
			continue
		}
		row := m.w[int(f.h)*NumClasses:]
		d := float64(int(int8(row[c])) - int(int8(row[rival])))
		if f.a == f.b {
			push[f.a] += d
		} else {
			push[f.a] += d / 2
			push[f.b] += d / 2
		}
	}
	// The best stretch not overlapping one already taken, twice.
	var out []string
	var taken [maxWords]bool
	for len(out) < 2 {
		bi, bj, bv := -1, -1, 0.0
		for i := range n {
			v := 0.0
			for j := i; j < n && j < i+4 && !taken[j] && push[j] > 0; j++ {
				v += push[j]
				if v > bv {
					bi, bj, bv = i, j, v
				}
			}
		}
		if bi < 0 {
			break
		}
		for k := bi; k <= bj; k++ {
			taken[k] = true
		}
		if out == nil {
			out = make([]string, 0, 2)
		}
		out = append(out, oneLine(message[sc.words[bi].start:sc.words[bj].end]))
	}
	return out
}
