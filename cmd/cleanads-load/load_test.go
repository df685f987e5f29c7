package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
)

// TestLoadAgainstCeiling runs the tool briefly against its own ceiling
// handler, at full speed and rate-limited, and checks the summary line.
func TestLoadAgainstCeiling(t *testing.T) {
	srv := httptest.NewServer(ceiling())
	defer srv.Close()
	for _, args := range [][]string{
		{"-url", srv.URL + "/", "-c", "4", "-d", "200ms"},
		{"-url", srv.URL + "/", "-c", "2", "-d", "300ms", "-rate", "50"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		m := regexp.MustCompile(`result kind=bare rps=(\d+) ok=(\d+) errors=0 .* status=204:(\d+)`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("%v: no result line in %q", args, out.String())
		}
		if ok, _ := strconv.Atoi(m[2]); ok == 0 || m[2] != m[3] {
			t.Errorf("%v: ok %s, 204s %s", args, m[2], m[3])
		}
		if len(args) > 6 { // rate 50/s for 0.3 s: about 15, never hundreds
			if ok, _ := strconv.Atoi(m[2]); ok > 40 {
				t.Errorf("rate-limited run sent %d requests", ok)
			}
		}
	}
}

// TestLoadAgainstFloor drives visits at the floor handler: every 204 is a
// row committed in its SQLite database, and a reopened database holds them.
func TestLoadAgainstFloor(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "floor.db")
	db, err := openFloor(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(floor(db))
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"-url", srv.URL, "-kind", "collect", "-c", "4", "-d", "200ms"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	srv.Close()
	db.Close()
	m := regexp.MustCompile(`ok=(\d+) errors=0 .* status=204:(\d+)`).FindStringSubmatch(out.String())
	if m == nil || m[1] != m[2] || m[1] == "0" {
		t.Fatalf("want only 204s, got %q", out.String())
	}
	db, err = openFloor(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	queued, _, err := db.PageViewStats(ctx, floorSite, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if strconv.Itoa(queued) != m[1] {
		t.Errorf("%d rows in the floor's database after %s answers", queued, m[1])
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-url", "https://x"}, {"-url", "http://x", "-kind", "nope"}, {"-url", "http://x", "-c", "0"}, {"-floor", "127.0.0.1:0"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// TestLeadMix scores the generated leads with the default rules: the mix
// must hold clean, grey and junk leads, mostly clean.
func TestLeadMix(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies [][]byte
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		mu.Lock()
		bodies = append(bodies, b.Bytes())
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"-url", srv.URL, "-kind", "leads", "-c", "2", "-d", "300ms", "-rate", "1000"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	rules, err := qualify.New(model.Qualify{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	count := map[model.Verdict]int{}
	for _, b := range bodies {
		var in struct {
			Email, Phone, Message, Hp string
			FirstName                 string `json:"first_name"`
			LastName                  string `json:"last_name"`
			FillMS                    int64  `json:"fill_ms"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		l := &model.Lead{Email: in.Email, Phone: in.Phone, Message: in.Message, Honeypot: in.Hp, FirstName: in.FirstName,
			LastName: in.LastName, FillMS: &in.FillMS, SubmittedAt: time.Now()}
		count[rules.Score(l, qualify.Context{Now: time.Now(), Country: "TR"}).Verdict]++
	}
	n := len(bodies)
	t.Logf("%d leads: %v", n, count)
	if n < 50 || count[model.VerdictClean] < n/3 || count[model.VerdictReview] == 0 || count[model.VerdictJunk] == 0 {
		t.Errorf("%d leads: %v", n, count)
	}
	if !strings.Contains(out.String(), "kind=leads") {
		t.Errorf("output %q", out.String())
	}
}
