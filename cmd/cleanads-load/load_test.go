package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/store/storetest"
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
	floorRowsMatch(ctx, t, path, out.String())
}

// TestLoadSplitOverURLs sends to two nodes: the connections are split
// evenly between them, and the summary counts the answers of both.
func TestLoadSplitOverURLs(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	node := func(name string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got[name]++
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
	}
	a, b := node("a"), node("b")
	defer a.Close()
	defer b.Close()
	var out, errb bytes.Buffer
	// 10 a second on each of 4 connections: 2 go to a, 2 to b.
	if code := run(context.Background(), []string{"-url", a.URL + "/", "-url", b.URL + "/", "-c", "4", "-d", "500ms", "-rate", "40"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	m := regexp.MustCompile(`ok=(\d+) errors=0 `).FindStringSubmatch(out.String())
	mu.Lock()
	defer mu.Unlock()
	if m == nil || m[1] != strconv.Itoa(got["a"]+got["b"]) {
		t.Fatalf("answers %v, summary %q", got, out.String())
	}
	if got["a"] == 0 || got["b"] == 0 || got["a"] > 2*got["b"]+2 || got["b"] > 2*got["a"]+2 {
		t.Errorf("uneven split: %v", got)
	}
}

// TestTokensEachOnce: collect runs add the form tokens they get to the
// file, and each leads run uses tokens no earlier run used.
func TestTokensEachOnce(t *testing.T) {
	var (
		mu     sync.Mutex
		issued int
		used   = map[string]int{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/v1/collect" {
			issued++
			w.Header().Set("Set-Cookie", fmt.Sprintf("cleanads_vid=v_%d; Path=/", issued))
			fmt.Fprintf(w, `{"form_token":"tok%d"}`, issued)
			return
		}
		var in struct {
			FormToken string `json:"form_token"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		if in.FormToken != "" {
			used[in.FormToken]++
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "tokens")
	ctx := context.Background()
	for _, args := range [][]string{
		{"-kind", "collect", "-save-tokens", file, "-rate", "40"},
		{"-kind", "collect", "-save-tokens", file, "-rate", "40"},
		{"-kind", "leads", "-tokens", file, "-rate", "20"},
		{"-kind", "leads", "-tokens", file, "-rate", "20"},
	} {
		var out, errb bytes.Buffer
		if code := run(ctx, append(args, "-url", srv.URL, "-c", "2", "-d", "300ms"), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
	}
	left, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for tok, k := range used {
		n += k
		if k > 1 {
			t.Errorf("token %s sent %d times", tok, k)
		}
		if bytes.Contains(left, []byte(" "+tok+"\n")) {
			t.Errorf("token %s used but still in the file", tok)
		}
	}
	if lines := bytes.Count(left, []byte("\n")); n == 0 || n+lines != issued {
		t.Errorf("%d tokens issued, %d used, %d left in the file", issued, n, lines)
	}
}

// TestFloorOnPostgres runs two floor handlers on one PostgreSQL database,
// as scripts/bench.sh does with DATABASE=postgres://...: every 204 of
// either is a row in the shared database.
func TestFloorOnPostgres(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t) // skips without CLEANADS_TEST_POSTGRES
	var srvs []*httptest.Server
	for range 2 {
		db, err := openFloor(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		srv := httptest.NewServer(floor(db))
		defer srv.Close()
		srvs = append(srvs, srv)
	}
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"-url", srvs[0].URL, "-url", srvs[1].URL, "-kind", "collect", "-c", "4", "-d", "300ms"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	floorRowsMatch(ctx, t, dsn, out.String())
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-url", "https://x"}, {"-url", "http://x", "-kind", "nope"}, {"-url", "http://x", "-c", "0"}, {"-floor", "127.0.0.1:0"},
		{"-url", "http://x", "-url", "ftp://y"}, {"-url", "http://x", "-url", "http://y", "-c", "1"}} {
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

// floorRowsMatch checks that a load run against the floor got only 204s and
// that the floor's database at dsn holds one row for each.
func floorRowsMatch(ctx context.Context, t *testing.T, dsn, out string) {
	t.Helper()
	m := regexp.MustCompile(`ok=(\d+) errors=0 .* status=204:(\d+)`).FindStringSubmatch(out)
	if m == nil || m[1] != m[2] || m[1] == "0" {
		t.Fatalf("want only 204s, got %q", out)
	}
	db, err := openFloor(ctx, dsn)
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
