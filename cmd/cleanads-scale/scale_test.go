package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
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

// TestFillInTimeOrderAndVerify fills in two steps with two workers and
// small transactions: each step's leads come in time order (lead i of a
// step before lead i+1, as its slots say), the counters equal a recount
// (-verify), and counters put wrong are caught by it.
func TestFillInTimeOrderAndVerify(t *testing.T) {
	var out, errs bytes.Buffer
	path := filepath.Join(t.TempDir(), "scale.db")
	args := []string{"-db", "sqlite:" + path, "-sizes", "40,100", "-visits", "2", "-fill-only", "-verify", "-workers", "2", "-batch", "7"}
	if code := run(context.Background(), args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"filled 0 -> 40 leads", "filled 40 -> 100 leads", "counters equal a recount at 40 leads", "counters equal a recount at 100 leads"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	db, err := store.Open(context.Background(), "sqlite:"+path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Each lead's e-mail ends in its index; its time must grow with it
	// within a step.
	leads, err := db.LeadList(context.Background(), store.LeadFilter{Site: siteID, Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(leads) != 100 {
		t.Fatalf("%d leads, want 100", len(leads))
	}
	at := map[int]time.Time{}
	for _, l := range leads {
		i, err := strconv.Atoi(regexp.MustCompile(`(\d+)@`).FindStringSubmatch(l.Email)[1])
		if err != nil {
			t.Fatal(err)
		}
		at[i] = l.ReceivedAt
	}
	for _, step := range [][2]int{{0, 40}, {40, 100}} {
		for i := step[0] + 1; i < step[1]; i++ {
			if !at[i].After(at[i-1]) {
				t.Errorf("lead %d at %s, not after lead %d at %s", i, at[i], i-1, at[i-1])
			}
		}
	}
	// A counter off by one is found.
	now := time.Now().UTC()
	if err := db.CountersAdd(context.Background(), siteID, model.Day(now.Add(-24*time.Hour)), "", model.Count{Name: model.CounterVerdicts, Dim: "clean", N: 1}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out.Reset()
	errs.Reset()
	if code := run(context.Background(), []string{"-db", "sqlite:" + path, "-sizes", "100", "-fill-only", "-verify"}, &out, &errs); code != 1 ||
		!strings.Contains(errs.String(), "1 counters differ from a recount") || !strings.Contains(errs.String(), `verdicts "clean"`) {
		t.Errorf("a wrong counter: exit %d, %s%s", code, out.String(), errs.String())
	}
}
