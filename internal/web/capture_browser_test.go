package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/browsertest"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/web"
)

// The capture tests' pages load only the one-line snippet, as an owner who
// cannot touch the form's markup installs it. The page's clock is the
// test's (fill times are exact), and a stub pixel keeps its calls in
// sessionStorage across navigations.
const captureHead = `<!doctype html><html><head><meta charset="utf-8"><title>Clinic</title>
<script>
window.__errs = []; window.addEventListener('error', function (e) { window.__errs.push(e.message + ' ' + e.lineno); });
window.__t = 1000000;
Date.now = function () { return window.__t; };
%s
// jQuery, as far as form plugins use it: handlers by event name, and
// trigger, which runs them up the tree without a DOM event.
window.jQuery = function (el) {
  return {
    on: function (names, fn) {
      names.split(' ').forEach(function (n) { el.__jq = el.__jq || {}; (el.__jq[n] = el.__jq[n] || []).push(fn); });
      return this;
    },
    trigger: function (n, data) {
      for (var t = el; t; t = t.parentNode) (t.__jq && t.__jq[n] || []).forEach(function (fn) { fn({ type: n, target: el }, data); });
      return this;
    }
  };
};
</script>
<script src="%s/t.js" data-site="%s" async></script>
</head><body>
`

// stubPixel keeps the pixel's calls across navigations.
const stubPixel = `window.fbq = function () {
  var c = JSON.parse(sessionStorage.getItem('fbq') || '[]');
  c.push([].slice.call(arguments));
  sessionStorage.setItem('fbq', JSON.stringify(c));
};`

// metaSnippet is Meta's own pixel snippet as sites paste it, less the
// fbevents.js it loads: its fbq queues every call until that script runs.
const metaSnippet = `!function(f,b,e,v,n,t,s){if(f.fbq)return;n=f.fbq=function(){n.callMethod?
n.callMethod.apply(n,arguments):n.queue.push(arguments)};if(!f._fbq)f._fbq=n;n.push=n;n.loaded=!0;n.version='2.0';
n.queue=[];}(window,document,'script','https://connect.facebook.net/en_US/fbevents.js');
fbq('init', '123456789012345');
fbq('track', 'PageView');`

// pixelLoaded is the same snippet once fbevents.js has run, before t.js
// did: the queue's calls are sent (here, kept in sent) and the ones after
// go straight out.
const pixelLoaded = metaSnippet + `
window.sent = [];
fbq.callMethod = function () { window.sent.push([].slice.call(arguments)); };
fbq.queue.forEach(function (a) { fbq.callMethod.apply(fbq, a); });
fbq.queue = [];`

// The site's own lead form, with no mark of ours; its names are Contact
// Form 7's.
const leadFields = `
  <input id="name" name="your-name">
  <input id="email" type="email" name="your-email">
  <input id="phone" type="tel" name="your-phone">
  <textarea id="msg" name="your-message"></textarea>
  <input type="hidden" name="treatment" value="implant">
  <button id="send" type="submit">Send</button>`

