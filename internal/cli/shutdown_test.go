package cli_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/cli"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

func shutdownConfig(dbPath, graphURL, token string) string {
	return testkit.Config{Database: "sqlite:" + dbPath, GraphURL: graphURL, Delivery: "{poll: 1h, timeout: 10s, lease: 1m}",
		Site: `    meta: {pixel_id: "111", access_token: "` + token + `", mode: live}`}.YAML()
}

func leadBody(i int) string {
	return fmt.Sprintf(`{"site":"dent","email":"hasta%d@gmail.com","phone":"0532 %03d 27 43","name":"Ayşe Yılmaz","fill_ms":8400,`+
		`"message":"Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum.",`+
		`"page_url":"https://www.istanbuldis.example/implant","user_agent":"Mozilla/5.0","client_ip":"203.0.113.9"}`, i, 400+i)
}

// TestGracefulShutdownUnderLoad stops serve (the context SIGTERM cancels)
// while twenty leads are half-way through their bodies and a delivery
// request is waiting for Meta's answer: every in-flight lead is answered
// 202 and stored, the batch being sent is recorded sent (none is left
// claimed), and serve returns 0.
func TestGracefulShutdownUnderLoad(t *testing.T) {
	g := graphtest.New(t)
	front := slowAnswers(t, g, 2*time.Second)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "cleanads.db")
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte(shutdownConfig(dbPath, front.URL, graphtest.Token)), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, []string{"cleanads", "serve", "--config", cfg}, func(string) string { return "" }, nil, out, errOut)
	}()
	var base string
	waitUntil(t, func() bool {
		if i := strings.Index(out.String(), "listening on "); i >= 0 {
			base = strings.Fields(out.String()[i+len("listening on "):])[0]
			return true
		}
		return false
	})
	post := func(body io.Reader, trace *httptrace.ClientTrace) (int, string, error) {
		req, _ := http.NewRequest("POST", base+"/v1/leads", body)
		if trace != nil {
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer dent-key-0123456789abcdef")
		if trace != nil {
			// The server answers 100 Continue when the handler starts
			// reading the body: proof that the request is in flight in
			// the handler, not waiting in the listen backlog (which a
			// shutdown rightly refuses).
			req.Header.Set("Expect", "100-continue")
		}
		resp, err := (&http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}).Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		var a struct {
			ID string `json:"id"`
		}
		json.NewDecoder(resp.Body).Decode(&a)
		return resp.StatusCode, a.ID, nil
	}

	// A lead whose events go out in a request Meta is slow to answer.
	code, firstID, err := post(strings.NewReader(leadBody(0)), nil)
	if err != nil || code != 202 {
		t.Fatalf("first lead: %d %v", code, err)
	}
	waitUntil(t, func() bool { return len(g.Events()) == 2 })

	// Twenty leads in flight: in the handler, body half written.
	const n = 20
	type result struct {
		code int
		id   string
		err  error
	}
	results := make(chan result, n)
	var wrote sync.WaitGroup
	writers := make([]*io.PipeWriter, n)
	for i := range n {
		pr, pw := io.Pipe()
		writers[i] = pw
		body := leadBody(i + 1)
		wrote.Add(1)
		var once sync.Once
		trace := &httptrace.ClientTrace{Got100Continue: func() { once.Do(wrote.Done) }}
		go func() {
			code, id, err := post(pr, trace)
			results <- result{code, id, err}
		}()
		go io.WriteString(pw, body[:len(body)/2])
		defer pw.Close()
	}
	wrote.Wait()

	cancel()
	// Shutdown has begun once the listener refuses new connections.
	waitUntil(t, func() bool {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), time.Second)
		if err == nil {
			c.Close()
			return false
		}
		return true
	})
	for i, pw := range writers {
		body := leadBody(i + 1)
		go func() {
			io.WriteString(pw, body[len(body)/2:])
			pw.Close()
		}()
	}
	var ids []string
	for range n {
		r := <-results
		if r.err != nil || r.code != 202 {
			t.Errorf("in-flight lead: %d %v", r.code, r.err)
			continue
		}
		ids = append(ids, r.id)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited %d: %s", code, errOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop")
	}

	db, err := store.Open(context.Background(), "sqlite:"+dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, id := range ids {
		if _, err := db.LeadByID(context.Background(), model.LeadID(id)); err != nil {
			t.Errorf("lead %s answered 202 is not stored: %v", id, err)
		}
	}
	ds, err := db.DeliveriesByLead(context.Background(), model.LeadID(firstID))
	if err != nil || len(ds) != 2 {
		t.Fatalf("first lead's deliveries: %v %v", ds, err)
	}
	for _, d := range ds {
		if d.State != model.DeliverySent {
			t.Errorf("the batch in flight at shutdown: %s %s %q", d.EventName, d.State, d.LastError)
		}
	}
	// Nothing is left claimed by the stopped node: read the file itself.
	raw, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var leased int
	if err := raw.QueryRow(`SELECT COUNT(*) FROM delivery_state WHERE lease_owner IS NOT NULL`).Scan(&leased); err != nil || leased != 0 {
		t.Errorf("%d deliveries left claimed (%v)", leased, err)
	}
}
