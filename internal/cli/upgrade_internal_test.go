package cli

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/secret"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// upgradeFrom is the first migration the tests' database lacks: a real
// one with a backfill (the coverage counters), held open by the test's hook as
// long as a reshaping migration takes on a large database.
const upgradeFrom = 430

// lockedBuffer is a serve's output, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// upgradeServe runs serve with hold inside each migration step and
// returns its address once it listens, and how to stop it (its error).
func upgradeServe(t *testing.T, cfg string, hold func(context.Context, int) error) (base string, stop func() error, out *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &lockedBuffer{}
	e := &env{getenv: func(string) string { return "" }, stdin: strings.NewReader(""), stdout: out, stderr: out, migrateHold: hold}
	done := make(chan error, 1)
	go func() { done <- serve(ctx, e, []string{"--config", cfg}) }()
	re := regexp.MustCompile(`listening on (http://\S+)`)
	stopped := false
	var err error
	stop = func() error {
		if !stopped {
			cancel()
			err, stopped = <-done, true
		}
		return err
	}
	t.Cleanup(func() { stop() })
	// A guard against a server that never starts, not a measure of speed.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m[1], stop, out
		}
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("serve: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", out.String())
		}
	}
}

// holdAt returns a hook that stops in migration version's transaction
// until release is closed (or serve is stopped), and a channel closed once
// it holds.
func holdAt(version int, release <-chan struct{}) (func(context.Context, int) error, <-chan struct{}) {
	holding := make(chan struct{})
	return func(ctx context.Context, v int) error {
		if v != version {
			return nil
		}
		close(holding)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, holding
}

type answer struct {
	status int
	header http.Header
	body   string
}

func send(t *testing.T, method, target, ctype, body string, header map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// upgradeLead is a lead the site's server posts with its API key.
const upgradeLead = `{"site":"dent","event_id":"up-1","email":"ayse.yilmaz@gmail.com","phone":"0532 412 87 19",` +
	`"name":"Ayşe Yılmaz","fill_ms":8400,"message":"Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum.",` +
	`"page_url":"https://www.istanbuldis.example/implant","user_agent":"Mozilla/5.0","client_ip":"203.0.113.1"}`

const (
	upgradeCallToken = "calltok-0123456789abcdef"
	upgradeAppSecret = "app-secret-0123456789abcdef"
)

// whatsAppFirst is the webhook of a Click-to-WhatsApp chat's first message.
func whatsAppFirst(id, user string) string {
	return `{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"field":"messages","value":{` +
		`"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},` +
		fmt.Sprintf(`"contacts":[{"profile":{"name":"Ayşe"},"user_id":%q}],"messages":[{"from_user_id":%q,"id":%q,`+
			`"timestamp":"%d","type":"text","text":{"body":"İmplant fiyatı ne kadar, randevu alabilir miyim?"},`+
			`"referral":{"source_url":"https://fb.me/3cr4Wqqkv","source_id":"120226305854810726","source_type":"ad",`+
			`"headline":"İmplant","ctwa_clid":"Clid%s"}}]`, user, user, id, time.Now().Unix(), id) + `}}]}]}`
}

// TestServeUpgradeJournalsTheIntake: serve on a database from before
// migration upgradeFrom listens at once; while that migration runs (held
// open), the
// tracker's visit, a lead from the site's server, a form's post, a call
// tracker's webhook and a lead with a wrong key are each answered as
// accepted, the admin pages and /readyz answer 503 with the step, and the
// tracker script is served. After the migration each request is stored as
// if it had been handled when it arrived (the lead's time is the
// arrival's, the call is evidence on the lead posted before it, the visit
// counts), the wrong key is refused at replay, and the journal is gone.
// When serve is stopped during the migration instead (the migration rolls
// back), the next start migrates and stores the same.
func TestServeUpgradeJournalsTheIntake(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(map[bool]string{false: "migrated", true: "stopped during the migration"}[crash], func(t *testing.T) {
			ctx := context.Background()
			dir, dsn := t.TempDir(), storetest.DSN(t)
			journal := filepath.Join(dir, "intake.upgrade")
			cfgText := testkit.Config{Database: dsn, SecretKey: true, Delivery: "{poll: 1h}",
				Top: fmt.Sprintf("upgrade_journal: %q\nwhatsapp: {verify_token: \"verify-0123456789abcdef\", app_secret: %q}",
					journal, upgradeAppSecret),
				Site: fmt.Sprintf("    call_token: %q\n    whatsapp:\n      phone_number_ids: [\"106540352242922\"]", upgradeCallToken)}.YAML()
			cfg := filepath.Join(dir, "cleanads.yaml")
			if err := os.WriteFile(cfg, []byte(cfgText), 0o600); err != nil {
				t.Fatal(err)
			}
			box, err := secret.NewBox(testkit.SecretKey)
			if err != nil {
				t.Fatal(err)
			}
			// The database as the binary before upgradeFrom left it, its
			// site in use.
			db, err := store.Open(ctx, dsn, store.Options{Secrets: box})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.MigrateWith(ctx, store.MigrateOptions{Below: upgradeFrom}); err != nil {
				t.Fatal(err)
			}
			c, err := config.Load(cfg, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			if err := provision(ctx, db, c, time.Now()); err != nil {
				t.Fatal(err)
			}
			db.Close()

			release := make(chan struct{})
			hold, holding := holdAt(upgradeFrom, release)
			base, stop, out := upgradeServe(t, cfg, hold)
			<-holding

			if a := send(t, "GET", base+"/readyz", "", "", nil); a.status != 503 {
				t.Errorf("readyz during the upgrade: %d %s", a.status, a.body)
			}
			if a := send(t, "GET", base+"/admin/", "", "", nil); a.status != 503 || a.header.Get("Retry-After") == "" ||
				!strings.Contains(a.body, "upgrading: step 1 of ") {
				t.Errorf("admin during the upgrade: %d %q %s", a.status, a.header.Get("Retry-After"), a.body)
			}
			if a := send(t, "GET", base+"/t.js", "", "", nil); a.status != 200 || !strings.Contains(a.body, "collect") {
				t.Errorf("t.js during the upgrade: %d", a.status)
			}
			browser := map[string]string{"Origin": testkit.Origin, "Referer": testkit.Origin + "/implant"}
			arrived := time.Now()
			collect := send(t, "POST", base+"/v1/collect?site=dent", "text/plain",
				`{"site":"dent","url":"https://www.istanbuldis.example/implant?fbclid=IwAR0abc","referrer":""}`, browser)
			if collect.status != 200 || !strings.Contains(collect.body, `"upgrading":true`) ||
				collect.header.Get("Access-Control-Allow-Origin") != testkit.Origin {
				t.Errorf("collect: %d %v %s", collect.status, collect.header, collect.body)
			}
			if a := send(t, "POST", base+"/v1/leads", "application/json", upgradeLead,
				map[string]string{"Authorization": "Bearer " + testkit.SiteKey}); a.status != 202 {
				t.Errorf("lead: %d %s", a.status, a.body)
			}
			form := url.Values{"site": {"dent"}, "name": {"Mehmet Demir"}, "email": {"mehmet.demir@gmail.com"},
				"phone": {"0533 218 44 61"}, "message": {"Diş beyazlatma fiyatı nedir? Cumartesi gelebilirim."}}
			if a := send(t, "POST", base+"/v1/leads", "application/x-www-form-urlencoded", form.Encode(), browser); a.status != 202 ||
				!strings.Contains(a.body, "Thank you") {
				t.Errorf("form: %d %s", a.status, a.body)
			}
			if a := send(t, "POST", base+"/v1/calls?token="+upgradeCallToken, "application/json",
				`{"caller":"+90 532 412 87 19","duration_s":240,"call_id":"call-1"}`, nil); a.status != 200 {
				t.Errorf("call: %d %s", a.status, a.body)
			}
			if a := send(t, "POST", base+"/v1/leads", "application/json", strings.Replace(upgradeLead, "up-1", "up-forged", 1),
				map[string]string{"Authorization": "Bearer not-the-key-0123456789"}); a.status != 202 {
				t.Errorf("lead with a wrong key: %d %s", a.status, a.body)
			}
			// A WhatsApp chat's first message, signed with the app's
			// secret, and one whose signature is wrong.
			for i, sig := range []string{upgradeAppSecret, "not-the-secret"} {
				body := whatsAppFirst(fmt.Sprintf("wamid.U%d", i), fmt.Sprintf("TR.100000000000000%d", i))
				mac := hmac.New(sha256.New, []byte(sig))
				mac.Write([]byte(body))
				if a := send(t, "POST", base+"/v1/webhooks/whatsapp", "application/json", body,
					map[string]string{"X-Hub-Signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil))}); a.status != 200 {
					t.Errorf("whatsapp: %d %s", a.status, a.body)
				}
			}
			answered := time.Now()

			if crash {
				// Stopped with the migration's transaction open: it rolls
				// back, the journal stays; the next start does it all.
				if err := stop(); err == nil || !errors.Is(err, context.Canceled) {
					t.Fatalf("serve stopped during the migration: %v\n%s", err, out.String())
				}
				if _, err := os.Stat(journal); err != nil {
					t.Fatalf("the journal after a stop during the migration: %v", err)
				}
				base, stop, out = upgradeServe(t, cfg, nil)
			} else {
				close(release)
			}
			waitUpgraded(t, base)
			if _, err := os.Stat(journal); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the journal after the replay: %v", err)
			}
			// The server serves before serve logs what it replayed.
			replayed := regexp.MustCompile(`msg="replayed the requests[^\n]*`)
			for deadline := time.Now().Add(30 * time.Second); replayed.FindString(out.String()) == "" && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			if line := replayed.FindString(out.String()); !strings.Contains(line, `requests=7 refused=2`) {
				t.Errorf("replay log: %q", line)
			}
			if err := stop(); err != nil {
				t.Fatalf("serve: %v\n%s", err, out.String())
			}

			db, err = store.Open(ctx, dsn, store.Options{Secrets: box})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if v, err := db.SchemaVersion(ctx); err != nil || v != store.LatestVersion() {
				t.Fatalf("schema %d %v", v, err)
			}
			lead, err := db.LeadByEventID(ctx, "dent", "up-1")
			if err != nil {
				t.Fatal(err)
			}
			// Handled at the time it arrived, not at the replay.
			if at := lead.ReceivedAt; at.Before(arrived.Truncate(time.Millisecond)) || at.After(answered) {
				t.Errorf("lead received at %v, sent between %v and %v", at, arrived, answered)
			}
			if lead.Verdict == "" || lead.ClientIP != "203.0.113.1" {
				t.Errorf("lead: %+v", lead)
			}
			hist, err := db.HistoryByLead(ctx, lead.ID)
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			for _, h := range hist {
				if h.Kind == model.HistoryEvidence && !h.At.After(answered) {
					calls++
				}
			}
			if calls != 1 {
				t.Errorf("the call as evidence on the lead: %d in %+v", calls, hist)
			}
			list, err := db.LeadList(ctx, store.LeadFilter{Site: "dent"})
			if err != nil {
				t.Fatal(err)
			}
			var form0 *model.Lead
			chats := 0
			for _, l := range list {
				if l.Source == model.SourceWhatsApp {
					chats++
					if l.ReceivedAt.After(answered) {
						t.Errorf("the chat's lead received at %v, after %v", l.ReceivedAt, answered)
					}
				}
				if l.EventID == "up-forged" {
					t.Errorf("the lead with a wrong key was stored")
				}
				if l.Name == "Mehmet Demir" {
					form0 = l
				}
			}
			if chats != 1 {
				t.Errorf("leads of the signed chat: %d, want 1 (the badly signed one refused at replay)", chats)
			}
			if form0 == nil || form0.ClientIP != "127.0.0.1" || form0.ReceivedAt.After(answered) {
				t.Errorf("the form's lead: %+v", form0)
			}
			day := model.Day(arrived)
			cs, err := db.Counters(ctx, "dent", day, model.Day(answered))
			if err != nil {
				t.Fatal(err)
			}
			if n := cs.Sum(model.CounterVisits, "*", day, model.Day(answered)); n != 1 {
				t.Errorf("visits counted: %d", n)
			}
		})
	}
}

// waitUpgraded waits until /readyz answers 200.
func waitUpgraded(t *testing.T, base string) {
	t.Helper()
	// A guard against a replay that never ends, not a measure of speed.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
	}
	t.Fatal("not ready")
}