var capturePages = map[string]string{
	"/plain": `<form action="/thanks" method="post">` + leadFields + `</form>`,
	// A pop-up form, three seconds after load.
	"/late": `<div id="popup"></div><script>
setTimeout(function () {
  document.getElementById('popup').innerHTML = '<form action="/thanks" method="post">' + ` + "`" + leadFields + "`" + ` + '</form>';
}, 3000);
</script>`,
	"/reload": `<form method="post">
  <input id="name" name="your-name" value="%s">
  <input id="email" type="email" name="your-email" value="%s">
  <input id="phone" type="tel" name="your-phone" value="%s">
  <textarea id="msg" name="your-message">%s</textarea>
  <button id="send" type="submit">Send</button></form>`,
	"/search": `<form role="search" action="/thanks" method="get"><input id="q" type="search" name="s"><button id="go">Search</button></form>`,
	"/required": `<form action="/thanks" method="post">
  <input id="name" name="your-name">
  <input id="email" type="email" name="your-email" required>
  <input id="phone" type="tel" name="your-phone" required>
  <textarea id="msg" name="your-message"></textarea>
  <button id="send" type="submit">Send</button></form>`,
	// Contact Form 7 6.x's front-end contract: the submit is prevented, the
	// form's FormData goes to its REST route, the answer's status becomes a
	// bubbling DOM event on the form (wpcf7invalid, wpcf7mailsent, ...)
	// followed by wpcf7submit, and the form is reset after mail_sent.
	"/cf7": `<div class="wpcf7" id="wpcf7-f7-o1"><form action="/cf7#wpcf7-f7-o1" method="post" class="wpcf7-form init" novalidate data-status="init">
  <input type="hidden" name="_wpcf7" value="7"><input type="hidden" name="_wpcf7_version" value="6.0.6">
  <input type="hidden" name="_wpcf7_unit_tag" value="wpcf7-f7-o1">` + leadFields + `
  <div class="wpcf7-response-output" id="out"></div></form></div>
<script>
document.querySelector('form.wpcf7-form').addEventListener('submit', function (e) {
  var form = this, fd = new FormData(form);
  e.preventDefault();
  form.dispatchEvent(new CustomEvent('wpcf7beforesubmit', { bubbles: true }));
  fetch('/wp-json/contact-form-7/v1/contact-forms/7/feedback', { method: 'POST', body: fd })
    .then(function (r) { return r.json(); })
    .then(function (res) {
      var st = { validation_failed: 'invalid', mail_sent: 'mailsent' }[res.status];
      form.dispatchEvent(new CustomEvent('wpcf7' + st, { bubbles: true, detail: res }));
      form.dispatchEvent(new CustomEvent('wpcf7submit', { bubbles: true, detail: res }));
      if (res.status == 'mail_sent') form.reset();
      document.getElementById('out').textContent = res.message;
    });
});
</script>`,
	// WPForms (AJAX) and Elementor Forms: jQuery events on the form after
	// their own AJAX post.
	"/wpforms": `<div class="wpforms-container"><form class="wpforms-validate wpforms-form wpforms-ajax-form" action="/wpforms" method="post">` +
		leadFields + `<div id="out"></div></form></div>` + ajaxPlugin("wpformsAjaxSubmitSuccess", "wpformsAjaxSubmitFailed"),
	// A form that posts by itself with fetch and says nothing t.js knows.
	"/ajax": `<form action="/thanks" method="post">` + leadFields + `<div id="out"></div></form>` + ajaxPlugin("", ""),
	"/elementor": `<form class="elementor-form" method="post" name="Contact">` + leadFields + `<div id="out"></div></form>` +
		ajaxPlugin("submit_success", "error"),
}

func ajaxPlugin(ok, failed string) string {
	return `<script>
document.querySelector('form').addEventListener('submit', function (e) {
  var form = this;
  e.preventDefault();
  fetch('/plugin-ajax', { method: 'POST', body: new FormData(form) })
    .then(function (r) { return r.json(); })
    .then(function (res) {
      if ('` + ok + `') jQuery(form).trigger(res.status == 'mail_sent' ? '` + ok + `' : '` + failed + `', res);
      if (res.status == 'mail_sent') form.reset();
      document.getElementById('out').textContent = res.message;
    });
});
</script>`
}

// captureSite serves the pages and plays the site's own server: it records
// every post it gets and refuses a phone number shorter than ten digits,
// as a form plugin's server-side validation does.
type captureSite struct {
	tracker string
	mu      sync.Mutex
	posts   []url.Values
}

