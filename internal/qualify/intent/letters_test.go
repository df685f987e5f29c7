package intent

import "testing"

// TestUnusual: keyboard mash in Latin and Arabic script is unusual by its
// letters' statistics; names, company forms and words without vowels are
// not.
func TestUnusual(t *testing.T) {
	m := Default()
	for w, want := range map[string]bool{
		"xjqzkv": true, "kdjfhs": true, "lkjlkj": true, "ضصثقف": true,
		"GmbH": false, "Szczepański": false, "Nguyen": false, "Schwarzkopf": false, "glass": false,
		"Yılmaz": false, "Öztürk": false, "Mkrtchyan": false, "عبدالرحمن": false, "mrb": false,
	} {
		if got, rare, pairs := m.Unusual(w); got != want {
			t.Errorf("Unusual(%q) = %v (%d of %d pairs rare), want %v", w, got, rare, pairs, want)
		}
	}
}

// TestUnusualScalesWithCorpus: the corpus seen twice (every pair counted
// twice, as a corpus that grew alike would) judges every word as before:
// rare is a share of the corpus's letter pairs, not a count.
func TestUnusualScalesWithCorpus(t *testing.T) {
	m := Default()
	twice := &Model{Header: m.Header, letters: make([]uint8, len(m.letters))}
	for i, c := range m.letters {
		twice.letters[i] = uint8(min(2*int(c), 255))
	}
	twice.LetterPairs = 2 * m.LetterPairs
	for _, w := range []string{"xjqzkv", "kdjfhs", "lkjlkj", "ضصثقف", "GmbH", "Szczepański", "Nguyen",
		"Schwarzkopf", "glass", "Yılmaz", "Öztürk", "Mkrtchyan", "عبدالرحمن", "jfkdls", "qpwoei"} {
		u1, _, _ := m.Unusual(w)
		u2, _, _ := twice.Unusual(w)
		if u1 != u2 {
			t.Errorf("Unusual(%q) = %v, with the corpus counted twice %v", w, u1, u2)
		}
	}
}
