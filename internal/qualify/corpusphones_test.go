package qualify

import (
	"os"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/qualify/intent"
)

// TestCorpusPhones checks every phone of the labelled corpus (corpus/*.jsonl)
// the way intake does: the corpus tests what a message means, so each
// number must be one the phone rules accept for the line's country (no
// pattern, no fictional range, valid for libphonenumber; a company's
// toll-free line is one). A writer of new
// corpus lines runs it alone:
//
//	go test ./internal/qualify -run TestCorpusPhones
func TestCorpusPhones(t *testing.T) {
	es, _, err := intent.ReadCorpus(os.DirFS("corpus"), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		phone := intent.Digits(strings.TrimSpace(e.Phone))
		if phone == "" {
			continue
		}
		// A company's own line (toll-free, 0850) is a real number: vendors
		// and firms give them.
		if r := checkPhone(phone, strings.ToUpper(e.Country), nil); !r.usable || (r.code != "" && r.code != CodePhoneBusiness) {
			t.Errorf("%s %s: phone %q for %s: %s %v", e.File, e.ID, e.Phone, e.Country, r.code, r.evidence)
		}
	}
}