func (s *captureSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/thanks", "/wp-json/contact-form-7/v1/contact-forms/7/feedback", "/plugin-ajax":
		if r.Method == "POST" {
			r.ParseMultipartForm(1 << 20)
			s.mu.Lock()
			s.posts = append(s.posts, r.PostForm)
			s.mu.Unlock()
		}
		if r.URL.Path == "/thanks" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, thanksPage)
			return
		}
		digits := regexp.MustCompile(`\d`).FindAllString(r.PostForm.Get("your-phone"), -1)
		res := map[string]any{"status": "mail_sent", "message": "Thank you for your message. It has been sent."}
		if len(digits) < 10 {
			res = map[string]any{"status": "validation_failed", "message": "One or more fields have an error.",
				"invalid_fields": []map[string]string{{"field": "your-phone", "message": "The telephone number is invalid."}}}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(res)
		return
	}
	if r.URL.Path == "/reload" && r.Method == "POST" {
		// A form that its server checks and draws again, filled in, with
		// the error: no script of its own.
		r.ParseForm()
		s.mu.Lock()
		s.posts = append(s.posts, r.PostForm)
		s.mu.Unlock()
		if len(regexp.MustCompile(`\d`).FindAllString(r.PostForm.Get("your-phone"), -1)) >= 10 {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, thanksPage)
			return
		}
	}
	body, ok := capturePages[r.URL.Path]
	if r.URL.Path == "/reload" {
		body = fmt.Sprintf(body, html.EscapeString(r.PostForm.Get("your-name")), html.EscapeString(r.PostForm.Get("your-email")),
			html.EscapeString(r.PostForm.Get("your-phone")), html.EscapeString(r.PostForm.Get("your-message")))
		if r.Method == "POST" {
			body = `<p id="error">The telephone number is invalid.</p>` + body
		}
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	pixel := stubPixel
	switch r.URL.Query().Get("pixel") {
	case "snippet":
		pixel = metaSnippet
	case "loaded":
		pixel = pixelLoaded
	}
	fmt.Fprintf(w, captureHead, pixel, s.tracker, r.URL.Query().Get("site"))
	fmt.Fprint(w, body, "</body></html>")
}

