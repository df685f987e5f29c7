package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJournalCutsATornRecord: a record cut off by a crash while it was
// written (never answered) is dropped when the journal is opened again,
// the records before it are kept, and new ones follow them.
func TestJournalCutsATornRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := j.append(&journalRecord{Method: "POST", Target: fmt.Sprintf("/v1/collect?n=%d", i), Body: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0, 0, 1, 0, 9, 9, 9, 9, '{', '"'}) // a frame promising 256 bytes, cut off
	f.Close()

	j, err = OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.append(&journalRecord{Method: "POST", Target: "/v1/collect?n=3"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	if _, err := j.scan(0, func(rec *journalRecord, _ int64) error {
		got = append(got, rec.Target)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := "/v1/collect?n=0 /v1/collect?n=1 /v1/collect?n=2 /v1/collect?n=3"; strings.Join(got, " ") != want {
		t.Fatalf("records %v, want %s", got, want)
	}
}

// TestUpgradeFinishReplaysInOrderThenServesLive: the journaled requests
// reach the live handler in the order they arrived, with the arrival's
// time on the clock and the client's address as read then; a request that
// arrives during the replay is journaled and replayed after them; once the
// journal is replayed it is removed and requests go to the live handler.
// A replay stopped half-way (a crash) goes on where it stopped.
func TestUpgradeFinishReplaysInOrderThenServesLive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	arrived := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	now := arrived
	u := NewUpgrade(UpgradeOptions{Journal: j, Now: func() time.Time { return now }})
	post := func(n int) *httptest.ResponseRecorder {
		now = now.Add(time.Second)
		r := httptest.NewRequest("POST", fmt.Sprintf("/v1/leads?n=%d", n), strings.NewReader(`{"site":"dent"}`))
		r.Header.Set("Content-Type", "application/json")
		r.RemoteAddr = fmt.Sprintf("198.51.100.%d:4000", n)
		w := httptest.NewRecorder()
		u.ServeHTTP(w, r)
		return w
	}
	for n := 1; n <= 3; n++ {
		if w := post(n); w.Code != http.StatusAccepted || !strings.Contains(w.Body.String(), `"upgrading":true`) {
			t.Fatalf("journaled answer: %d %s", w.Code, w.Body)
		}
	}
	clock := &UpgradeClock{}
	var seen []string
	s := &Server{}
	stopAfter := 2
	live := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, fmt.Sprintf("%s@%s/%s", r.URL.Query().Get("n"), clock.Now().Format("15:04:05"), s.clientIP(r)))
		if len(seen) == 1 {
			post(4) // arrives during the replay
		}
		w.WriteHeader(http.StatusAccepted)
	})
	// A crash after two requests: the replay stops there.
	ctx, cancel := context.WithCancel(context.Background())
	crashing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		live(w, r)
		if len(seen) == stopAfter {
			cancel()
		}
	})
	if _, err := u.Finish(ctx, crashing, clock.Set); err == nil {
		t.Fatal("the replay went on after the crash")
	}
	j.Close()

	j, err = OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	u = NewUpgrade(UpgradeOptions{Journal: j, Now: func() time.Time { return now }})
	st, err := u.Finish(context.Background(), live, clock.Set)
	if err != nil {
		t.Fatal(err)
	}
	want := "1@09:00:01/198.51.100.1 2@09:00:02/198.51.100.2 3@09:00:03/198.51.100.3 4@09:00:04/198.51.100.4"
	if got := strings.Join(seen, " "); got != want || st.Replayed != 2 {
		t.Fatalf("replayed %s (%d after the restart), want %s", got, st.Replayed, want)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the journal after the replay: %v", err)
	}
	if w := post(5); w.Code != http.StatusAccepted || len(seen) != 5 || strings.Contains(w.Body.String(), "upgrading") {
		t.Fatalf("after the replay: %d %q, %v", w.Code, w.Body, seen)
	}
}

// TestUpgradeFinishKeepsAServerFailure: a request whose replay fails on
// the server's side every time it is tried is kept in the journal's
// .failed file, not dropped, and the replay goes on with the next one.
func TestUpgradeFinishKeepsAServerFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	u := NewUpgrade(UpgradeOptions{Journal: j})
	for n := 1; n <= 2; n++ {
		r := httptest.NewRequest("POST", fmt.Sprintf("/v1/calls?n=%d", n), strings.NewReader(`{}`))
		u.ServeHTTP(httptest.NewRecorder(), r)
	}
	tries := map[string]int{}
	st, err := u.Finish(context.Background(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := r.URL.Query().Get("n")
		tries[n]++
		if n == "1" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Replayed != 2 || st.Failed != 1 || tries["1"] != replayAttempts || tries["2"] != 1 {
		t.Fatalf("stats %+v, tries %v", st, tries)
	}
	b, err := os.ReadFile(path + ".failed")
	if err != nil || strings.Count(string(b), "\n") != 1 || !strings.Contains(string(b), "/v1/calls?n=1") {
		t.Fatalf("kept: %q %v", b, err)
	}
}
