package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// buildBinary builds cleanads into a temporary folder, once per test.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cleanads")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/cleanads/cleanads/cmd/cleanads")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// proc is a running cleanads binary.
type proc struct {
	cmd    *exec.Cmd
	base   string
	stderr *syncBuffer
	done   chan struct{} // closed when the process has exited, with err set
	err    error
}

// wait waits for the process to exit and returns how it ended.
func (p *proc) wait() error {
	<-p.done
	return p.err
}

// startBinary runs "cleanads serve --config cfg" and waits until it listens.
func startBinary(t *testing.T, bin, cfg string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, "serve", "--config", cfg), stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	p.cmd.Stderr = p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "listening on "); i >= 0 {
				listening <- strings.Fields(sc.Text()[i+len("listening on "):])[0]
			}
		}
		io.Copy(io.Discard, out)
	}()
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.wait()
	})
	select {
	case p.base = <-listening:
	case <-p.done:
		t.Fatalf("serve exited: %v\n%s", p.err, p.stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not start:\n%s", p.stderr.String())
	}
	return p
}

// slowAnswers fronts the Graph stand-in: each request is handed on at once
// (Meta accepts it), and the answer held back for delay, so a kill lands
// in the window between Meta accepting events and the outbox recording it.
func slowAnswers(t *testing.T, g *graphtest.Server, delay time.Duration) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, g.URL+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := g.Client().Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		time.Sleep(delay)
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(answer)
	}))
	t.Cleanup(s.Close)
	return s
}

func crashConfig(dbPath, graphURL, token string) string {
	return testkit.Config{Database: "sqlite:" + dbPath, GraphURL: graphURL, Delivery: "{poll: 1s, timeout: 1s, lease: 4s}",
		Site: `    meta: {pixel_id: "111", access_token: "` + token + `", mode: live}`}.YAML()
}

// accepted is a lead the server answered 2xx.
type accepted struct{ id, eventID string }

// poster posts distinct leads to base from n goroutines until stop, and
// collects the ones answered 2xx.
type poster struct {
	mu   sync.Mutex
	ok   []accepted
	seq  atomic.Int64
	wg   sync.WaitGroup
	stop atomic.Bool
}

func (p *poster) run(base string, n int) {
	for range n {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			client := &http.Client{Timeout: 20 * time.Second}
			for !p.stop.Load() {
				i := p.seq.Add(1)
				body := fmt.Sprintf(`{"site":"dent","email":"hasta%d@gmail.com","phone":"0532 %03d %02d %02d",`+
					`"name":"Ayşe Yılmaz","fill_ms":8400,"message":"Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum.",`+
					`"page_url":"https://www.istanbuldis.example/implant","user_agent":"Mozilla/5.0","client_ip":"203.0.113.%d"}`,
					i, 400+i%500, rand.IntN(90)+10, rand.IntN(90)+10, i%250+1)
				req, _ := http.NewRequest("POST", base+"/v1/leads", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer dent-key-0123456789abcdef")
				resp, err := client.Do(req)
				if err != nil {
					continue // the server is gone; what it never answered is not promised
				}
				var a struct {
					ID      string `json:"id"`
					EventID string `json:"event_id"`
				}
				json.NewDecoder(resp.Body).Decode(&a)
				resp.Body.Close()
				if resp.StatusCode/100 == 2 {
					p.mu.Lock()
					p.ok = append(p.ok, accepted{a.ID, a.EventID})
					p.mu.Unlock()
				}
			}
		}()
	}
}

func (p *poster) halt() {
	p.stop.Store(true)
	p.wg.Wait()
}

func (p *poster) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ok)
}

