package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestScaleSmall fills a small SQLite database in two steps and measures
// at each: every page answers 200, and the tables and the summary come
// out with the storage per visit and per lead.
func TestScaleSmall(t *testing.T) {
	var out, errs bytes.Buffer
	db := "sqlite:" + filepath.Join(t.TempDir(), "scale.db")
	if code := run(context.Background(), []string{"-db", db, "-sizes", "30,60", "-visits", "3", "-runs", "1"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	s := out.String()
	for _, want := range []string{"sqlite, 30 leads, 90 visits", "sqlite, 60 leads, 180 visits", "| dashboard |",
		"| inbox, search nothing matches |", "| API GET /v1/leads/{id} |", "bytes per visit", "| 30 leads | 60 leads | ratio |"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in:\n%s", want, s)
		}
	}
	rows := regexp.MustCompile(`(?m)^\| [^|]+ \| [0-9.]+ \| [0-9.]+ \| (\d+) \|$`).FindAllStringSubmatch(s, -1)
	if len(rows) != 2*18 {
		t.Errorf("%d timed rows, want 36:\n%s", len(rows), s)
	}
	for _, r := range rows {
		if r[1] != "200" {
			t.Errorf("a page answered %s: %s", r[1], r[0])
		}
	}
	// Run again: the database holds 60 leads, so it measures at once.
	out.Reset()
	if code := run(context.Background(), []string{"-db", db, "-sizes", "60", "-runs", "1"}, &out, &errs); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errs.String())
	}
	if strings.Contains(out.String(), "filled") {
		t.Errorf("the second run filled again:\n%s", out.String())
	}
}
