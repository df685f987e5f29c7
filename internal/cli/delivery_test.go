package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/cli"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

func metaConfig(dsn, graphURL, token, testCode string) string {
	return testkit.Config{Database: dsn, GraphURL: graphURL, Delivery: "{poll: 1h}", SecretKey: true,
		Site: `    meta: {pixel_id: "111", access_token: "` + token + `", mode: test, test_event_code: "` + testCode + `"}`}.YAML()
}

func runCLI(stdin string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := cli.Run(context.Background(), append([]string{"cleanads"}, args...), func(string) string { return "" },
		strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestSendTestCommand(t *testing.T) {
	g := graphtest.New(t)
	dir, dsn := t.TempDir(), storetest.DSN(t)
	cfg := filepath.Join(dir, "c.yaml")
	write := func(code string) {
		os.WriteFile(cfg, []byte(metaConfig(dsn, g.URL, graphtest.Token, code)), 0o600)
	}
	write("TEST99")
	if code, _, errOut := runCLI("", "send-test", "--site", "dent", "--config", cfg); code != 1 || !strings.Contains(errOut, "migrate") {
		t.Errorf("before migrate: %d %s", code, errOut)
	}
	runCLI("", "migrate", "--config", cfg)
	code, out, errOut := runCLI("", "send-test", "--site", "dent", "--config", cfg)
	if code != 0 || !strings.Contains(out, `"events_received": 1`) || !strings.Contains(out, "TEST99") {
		t.Fatalf("send-test: %d %s %s", code, out, errOut)
	}
	if ev := g.Events(); len(ev) != 1 || ev[0].TestEventCode != "TEST99" {
		t.Errorf("Meta received %+v", ev)
	}
	if strings.Contains(out+errOut, graphtest.Token) {
		t.Error("the token was printed")
	}
	if code, _, errOut := runCLI("", "send-test", "--config", cfg); code != 2 || !strings.Contains(errOut, "--site") {
		t.Errorf("without --site: %d %s", code, errOut)
	}
	if code, _, errOut := runCLI("", "send-test", "--site", "nope", "--config", cfg); code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("unknown site: %d %s", code, errOut)
	}
	g.SetTokens("another")
	if code, _, errOut := runCLI("", "send-test", "--site", "dent", "--config", cfg); code != 1 || !strings.Contains(errOut, "code 190") {
		t.Errorf("refused token: %d %s", code, errOut)
	}
}

func TestMatchKeysCommand(t *testing.T) {
	in := `{"field": "em", "value": " Ayse@Example.COM "}
{"field": "ph", "value": "0532 412 87 19"}
{"field": "em", "value": "not-an-email"}
`
	code, out, errOut := runCLI(in, "matchkeys", "--country", "tr")
	if code != 0 {
		t.Fatalf("%d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("output %q", out)
	}
	var ph, bad capi.MatchKey
	json.Unmarshal([]byte(lines[1]), &ph)
	json.Unmarshal([]byte(lines[2]), &bad)
	if ph.Normalized == nil || *ph.Normalized != "905324128719" || ph.Hash != capi.Hash("905324128719") {
		t.Errorf("phone line %s", lines[1])
	}
	if bad.Normalized != nil || bad.Error == "" || !strings.Contains(lines[2], `"normalized":null`) {
		t.Errorf("rejected line %s", lines[2])
	}
	if code, _, errOut := runCLI("", "matchkeys", "--country", "XX"); code != 2 || !strings.Contains(errOut, "unknown country") {
		t.Errorf("bad country: %d %s", code, errOut)
	}
}

// TestServeDeliversALead: a lead posted to a running server reaches the
// Graph stand-in as the raw and the qualified event, woken at once (poll is
// an hour).
func TestServeDeliversALead(t *testing.T) {
	g := graphtest.New(t)
	dir, dsn := t.TempDir(), storetest.MigratedDSN(t)
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte(metaConfig(dsn, g.URL, graphtest.Token, "TEST5")), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, []string{"cleanads", "serve", "--config", cfg}, func(string) string { return "" }, nil, out, errOut)
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d: %s", code, errOut.String())
		}
	}()
	var base string
	waitUntil(t, func() bool {
		if i := strings.Index(out.String(), "listening on "); i >= 0 {
			base = strings.Fields(out.String()[i+len("listening on "):])[0]
			return true
		}
		return false
	})
	req, _ := http.NewRequest("POST", base+"/v1/leads", strings.NewReader(
		`{"site":"dent","email":"ayse.yilmaz@gmail.com","phone":"05324128719","name":"Ayşe Yılmaz","fill_ms":8400,`+
			`"message":"Implant tedavisi için randevu almak istiyorum, hafta içi akşam uygunum.",`+
			`"page_url":"https://www.istanbuldis.example/x","user_agent":"Mozilla/5.0","client_ip":"203.0.113.1"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer dent-key-0123456789abcdef")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 202 {
		t.Fatalf("post: %d", resp.StatusCode)
	}
	waitUntil(t, func() bool { return len(g.Events()) == 2 })
	if ev := g.Events(); ev[0].TestEventCode != "TEST5" {
		t.Errorf("%+v", ev)
	}
}

// waitUntil guards against a hang; it does not measure speed.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	limit := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(limit) {
			t.Fatal("condition not met")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
