package web_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/browsertest"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/outhook"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/web"
)

// hookReceiver is a CRM's endpoint that verifies posts as docs/webhooks.md
// says, and answers 500 while down.
type hookReceiver struct {
	mu     sync.Mutex
	secret string
	down   bool
	ids    map[string]int
	bad    int
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	var ts, sig string
	for _, part := range strings.Split(r.Header.Get("CleanAds-Signature"), ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	m := hmac.New(sha256.New, []byte(h.secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute || !hmac.Equal([]byte(sig), []byte(hex.EncodeToString(m.Sum(nil)))) {
		h.bad++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if h.down {
		http.Error(w, "crm is down for maintenance", http.StatusInternalServerError)
		return
	}
	var ev struct{ ID string }
	_ = json.Unmarshal(body, &ev)
	h.ids[ev.ID]++
	_, _ = w.Write([]byte(`{"stored":true}`))
}

// TestWebhooksInBrowser adds an outgoing webhook on a site's page in real
// Chromium (a bad address refused in plain words first), copies the secret
// shown once into a receiver that verifies posts from the docs alone,
// sends a test event, sees each post with its answer, replays one, and
// removes the webhook; on a desktop and a phone, in English and Turkish,
// nothing wider than the screen. Screenshots go to testoutput/.
func TestWebhooksInBrowser(t *testing.T) {
	ctx := browsertest.New(t)
	bg := context.Background()
	db := storetest.SQLite(t)
	site := testkit.AddSite(t, db, testkit.Site(), time.Now())
	users := auth.New(auth.Options{Store: db, Cost: bcrypt.MinCost})
	u, err := users.AddUser(bg, adminEmail, adminPass)
	if err != nil {
		t.Fatal(err)
	}
	svc := app.New(app.Options{Store: db})
	runner := deliver.New(deliver.Options{Store: db, Node: "node-a",
		Handlers: map[string]deliver.Handler{model.DestinationWebhook: outhook.NewWorker(svc, nil, nil)}})
	run := func() {
		t.Helper()
		if _, err := runner.RunOnce(bg); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(web.New(web.Options{Store: db, App: svc, Auth: users, Location: time.UTC}).Handler())
	t.Cleanup(srv.Close)
	rc := &hookReceiver{ids: map[string]int{}}
	crm := httptest.NewServer(rc)
	t.Cleanup(crm.Close)
	base := srv.URL
	page := base + "/admin/sites/" + string(site.ID)
	do, text := browserSteps(t, ctx)
	// The logout form shows once the login's redirect has landed.
	browserLogIn(t, ctx, base, `form[action="/admin/logout"]`)

	do("the site's page", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#h-webhooks")))
	do("a plain http address is refused",
		chromedp.SendKeys(chromedp.CSS("#hook-url"), "http://crm.example.com/hook"),
		chromedp.Click(chromedp.CSS(`form[action$="/webhooks#webhooks"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#hook-url-err")))
	if got := text("#hook-url-err"); !strings.Contains(got, "must use https") {
		t.Errorf("the refusal says %q", got)
	}
	if eps, _ := svc.Webhooks(bg, site.ID); len(eps) != 0 {
		t.Fatalf("a refused address was stored: %v", eps)
	}
	do("the receiver's address is added",
		chromedp.SetValue(chromedp.CSS("#hook-url"), crm.URL+"/cleanads"),
		chromedp.Click(chromedp.CSS(`form[action$="/webhooks#webhooks"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#hook-secret")))
	rc.secret = strings.TrimSpace(text("#hook-secret"))
	if !strings.HasPrefix(rc.secret, "whsec_") {
		t.Fatalf("the secret shown: %q", rc.secret)
	}
	do("the secret is not shown again", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(".hook-endpoints")))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#hook-secret").length`)); err != nil || n != 0 {
		t.Errorf("the secret is on the page again (%d, %v)", n, err)
	}
	do("send a test event", chromedp.Click(chromedp.CSS(`form[action$="/test#webhooks"] button`)), chromedp.WaitVisible(chromedp.CSS(".alert")))
	run()

	// A lead, posted while the CRM answers; a second while it is down.
	fill := int64(30000)
	for i, down := range []bool{false, true} {
		rc.mu.Lock()
		rc.down = down
		rc.mu.Unlock()
		if _, _, err := svc.Submit(bg, site, &app.LeadInput{EventID: "ev" + strconv.Itoa(i), Email: "ayse" + strconv.Itoa(i) + "@gmail.com",
			Phone: "0532412871" + strconv.Itoa(i), Name: "Ayşe Yılmaz", Message: "Implant için randevu almak istiyorum.",
			PageURL: testkit.Origin + "/implant", UserAgent: "Mozilla/5.0", ClientIP: "203.0.113.1", FillMS: &fill}); err != nil {
			t.Fatal(err)
		}
		run()
	}
	rc.mu.Lock()
	if rc.bad != 0 || len(rc.ids) < 2 {
		t.Errorf("the receiver took %d events and refused %d signatures", len(rc.ids), rc.bad)
	}
	rc.mu.Unlock()

	for _, view := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		for _, lang := range []string{"en", "tr"} {
			name := view.name + "-" + lang
			if err := db.UserSetLang(bg, u.ID, lang, time.Now()); err != nil {
				t.Fatal(err)
			}
			opts := []chromedp.EmulateViewportOption{}
			if view.w < 500 {
				opts = append(opts, chromedp.EmulateMobile)
			}
			do(name+": screen", chromedp.EmulateViewport(view.w, view.h, opts...))
			do(name+": the page", chromedp.Navigate(page+"?view="+name+"#webhooks"), chromedp.WaitVisible(chromedp.CSS(".hook-posts")))
			posts := text(".hook-posts")
			for _, want := range []string{"webhook.test", "lead.received", "200", `{"stored":true}`, "500", "crm is down for maintenance",
				map[string]string{"en": "retrying", "tr": "yeniden deneniyor"}[lang], map[string]string{"en": "Answer", "tr": "Yanıt"}[lang]} {
				if !strings.Contains(posts, want) {
					t.Errorf("%s: the posts do not say %q: %q", name, want, posts)
				}
			}
			if got := text("#h-webhooks"); got != map[string]string{"en": "Outgoing webhooks", "tr": "Giden webhook'lar"}[lang] {
				t.Errorf("%s: the section's title: %q", name, got)
			}
			if over := pageOverflow(t, ctx); over > 0 {
				t.Errorf("%s: the page reaches %.0f px past the screen's edge", name, over)
			}
			browsertest.ScreenshotOf(t, ctx, "webhooks-"+name, "#webhooks")
		}
	}

	// Replay the first lead's post: the receiver gets the same id again.
	posts, err := svc.WebhookDeliveries(bg, site.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	var sent *model.Delivery
	for _, d := range posts {
		if d.State == model.DeliverySent && d.Kind == model.HookLeadReceived {
			sent = d
		}
	}
	if sent == nil {
		t.Fatal("no lead.received post was sent")
	}
	rc.mu.Lock()
	rc.down = false
	rc.mu.Unlock()
	do("replay", chromedp.Navigate(page+"?replay#webhooks"), chromedp.WaitVisible(chromedp.CSS(".hook-posts")),
		chromedp.Click(chromedp.CSS(`form[action*="/posts/`+sent.ID+`/replay"] button`)), chromedp.WaitVisible(chromedp.CSS(".alert")))
	run()
	var ev struct{ ID string }
	_ = json.Unmarshal(sent.Payload, &ev)
	rc.mu.Lock()
	if rc.ids[ev.ID] != 2 {
		t.Errorf("the replayed event %s was received %d times, want 2", ev.ID, rc.ids[ev.ID])
	}
	rc.mu.Unlock()

	do("remove", chromedp.Navigate(page+"?remove#webhooks"), chromedp.WaitVisible(chromedp.CSS(".hook-endpoints")),
		chromedp.Click(chromedp.CSS(`form[action$="/remove#webhooks"] button`)), chromedp.WaitVisible(chromedp.CSS(".alert")))
	if got := text("#webhooks"); !strings.Contains(got, "Henüz webhook yok.") {
		t.Errorf("after the removal the section says %q", got)
	}
	if eps, _ := svc.Webhooks(bg, site.ID); len(eps) != 0 {
		t.Errorf("%d webhooks left after the removal", len(eps))
	}
}
