package intent

import (
	"bytes"
	"os"
	"testing"
)

// TestModelMatchesCorpus fails when the corpus changed but the model was
// not trained again: the model names the hash of the corpus it learnt.
func TestModelMatchesCorpus(t *testing.T) {
	_, hash, err := ReadCorpus(os.DirFS("../corpus"), ".")
	if err != nil {
		t.Fatal(err)
	}
	if m := Default(); m.Corpus != hash {
		t.Fatalf("the model was trained on corpus %.12s, the corpus is %.12s now: run go generate ./internal/qualify/intent", m.Corpus, hash)
	}
}

// TestTrainSameBytes trains the model again and compares it with the one
// embedded: training is deterministic, and model.bin is what the corpus
// and the code make.
func TestTrainSameBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the model (seconds)")
	}
	es, hash, err := ReadCorpus(os.DirFS("../corpus"), ".")
	if err != nil {
		t.Fatal(err)
	}
	SortExamples(es)
	m, _, err := Train(es, hash, DefaultTrainOptions())
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, embedded) {
		t.Fatal("training again gives other bytes than model.bin: run go generate ./internal/qualify/intent")
	}
}

func TestDigits(t *testing.T) {
	for in, want := range map[string]string{
		"٠٥٠١٢٣٤٥٦٧":          "0501234567",
		"۰۹۱۲ ۳۴۵ ۶۷۸۹":       "0912 345 6789",
		"０５３２ ４１２":            "0532 412",
		"abc 123":             "abc 123",
		"موعد يوم ٣ الساعة ٥": "موعد يوم 3 الساعة 5",
	} {
		if got := Digits(in); got != want {
			t.Errorf("Digits(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestJudgeReadsMeaning: a few leads of each class, in several languages,
// none of them in the corpus.
func TestJudgeReadsMeaning(t *testing.T) {
	m := Default()
	for msg, want := range map[string]Class{
		"Merhaba, sol üst azı dişim iki gündür zonkluyor, yarın sabah için muayene mümkün mü?":                 Request,
		"Hola, tengo una gotera en el techo del salón desde la última lluvia, ¿podrían venir a revisarlo?":     Request,
		"Bonjour, nous aidons les cliniques à obtenir 30 nouveaux patients par mois grâce à nos campagnes":     Offer,
		"Merhaba, fizyoterapi bölümü son sınıf öğrencisiyim, yaz döneminde kliniğinizde staj yapabilir miyim?": Job,
		"ضصثقفغعهخحج": Nonsense,
	} {
		j := m.Judge(msg)
		if j.Class != want {
			t.Errorf("%q: %s (%.2f), want %s", msg, j.Class, j.P, want)
		}
		if len(j.Evidence) == 0 {
			t.Errorf("%q: no evidence", msg)
		}
	}
}

func BenchmarkJudge(b *testing.B) {
	m := Default()
	msg := "Merhaba, alt çenemde iki implant için muayene randevusu almak istiyorum. Hafta içi öğleden sonra uygunum, fiyat hakkında da bilgi alabilir miyim?"
	b.ReportAllocs()
	for b.Loop() {
		m.Judge(msg)
	}
}

// TestDefaultReadsTheEmbeddedWeights checks that the built-in model reads
// its weights and letter counts where the binary holds them (the file's
// last bytes), and that Load copies them, so a caller's buffer may change
// after it.
func TestDefaultReadsTheEmbeddedWeights(t *testing.T) {
	// at reports whether w and letters are the last bytes of b.
	at := func(m *Model, b []byte) bool {
		end := len(b) - len(m.letters)
		return &m.letters[0] == &b[end] && &m.w[0] == &b[end-len(m.w)]
	}
	m := Default()
	if !at(m, embedded) {
		t.Error("the built-in model's weights are a copy of the embedded ones")
	}
	b := bytes.Clone(embedded)
	l, err := Load(b)
	if err != nil {
		t.Fatal(err)
	}
	if at(l, b) {
		t.Error("Load kept the caller's buffer")
	}
	clear(b)
	if !bytes.Equal(l.w, m.w) || !bytes.Equal(l.letters, m.letters) {
		t.Error("a loaded model changed with the buffer it was loaded from")
	}
}