// TestCrash kills the real binary with SIGKILL while leads are posted and
// delivered, starts it again on the same database and checks, once nothing
// is due any more:
//   - every lead answered 2xx is stored, with the event_id it was answered
//     with (synchronous=FULL: the commit was on disk before the answer);
//   - every outbox row is sent, and Meta (the stand-in) holds each sent
//     event; nothing is dead, expired or still claimed;
//   - every event Meta received is an outbox row: the same (event_name,
//     event_id) and no other id was ever made for the same lead and kind.
//   - an event recorded sent before the kill reached Meta exactly once. An
//     event may reach Meta twice only when the kill fell between Meta
//     accepting its request and the outbox recording that: it was still
//     leased to the dead process and is resent after the lease, with the
//     same event_id; Meta keeps one event per event_name and event_id, so
//     it counts once. The test logs how many were resent.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	g := graphtest.New(t)
	front := slowAnswers(t, g, 300*time.Millisecond)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "cleanads.db")
	cfg := filepath.Join(dir, "cleanads.yaml")
	if err := os.WriteFile(cfg, []byte(crashConfig(dbPath, front.URL, graphtest.Token)), 0o600); err != nil {
		t.Fatal(err)
	}

	first := startBinary(t, bin, cfg)
	// Read straight from the file: the test audits what is on disk, not
	// what the store code under test says. The ids are stored packed
	// (store/idpack.go): cleanads_idtext reads them as text.
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type key struct{ name, id string }
	sentRows := func() map[key]bool {
		out := map[key]bool{}
		rows, err := db.Query(`SELECT event_name, cleanads_idtext(event_id) FROM deliveries WHERE state = 'sent'`)
		if err != nil {
			return out
		}
		defer rows.Close()
		for rows.Next() {
			var k key
			if rows.Scan(&k.name, &k.id) == nil {
				out[k] = true
			}
		}
		return out
	}
	posts := &poster{}
	posts.run(first.base, 4)
	// Kill once some events are recorded sent and a request Meta has
	// accepted waits for its answer (held back by slowAnswers), so both
	// sides of the send-record window are covered.
	testkit.WaitWithin(t, 60*time.Second, "events recorded sent and a request in flight", func() bool {
		sent := len(sentRows())
		return posts.count() >= 40 && sent >= 20 && len(g.Events()) > sent
	})
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.wait()
	posts.halt()
	beforeRestart := len(g.Events())
	recorded := sentRows()

	second := startBinary(t, bin, cfg)
	more := &poster{}
	more.seq.Store(1_000_000)
	more.run(second.base, 2)
	testkit.WaitWithin(t, 30*time.Second, "leads accepted after the restart", func() bool { return more.count() >= 10 })
	more.halt()

	// Wait until nothing is due or claimed (the dead process's lease is 4 s).
	testkit.WaitWithin(t, 60*time.Second, "every event settled", func() bool {
		var n int
		err := db.QueryRow(`SELECT (SELECT COUNT(*) FROM deliveries WHERE state IN ('pending', 'retry')) + (SELECT COUNT(*) FROM delivery_state WHERE lease_owner IS NOT NULL)`).Scan(&n)
		return err == nil && n == 0
	})
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v\n%s", err, second.stderr.String())
	}

	st, err := store.Open(context.Background(), "sqlite:"+dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, a := range append(posts.ok, more.ok...) {
		l, err := st.LeadByID(context.Background(), model.LeadID(a.id))
		if err != nil || l.EventID != a.eventID {
			t.Errorf("lead %s answered 2xx: stored %v, %v", a.id, l != nil, err)
		}
	}

	rows, err := db.Query(`SELECT cleanads_idtext(lead_id), kind, event_name, cleanads_idtext(event_id), state FROM deliveries`)
	if err != nil {
		t.Fatal(err)
	}
	outbox := map[key]string{}
	perLeadKind := map[string]int{}
	for rows.Next() {
		var lead, kind, name, id, state string
		if err := rows.Scan(&lead, &kind, &name, &id, &state); err != nil {
			t.Fatal(err)
		}
		outbox[key{name, id}] = state
		perLeadKind[lead+"/"+kind]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for lk, n := range perLeadKind {
		if n != 1 {
			t.Errorf("%s has %d outbox rows: a second event id was made", lk, n)
		}
	}
	atMeta := map[key]int{}
	for _, ev := range g.Events() {
		k := key{ev.EventName, ev.EventID}
		atMeta[k]++
		if _, ok := outbox[k]; !ok {
			t.Errorf("Meta received %s %s, which is no outbox row", ev.EventName, ev.EventID)
		}
	}
	resent := 0
	for k, state := range outbox {
		switch {
		case state != string(model.DeliverySent):
			t.Errorf("event %s %s ended %s", k.name, k.id, state)
		case atMeta[k] == 0:
			t.Errorf("event %s %s recorded sent but Meta never received it", k.name, k.id)
		case atMeta[k] > 1 && recorded[k]:
			t.Errorf("event %s %s was recorded sent before the crash and sent again", k.name, k.id)
		case atMeta[k] > 1:
			resent++
		}
	}
	t.Logf("%d + %d leads accepted; %d outbox events, %d recorded sent at the kill, %d at Meta then, %d received in all, %d in flight at the kill and resent",
		len(posts.ok), len(more.ok), len(outbox), len(recorded), beforeRestart, len(g.Events()), resent)
	if len(outbox) == 0 || len(g.Events()) < len(outbox) {
		t.Errorf("%d events at Meta for %d outbox rows", len(g.Events()), len(outbox))
	}
}