// postedNames returns the field names of every post the site got.
func (s *captureSite) postedNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, p := range s.posts {
		for k := range p {
			seen[k] = true
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// inFlight counts the tracker's requests under way, so a test can wait
// for every lead post a page made before it says none arrived.
type inFlight struct {
	h http.Handler
	n atomic.Int64
}

func (f *inFlight) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.n.Add(1)
	defer f.n.Add(-1)
	f.h.ServeHTTP(w, r)
}

// implantMessage is a real customer's request, concrete enough for the
// built-in model to call it one (clean only on evidence).
const implantMessage = "Hello, I broke a front tooth yesterday and it hurts when I drink something cold. Can I book an appointment this week, ideally Thursday morning?"

func TestBrowserCapture(t *testing.T) {
	db := storetest.New(t)
	ctx := context.Background()
	clk := testkit.NewClock(time.Now().UTC().Truncate(time.Millisecond))

	graph := graphtest.New(t)
	graph.SetNow(clk.Now)
	client := capi.NewClient(capi.ClientOptions{BaseURL: graph.URL, HTTP: graph.Client(), Now: clk.Now})
	runner := deliver.New(deliver.Options{Store: db, Sender: client, Now: clk.Now, Node: "node-a", Jitter: func() float64 { return 0.5 }})
	svc := app.New(app.Options{Store: db, Now: clk.Now, Graph: client})
	flight := &inFlight{h: web.New(web.Options{App: svc, Store: db, Now: clk.Now}).Handler()}
	tracker := httptest.NewServer(flight)
	defer tracker.Close()
	site := &captureSite{tracker: "http://t.example.test:" + portOf(tracker.URL)}
	siteSrv := httptest.NewServer(site)
	defer siteSrv.Close()
	pageOrigin := "http://www.example.test:" + portOf(siteSrv.URL)

	// One site per case, so each counts its own leads.
	newSite := func(id string) model.SiteID {
		s := &model.Site{ID: model.SiteID(id), Name: id, Settings: model.SiteSettings{Origins: []string{pageOrigin}, Country: "TR",
			CookieDomain: ".example.test", Meta: model.MetaSettings{PixelID: "123456789012345", Mode: model.ModeLive}}, AccessToken: graphtest.Token}
		if err := db.SiteUpsert(ctx, s, clk.Now()); err != nil {
			t.Fatal(err)
		}
		return s.ID
	}

	guard := browsertest.New(t,
		chromedp.Flag("disable-features", "HttpsUpgrades,HttpsFirstBalancedModeAutoEnable"),
		chromedp.Flag("host-resolver-rules", "MAP *.example.test 127.0.0.1"),
	)
	run := func(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(guard, steps...); err != nil {
			t.Fatal(err)
		}
	}
	// eval runs js in the page. Chromium can name a page's script context
	// to chromedp a moment after the page has loaded; a script sent in that
	// moment is refused unrun ("Cannot find context with specified id"),
	// as a loaded CI machine showed, and is sent again.
	eval := func(t *testing.T, js string) {
		t.Helper()
		for try := 0; ; try++ {
			err := chromedp.Do(guard, chromedp.Evaluate[chromedp.Void](js))
			if err == nil {
				return
			}
			if try == 5 || !strings.Contains(err.Error(), "Cannot find context with specified id") {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// open loads a page of the site and waits for the visit's answer; the
	// pixel's log starts empty.
	open := func(t *testing.T, id model.SiteID, path string) map[string]any {
		t.Helper()
		if !strings.Contains(path, "?") {
			path += "?"
		}
		// chromedp can be left holding the previous page's script context
		// (every script then "Cannot find context with specified id"):
		// the page is opened again, which gives it the new one.
		for try := 0; ; try++ {
			var v map[string]any
			err := chromedp.Do(guard, chromedp.Navigate(pageOrigin+path+"&site="+string(id)),
				chromedp.Poll[chromedp.Void](`window.cleanads && window.cleanads.ready`))
			if err == nil {
				v, err = chromedp.Run(guard, chromedp.Evaluate[map[string]any](`cleanads.ready`, chromedp.EvalAwaitPromise))
			}
			if err == nil {
				err = chromedp.Do(guard, chromedp.Evaluate[chromedp.Void](`sessionStorage.removeItem('fbq')`))
			}
			if err == nil {
				return v
			}
			if try == 2 || !strings.Contains(err.Error(), "Cannot find context with specified id") {
				t.Fatal(err)
			}
		}
	}
	// typeLead fills the form as a person does, taking ms of the page's
	// clock from the first key to the submit.
	typeLead := func(t *testing.T, phone string, ms int) {
		t.Helper()
		eval(t, `document.getElementById('phone').value = ''`)
		run(t, chromedp.SendKeys(chromedp.CSS("#name"), "Ayşe Yılmaz"),
			chromedp.SendKeys(chromedp.CSS("#email"), "ayse.yilmaz@gmail.com"),
			chromedp.SendKeys(chromedp.CSS("#phone"), phone),
			chromedp.SendKeys(chromedp.CSS("#msg"), implantMessage))
		eval(t, fmt.Sprintf(`window.__t += %d`, ms))
	}
	leadsOf := func(t *testing.T, id model.SiteID) []*model.Lead {
		t.Helper()
		ls, err := db.LeadList(ctx, store.LeadFilter{Site: id, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return ls
	}
	// waitLeads waits until the site has n leads and the last of them
	// satisfies ok (a later attempt replaces a lead's values).
	waitLeads := func(t *testing.T, id model.SiteID, n int, ok func(*model.Lead) bool) []*model.Lead {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			ls := leadsOf(t, id)
			if len(ls) == n && (n == 0 || ok == nil || ok(ls[0])) {
				return ls
			}
			if time.Now().After(deadline) {
				t.Fatalf("site %s: %d leads, want %d in the expected state: %+v", id, len(ls), n, ls)
			}
			time.Sleep(30 * time.Millisecond)
		}
	}
	// settle waits until the browser has no request to the tracker under
	// way, after a page that proves the last page's posts were made.
	settle := func(t *testing.T) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); flight.n.Load() != 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("requests to the tracker never ended")
			}
		}
	}
	pixelLeads := func(t *testing.T) []string {
		t.Helper()
		var ids []string
		for _, c := range fbqCalls(guard, t, "fbq") {
			if id := eventIDOf([]fbqCall{c}, "Lead"); id != "" {
				ids = append(ids, id)
			}
		}
		return ids
	}
	// sentFor returns the events other than PageViews Meta got from the
	// site's pages (their URL names the site).
	sentFor := func(id model.SiteID) []graphtest.Received {
		var got []graphtest.Received
		for _, ev := range graph.Events() {
			if ev.EventName != "PageView" && strings.Contains(string(ev.JSON), "site="+string(id)+`"`) {
				got = append(got, ev)
			}
		}
		return got
	}
	// meta runs the delivery once the attempt window is over and returns
	// what Meta got for the site's leads.
	meta := func(t *testing.T, id model.SiteID) []graphtest.Received {
		t.Helper()
		clk.Add(app.AttemptWindow + time.Second)
		if _, err := runner.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		return sentFor(id)
	}
	clean := func(l *model.Lead) bool { return l.Phone == "0532 412 87 19" }

	t.Run("a plain form", func(t *testing.T) {
		id := newSite("plain")
		v := open(t, id, "/plain")
		if lf, _ := chromedp.Run(guard, chromedp.Evaluate[bool](`!!document.querySelector('form').$ca`)); !lf {
			t.Fatalf("the plain form was not found: %v", v)
		}
		typeLead(t, "0532 412 87 19", 9000)
		run(t, chromedp.Click(chromedp.CSS("#send")), chromedp.WaitVisible(chromedp.CSS("#thanks")))
		l := waitLeads(t, id, 1, nil)[0]
		if l.Name != "Ayşe Yılmaz" || l.Email != "ayse.yilmaz@gmail.com" || !clean(l) || l.Message != implantMessage ||
			l.Fields["treatment"] != "implant" || l.FillMS == nil || *l.FillMS != 9000 || l.Honeypot != "" {
			t.Errorf("lead: %+v", l)
		}
		if ids := pixelLeads(t); len(ids) != 1 || ids[0] != l.EventID {
			t.Errorf("pixel Leads %v, lead %s", ids, l.EventID)
		}
		if l.Verdict != model.VerdictClean {
			t.Errorf("a real request judged %s: %+v", l.Verdict, l.Reasons)
		}
	})

	t.Run("a form inserted three seconds after load", func(t *testing.T) {
		id := newSite("late")
		open(t, id, "/late")
		run(t, chromedp.WaitVisible(chromedp.CSS("#send")))
		run(t, chromedp.Poll[chromedp.Void](`!!document.querySelector('form').$ca`))
		typeLead(t, "0532 412 87 19", 7000)
		run(t, chromedp.Click(chromedp.CSS("#send")), chromedp.WaitVisible(chromedp.CSS("#thanks")))
		l := waitLeads(t, id, 1, nil)[0]
		if !clean(l) || l.Message != implantMessage || l.FillMS == nil || *l.FillMS != 7000 {
			t.Errorf("lead: %+v", l)
		}
		if ids := pixelLeads(t); len(ids) != 1 || ids[0] != l.EventID {
			t.Errorf("pixel Leads %v, lead %s", ids, l.EventID)
		}
	})

	// A refused attempt and its correction are one lead: with the plugin's
	// word (Contact Form 7's DOM events, WPForms' and Elementor's jQuery
	// events) only the attempt the site took is sent.
	for _, c := range []struct{ name, page string }{
		{"Contact Form 7 refused then corrected", "/cf7"},
		{"WPForms refused then corrected", "/wpforms"},
		{"Elementor refused then corrected", "/elementor"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := newSite(strings.TrimPrefix(c.page, "/"))
			open(t, id, c.page)
			typeLead(t, "07946 31", 6000)
			run(t, chromedp.Click(chromedp.CSS("#send")), chromedp.Poll[chromedp.Void](`/error/.test(document.getElementById('out').textContent)`))
			// The visitor corrects the number and sends again.
			run(t, chromedp.SendKeys(chromedp.CSS("#phone"), "\b\b\b\b\b\b\b\b"))
			eval(t, `document.getElementById('phone').value = ''`)
			run(t, chromedp.SendKeys(chromedp.CSS("#phone"), "0532 412 87 19"))
			eval(t, `window.__t += 5000`)
			run(t, chromedp.Click(chromedp.CSS("#send")), chromedp.Poll[chromedp.Void](`/sent/.test(document.getElementById('out').textContent)`))
			l := waitLeads(t, id, 1, nil)[0]
			if !clean(l) || l.Message != implantMessage || l.Name != "Ayşe Yılmaz" || l.FillMS == nil || *l.FillMS != 11000 {
				t.Errorf("lead: %+v", l)
			}
			if l.Verdict != model.VerdictClean {
				t.Errorf("verdict %s: %+v", l.Verdict, l.Reasons)
			}
			ids := pixelLeads(t)
			if len(ids) != 1 || ids[0] != l.EventID {
				t.Errorf("pixel Leads %v, lead %s", ids, l.EventID)
			}
			// The refused attempt was never sent: one judgement.
			if h, _ := db.HistoryByLead(ctx, l.ID); len(h) != 1 {
				t.Errorf("history: %+v", h)
			}
			// Confirmed by the plugin: nothing held, sent at once.
			if _, err := runner.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			var leads, qualified int
			for _, ev := range graph.Events() {
				if ev.EventName == "Lead" && ev.EventID == l.EventID {
					leads++
				}
				if ev.EventName == "QualifiedLead" && strings.Contains(string(ev.JSON), "0532") {
					t.Errorf("a clear phone at Meta: %s", ev.JSON)
				}
				if ev.EventName == "QualifiedLead" {
					qualified++
				}
			}
			if leads != 1 || qualified == 0 {
				t.Errorf("at Meta: %d Lead events with the pixel's event_id %s, %d qualified", leads, l.EventID, qualified)
			}
			graph.Reset()
		})
	}

	// Without a plugin's word each attempt is sent; the server keeps the
	// lead open and the correction replaces the refused values.
	t.Run("a form that says nothing, refused then corrected", func(t *testing.T) {
		id := newSite("ajax")
		open(t, id, "/ajax")
		typeLead(t, "07946 31", 6000)
		run(t, chromedp.Click(chromedp.CSS("#send")), chromedp.Poll[chromedp.Void](`/error/.test(document.getElementById('out').textContent)`))
		first := waitLeads(t, id, 1, nil)[0]
		if first.Phone != "07946 31" {
			t.Fatalf("first attempt: %+v", first)
		}
		eval(t, `document.getElementById('phone').value = ''`)
		run(t, chromedp.SendKeys(chromedp.CSS("#phone"), "0532 412 87 19"))
		eval(t, `window.__t += 5000`)
		run(t, chromedp.Click(chromedp.CSS("#send")), chromedp.Poll[chromedp.Void](`/sent/.test(document.getElementById('out').textContent)`))
		l := waitLeads(t, id, 1, clean)[0]
		if l.ID != first.ID || l.EventID != first.EventID || l.Verdict != model.VerdictClean || l.FillMS == nil || *l.FillMS != 11000 {
			t.Errorf("lead after the correction: %+v (first %s)", l, first.ID)
		}
		if h, _ := db.HistoryByLead(ctx, l.ID); len(h) != 2 || h[1].Data["changed"] != "phone, fill_ms" || h[1].Data["verdict"] != "clean" {
			t.Errorf("history: %+v", h)
		}
		if ids := pixelLeads(t); len(ids) != 1 || ids[0] != l.EventID {
			t.Errorf("pixel Leads %v, lead %s", ids, l.EventID)
		}
		// Nothing went to Meta in the window; after it, one Lead with the
		// pixel's event_id, for the corrected lead.
		if _, err := runner.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if evs := sentFor(id); len(evs) != 0 {
			t.Errorf("sent within the window: %+v", evs)
		}
		var leads, qualified int
		for _, ev := range meta(t, id) {
			switch ev.EventName {
			case "Lead":
				if ev.EventID != l.EventID {
					t.Errorf("Lead at Meta with event_id %s, the pixel's is %s", ev.EventID, l.EventID)
				}
				leads++
			case "QualifiedLead":
				qualified++
			}
		}
		if leads != 1 || qualified != 1 {
			t.Errorf("at Meta: %d Lead, %d QualifiedLead", leads, qualified)
		}
		graph.Reset()
	})

	// A form its server refuses and draws again, filled in: the page loads
	// anew, and the form keeps its event_id for the attempt window.
	t.Run("a form its server draws again, refused then corrected", func(t *testing.T) {
		id := newSite("reload")
		open(t, id, "/reload")
		typeLead(t, "07946 31", 6000)
		run(t, chromedp.Click(chromedp.CSS("#send")), chromedp.WaitVisible(chromedp.CSS("#error")))
		first := waitLeads(t, id, 1, nil)[0]
		run(t, chromedp.Poll[chromedp.Void](`window.cleanads && window.cleanads.ready`))
		eval(t, `document.getElementById('phone').value = ''`)
		run(t, chromedp.SendKeys(chromedp.CSS("#phone"), "0532 412 87 19"))
		eval(t, `window.__t += 7000`)
		run(t, chromedp.Click(chromedp.CSS("#send")), chromedp.WaitVisible(chromedp.CSS("#thanks")))
		l := waitLeads(t, id, 1, clean)[0]
		if l.ID != first.ID || l.Verdict != model.VerdictClean || l.Message != implantMessage || l.FillMS == nil || *l.FillMS != 7000 {
			t.Errorf("lead after the correction: %+v (first %s)", l, first.ID)
		}
		if h, _ := db.HistoryByLead(ctx, l.ID); len(h) != 2 {
			t.Errorf("history: %+v", h)
		}
		if ids := pixelLeads(t); len(ids) != 1 || ids[0] != l.EventID {
			t.Errorf("pixel Leads %v, lead %s", ids, l.EventID)
		}
	})

	// The site keeps its own pixel snippet: the browser sends one PageView,
	// with the server's event_id.
	t.Run("the site's pixel snippet, not loaded yet", func(t *testing.T) {
		id := newSite("pixel")
		v := open(t, id, "/plain?pixel=snippet")
		q, err := chromedp.Run(guard, chromedp.Evaluate[[][]any](`fbq.queue.map(function (a) { return [].slice.call(a); })`))
		if err != nil {
			t.Fatal(err)
		}
		var pv []any
		for _, c := range q {
			if c[0] == "track" && c[1] == "PageView" {
				pv = append(pv, c)
			}
		}
		if len(pv) != 1 || fmt.Sprint(pv[0]) != fmt.Sprint([]any{"track", "PageView", map[string]any{}, map[string]any{"eventID": v["event_id"]}}) {
			t.Errorf("PageViews for the pixel: %v (visit %v)", pv, v["event_id"])
		}
	})
	t.Run("the site's pixel, loaded before t.js", func(t *testing.T) {
		id := newSite("pixel-loaded")
		v := open(t, id, "/plain?pixel=loaded")
		sent, err := chromedp.Run(guard, chromedp.Evaluate[[][]any](`window.sent`))
		if err != nil {
			t.Fatal(err)
		}
		var pv int
		for _, c := range sent {
			if c[0] == "track" && c[1] == "PageView" {
				pv++
			}
		}
		// Its own PageView went first, without an event_id; t.js sends none.
		if pv != 1 || len(sent[1]) != 2 {
			t.Errorf("PageViews sent by the pixel: %v", sent)
		}
		// The server's PageView carries the pixel's _fbp, which Meta
		// matches with the browser's.
		d, err := db.VisitPageView(ctx, id, fmt.Sprint(v["event_id"]))
		if err != nil || !strings.Contains(string(d.Payload), fmt.Sprint(v["fbp"])) || v["fbp"] == "" {
			t.Errorf("server PageView: %v %v (fbp %v)", d, err, v["fbp"])
		}
	})

	t.Run("a search form and an abandoned form", func(t *testing.T) {
		id := newSite("nolead")
		open(t, id, "/search")
		if n, _ := chromedp.Run(guard, chromedp.Evaluate[bool](`!!document.querySelector('form').$ca`)); n {
			t.Errorf("the search form was taken for a lead form")
		}
		run(t, chromedp.SendKeys(chromedp.CSS("#q"), "implant fiyat"), chromedp.Click(chromedp.CSS("#go")), chromedp.WaitVisible(chromedp.CSS("#thanks")))
		open(t, id, "/plain")
		typeLead(t, "0532 412 87 19", 9000)
		// ... and the visitor leaves without sending.
		open(t, id, "/search")
		settle(t)
		if ls := leadsOf(t, id); len(ls) != 0 {
			t.Errorf("leads without a lead: %+v", ls)
		}
	})

	t.Run("a browser validation block, then a submit", func(t *testing.T) {
		id := newSite("required")
		open(t, id, "/required")
		run(t, chromedp.SendKeys(chromedp.CSS("#name"), "Ayşe Yılmaz"), chromedp.SendKeys(chromedp.CSS("#msg"), implantMessage))
		eval(t, `window.__t += 4000`)
		run(t, chromedp.Click(chromedp.CSS("#send")))
		if v, _ := chromedp.Run(guard, chromedp.Evaluate[bool](`!document.querySelector('form').checkValidity()`)); !v {
			t.Fatal("the browser did not block the empty required fields")
		}
		run(t, chromedp.SendKeys(chromedp.CSS("#email"), "ayse.yilmaz@gmail.com"), chromedp.SendKeys(chromedp.CSS("#phone"), "0532 412 87 19"))
		eval(t, `window.__t += 3000`)
		run(t, chromedp.Click(chromedp.CSS("#send")), chromedp.WaitVisible(chromedp.CSS("#thanks")))
		l := waitLeads(t, id, 1, nil)[0]
		if !clean(l) || l.Email != "ayse.yilmaz@gmail.com" || l.FillMS == nil || *l.FillMS != 7000 {
			t.Errorf("lead: %+v", l)
		}
		if ids := pixelLeads(t); len(ids) != 1 {
			t.Errorf("pixel Leads %v", ids)
		}
	})

	t.Run("a bot submitting within 300 ms", func(t *testing.T) {
		id := newSite("bot")
		open(t, id, "/plain")
		typeLead(t, "0532 412 87 19", 300)
		run(t, chromedp.Click(chromedp.CSS("#send")), chromedp.WaitVisible(chromedp.CSS("#thanks")))
		l := waitLeads(t, id, 1, nil)[0]
		if l.FillMS == nil || *l.FillMS != 300 || l.Verdict != model.VerdictJunk {
			t.Errorf("bot lead: fill %s verdict %s", fill(l.FillMS), l.Verdict)
		}
		if ids := pixelLeads(t); len(ids) != 0 {
			t.Errorf("the pixel got a Lead for a 300 ms fill: %v", ids)
		}
		if evs := meta(t, id); len(evs) != 0 {
			t.Errorf("Meta got events for a junk lead: %+v", evs)
		}
	})

	t.Run("a filled honeypot fires no pixel Lead", func(t *testing.T) {
		id := newSite("honeypot")
		open(t, id, "/plain")
		hidden, err := chromedp.Run(guard, chromedp.Evaluate[bool](`(function () {
			var hp = document.querySelector('input[name=website_url]');
			return !!hp && hp.form === null && hp.tabIndex === -1 && hp.parentNode.getAttribute('aria-hidden') === 'true' &&
				hp.getBoundingClientRect().right <= 0;
		})()`))
		if err != nil || !hidden {
			t.Errorf("honeypot: %v %v", hidden, err)
		}
		eval(t, `document.querySelector('input[name=website_url]').value = 'https://seo.example'`)
		typeLead(t, "0532 412 87 19", 8000)
		run(t, chromedp.Click(chromedp.CSS("#send")), chromedp.WaitVisible(chromedp.CSS("#thanks")))
		l := waitLeads(t, id, 1, nil)[0]
		if l.Honeypot != "https://seo.example" || !hasReason(l, "HONEYPOT") {
			t.Errorf("honeypot lead: %q %+v", l.Honeypot, l.Reasons)
		}
		if ids := pixelLeads(t); len(ids) != 0 {
			t.Errorf("the pixel got a Lead for a filled honeypot: %v", ids)
		}
	})

	t.Run("the site's own post carries none of our fields", func(t *testing.T) {
		own := map[string]bool{"your-name": true, "your-email": true, "your-phone": true, "your-message": true, "treatment": true,
			"s": true, "_wpcf7": true, "_wpcf7_version": true, "_wpcf7_unit_tag": true}
		names := site.postedNames()
		if len(names) < 5 {
			t.Fatalf("too few posts to tell: %v", names)
		}
		for _, n := range names {
			if !own[n] {
				t.Errorf("the site's server got a field of ours: %q (all: %v)", n, names)
			}
		}
	})
}
