package web

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/model"
)

// TestEveryMessageInTurkish finds each English text the admin UI shows (in
// templates, and passed to tr in its Go files) and wants a Turkish one.
func TestEveryMessageInTurkish(t *testing.T) {
	keys := map[string]string{}
	scan := func(pattern string, res ...*regexp.Regexp) {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, re := range res {
				for _, m := range re.FindAllStringSubmatch(string(b), -1) {
					for _, k := range m[1:] {
						if k != "" {
							keys[k] = f
						}
					}
				}
			}
		}
	}
	scan("templates/*.html", regexp.MustCompile(`\bt "((?:[^"\\]|\\.)*)"`),
		regexp.MustCompile(`\(field "[^"]*" "([^"]*)" \S+ \S+ "([^"]*)"\)`))
	scan("admin*.go", regexp.MustCompile(`\btr\((?:lang|p\.Lang|langOf\([^)]*\)), "((?:[^"\\]|\\.)*)"`),
		regexp.MustCompile(`newPage\(r, "[^"]*", "([^"]*)"\)`), regexp.MustCompile(`add\("([^"]+)", l\.`),
		regexp.MustCompile(`\{"\w+", "([A-Z][^"]+)"\}`)) // matchKeys labels
	// The notes the use cases write into a lead's history, which the
	// lead's story shows through tr.
	scan("../app/*.go", regexp.MustCompile(`(?:\["(?:note|meta)"\] = |"note": )"([^"]+)"`))
	for _, w := range changedFields {
		keys[w] = "(changedFields)"
	}
	// Values shown through tr at run time.
	for _, k := range []string{"clean", "review", "junk", "live", "test", "dry_run", "rules", "evidence", "owner", "crm",
		"customer", "whatsapp_reply", "call", "Time to fill",
		"too late for Meta: the lead came in more than 7 days ago",
		"review expired unconfirmed: the qualified event will not be sent"} {
		keys[k] = "(run time)"
	}
	for _, st := range deliveryStates {
		keys[string(st)] = "(run time)"
	}
	for _, k := range reasonNames {
		keys[k] = "(reasonNames, the campaign report)"
	}
	if len(keys) < 150 {
		t.Fatalf("found only %d texts: the scan is broken", len(keys))
	}
	for k, f := range keys {
		if _, ok := turkish[k]; !ok && k != "fbc" && k != "fbp" && k != "fbclid" && k != "gclid" && k != "Meta" {
			t.Errorf("no Turkish for %q (%s)", k, f)
		}
	}
}

func TestLangOf(t *testing.T) {
	cases := map[string]string{"": "en", "tr": "tr", "tr-TR,tr;q=0.9,en;q=0.8": "tr", "en-US,en;q=0.9,tr;q=0.8": "en",
		"de-DE,tr;q=0.5": "tr", "de": "en", "en;q=0.2,tr;q=0.7": "tr"}
	for h, want := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Language", h)
		if got := langOf(r, nil); got != want {
			t.Errorf("Accept-Language %q: %s, want %s", h, got, want)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Accept-Language", "tr")
	if got := langOf(r, &model.User{Lang: "en"}); got != "en" {
		t.Errorf("the user's setting lost: %s", got)
	}
}
