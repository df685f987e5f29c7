package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/cli"
)

// startDemo runs `cleanads demo` in-process on two free ports and waits
// until it says what to open; it returns the server's and the demo
// website's addresses, its output, and a stop function (also run when the
// test ends).
func startDemo(t *testing.T, dir string, extra ...string) (server, page string, stdout *syncBuffer, stop func()) {
	t.Helper()
	ports := freePorts(t, 2)
	server, page = fmt.Sprintf("http://127.0.0.1:%d", ports[0]), fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	args := append([]string{"cleanads", "demo", "--dir", dir, "--listen", fmt.Sprintf("127.0.0.1:%d", ports[0]),
		"--page-listen", fmt.Sprintf("127.0.0.1:%d", ports[1])}, extra...)
	go func() {
		done <- cli.Run(ctx, args, func(string) string { return "" }, strings.NewReader(""), stdout, stderr)
	}()
	// A guard against a demo that never starts, not a measure of speed.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stdout.String(), "Ctrl-C stops the demo") {
		select {
		case code := <-done:
			cancel()
			t.Fatalf("demo exited %d: %s %s", code, stdout.String(), stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("demo did not start: %s %s", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopped := false
	stop = func() {
		if !stopped {
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("demo exited %d: %s", code, stderr.String())
			}
			stopped = true
		}
	}
	t.Cleanup(stop)
	return server, page, stdout, stop
}

// TestDemo: `cleanads demo` serves the server and a demo website whose form
// loads t.js through the one-line snippet only; a visit and a lead sent
// through the tracker's own endpoints, as t.js sends them from that page,
// land as a judged lead in the inbox, counted on the dashboard. A second
// start reuses the set-up and prints no password.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	server, page, out, stop := startDemo(t, dir)
	m := regexp.MustCompile(`(?m)^Password: (\S+)$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no password printed:\n%s", out)
	}
	password := m[1]
	for _, want := range []string{page + "/", server + "/admin/", "log in as demo@cleanads.example", "Meta: dry run"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo does not say %q:\n%s", want, out)
		}
	}

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, u, ct, body string, hdr map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, u, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	// The demo website: the one line, nothing more.
	code, html := do("GET", page+"/", "", "", nil)
	snippet := `<script src="` + server + `/t.js" data-site="demo" async></script>`
	if code != 200 || !strings.Contains(html, snippet) || strings.Contains(html, "data-cleanads") || !strings.Contains(html, `<form method="post" action="/contact">`) {
		t.Fatalf("the demo page (%d) lacks the snippet or a plain form:\n%s", code, html)
	}
	// Opened as localhost, it loads the tracker from localhost too: the
	// same site as the page, so the tracker's cookies are first-party.
	localPage := strings.Replace(page, "127.0.0.1", "localhost", 1)
	if _, html := do("GET", localPage+"/", "", "", nil); !strings.Contains(html, `src="`+strings.Replace(server, "127.0.0.1", "localhost", 1)+`/t.js"`) {
		t.Errorf("the page opened on localhost loads t.js from elsewhere:\n%s", html)
	}
	if code, _ := do("GET", server+"/t.js", "", "", map[string]string{"Origin": page}); code != 200 {
		t.Errorf("t.js: %d", code)
	}

	// The visit and the lead, as t.js posts them from the page.
	hdr := map[string]string{"Origin": page, "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) demo test"}
	code, body := do("POST", server+"/v1/collect?site=demo", "text/plain", `{"url":"`+page+`/","referrer":"","lf":1}`, hdr)
	var visit struct {
		EventID   string `json:"event_id"`
		FormToken string `json:"form_token"`
	}
	if err := json.Unmarshal([]byte(body), &visit); code != 200 || err != nil || visit.FormToken == "" || visit.EventID == "" {
		t.Fatalf("collect from the demo page: %d %s", code, body)
	}
	// A person takes more than the two seconds the server's form token
	// demands between the visit and the lead.
	time.Sleep(2100 * time.Millisecond)
	lead, _ := json.Marshal(map[string]any{"event_id": "demo-lead-1", "name": "Ayşe Yılmaz", "phone": "0532 412 87 19",
		"email": "ayse.yilmaz@gmail.com", "message": "Merhaba, implant tedavisi için randevu almak istiyorum. Hafta içi öğleden sonra uygundur.",
		"page_url": page + "/", "form_token": visit.FormToken, "fill_ms": 24000, "hp": ""})
	if code, body := do("POST", server+"/v1/leads?site=demo", "text/plain", string(lead), hdr); code/100 != 2 {
		t.Fatalf("lead from the demo page: %d %s", code, body)
	}
	// The site's own back end gets its form as ever.
	code, html = do("POST", page+"/contact", "application/x-www-form-urlencoded", url.Values{"name": {"Ayşe Yılmaz"},
		"phone": {"0532 412 87 19"}, "email": {"ayse.yilmaz@gmail.com"}, "message": {"Merhaba"}}.Encode(), nil)
	if code != 200 || !strings.Contains(html, `<strong id="fields">email, message, name, phone</strong>`) {
		t.Errorf("the site's own form post: %d\n%s", code, html)
	}

	// The lead, judged, in the inbox; the visit on the dashboard.
	if code, _ := do("POST", server+"/admin/login", "application/x-www-form-urlencoded",
		url.Values{"email": {"demo@cleanads.example"}, "password": {password}}.Encode(), nil); code != http.StatusSeeOther {
		t.Fatalf("logging in with the printed password: %d", code)
	}
	_, inbox := do("GET", server+"/admin/", "", "", nil)
	if !strings.Contains(inbox, "Ayşe Yılmaz") || !regexp.MustCompile(`badge (clean|review)">`).MatchString(inbox) {
		t.Errorf("the lead is not judged in the inbox:\n%s", inbox)
	}
	// The demo site starts with a meeting and a won deal, as init's do: its
	// lead page can record either at once.
	_, siteHTML := do("GET", server+"/admin/sites/demo", "", "", nil)
	for _, want := range []string{`value="meeting"`, `value="Schedule"`, `value="won"`, `value="Purchase"`} {
		if !strings.Contains(siteHTML, want) {
			t.Errorf("the demo site's stages lack %q", want)
		}
	}
	_, dash := do("GET", server+"/admin/dashboard?site=demo", "", "", nil)
	if !strings.Contains(dash, `stat-n">1</span><span class="stat-l">visits · 1 to a page with a lead form`) {
		t.Errorf("the dashboard does not count the visit:\n%s", dash)
	}

	// Started again, the demo reuses its folder: the same user, no new
	// password unless asked for.
	stop()
	_, _, out, stop = startDemo(t, dir)
	if strings.Contains(out.String(), "Password:") || !strings.Contains(out.String(), "printed the first time") {
		t.Errorf("a second start:\n%s", out)
	}
	stop()
	_, _, out, _ = startDemo(t, dir, "--new-password")
	if m := regexp.MustCompile(`(?m)^Password: (\S+)$`).FindStringSubmatch(out.String()); m == nil || m[1] == password {
		t.Errorf("--new-password:\n%s", out)
	}
}

// TestDemoRefusesLiveMeta: the demo sends to Test Events or nowhere.
func TestDemoRefusesLiveMeta(t *testing.T) {
	code, _, errOut := runCLI("", "demo", "--dir", t.TempDir(), "--pixel-id", "123456789012345", "--meta-token", "EAAB")
	if code == 0 || !strings.Contains(errOut, "--test-event-code together") {
		t.Errorf("a pixel and a token without a test code: exit %d, %s", code, errOut)
	}
}
