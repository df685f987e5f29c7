package webforms_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/webforms"
)

// The script stays small: under 4 KB gzipped.
func TestTrackerScriptSize(t *testing.T) {
	for _, name := range []string{"t.v1.js", "t.v2.js"} {
		b, err := os.ReadFile("static/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		if buf.Len() > 4096 {
			t.Errorf("%s is %d bytes gzipped; the limit is 4096", name, buf.Len())
		}
		t.Logf("%s: %d bytes, %d gzipped", name, len(b), buf.Len())
	}
}

// Sites pin /t.v1.js with this hash: its bytes never change.
func TestTrackerV1Unchanged(t *testing.T) {
	const v1 = "sha384-4r8AhZvwA0wH+xk6ca8E2tD85YPH6Fs4g3Zro5XMsmnWHyzhs554S59BPLo7mqIU"
	if got := webforms.TrackerV1SRI(); got != v1 {
		t.Errorf("t.v1.js changed: its hash is %s, sites pin %s; a changed script is a new version", got, v1)
	}
}

// The tracker's documentation pins the integrity hash of /t.v2.js in its
// install snippet.
func TestDocsIntegrity(t *testing.T) {
	b, err := os.ReadFile("../../docs/tracker.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `integrity="`+webforms.TrackerSRI()+`"`) {
		t.Errorf("docs/tracker.md does not give t.v2.js's hash; the snippet should say integrity=%q", webforms.TrackerSRI())
	}
}
