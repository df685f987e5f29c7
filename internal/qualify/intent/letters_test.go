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
