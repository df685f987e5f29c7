package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/web"
)

// fakeAds is an ad platform for the admin UI's tests: a pixel code
// (digits), a mode, an access token and stages; its SendTest posts to a
// local stand-in that takes only the token it was given.
type fakeAds struct {
	name, label string
	api         *httptest.Server
	mu          sync.Mutex
	tokens      []string // the tokens the stand-in saw
	validated   int      // Validate's calls
}

const fakeToken = "fk-secret-token-0123456789"

func newFakeAds(t *testing.T, name, label string) *fakeAds {
	f := &fakeAds{name: name, label: label}
	f.api = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		f.mu.Lock()
		f.tokens = append(f.tokens, tok)
		f.mu.Unlock()
		if tok != fakeToken {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"code":40001,"message":"Access token is invalid"}`)
			return
		}
		io.WriteString(w, `{"code":0,"message":"OK"}`)
	}))
	t.Cleanup(f.api.Close)
	return f
}

func (f *fakeAds) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.tokens...)
}

type fakeDoc struct {
	PixelCode string            `json:"pixel_code"`
	Mode      string            `json:"mode"`
	Stages    map[string]string `json:"stages"`
}

func (f *fakeAds) doc(site *model.Site) fakeDoc {
	var d fakeDoc
	platform.Decode(site, f.name, &d)
	return d
}

func (f *fakeAds) Name() string  { return f.name }
func (f *fakeAds) Label() string { return f.label }
func (f *fakeAds) On(site *model.Site) bool {
	return f.doc(site).PixelCode != "" && platform.Secret(site, f.name, "access_token") != ""
}
func (f *fakeAds) Build(context.Context, platform.Input) (*platform.Event, error) {
	return nil, platform.Skip("not in this test")
}
func (f *fakeAds) MaxAge() time.Duration { return 7 * 24 * time.Hour }
func (f *fakeAds) BatchSize() int        { return 10 }
func (f *fakeAds) Send(context.Context, *model.Site, []*model.Delivery) ([]platform.Outcome, error) {
	return nil, errors.New("not in this test")
}
func (f *fakeAds) Redact(p json.RawMessage) json.RawMessage { return p }
func (f *fakeAds) Shrink(p json.RawMessage) json.RawMessage { return p }
func (f *fakeAds) SendTest(ctx context.Context, site *model.Site) (*platform.TestResult, error) {
	d := f.doc(site)
	ev, _ := json.Marshal(map[string]any{"event": "SubmitForm", "pixel_code": d.PixelCode, "test_event_code": "TEST123"})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.api.URL, bytes.NewReader(ev))
	req.Header.Set("Authorization", "Bearer "+platform.Secret(site, f.name, "access_token"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	res := &platform.TestResult{Account: d.PixelCode, Code: "TEST123", Event: ev, Answer: answer}
	if resp.StatusCode != http.StatusOK {
		return res, &platform.Failure{Class: platform.Paused, Words: "the access token was refused",
			Err: fmt.Errorf("HTTP %d: %s", resp.StatusCode, answer)}
	}
	return res, nil
}
func (f *fakeAds) Fields() []platform.Field {
	return []platform.Field{
		{Key: "pixel_code", Label: "Pixel code", Help: "Digits, from the events manager.", Kind: platform.FieldText, Required: true},
		{Key: "mode", Label: "Mode", Kind: platform.FieldChoice, Choices: []string{"live", "test"}},
		{Key: "access_token", Label: "Access token", Kind: platform.FieldSecret, Required: true},
		{Key: "stages", Label: "Stages", Kind: platform.FieldStages},
	}
}
func (f *fakeAds) Validate(site *model.Site) []platform.FieldError {
	f.mu.Lock()
	f.validated++
	f.mu.Unlock()
	d := f.doc(site)
	var out []platform.FieldError
	if d.PixelCode != "" && strings.Trim(d.PixelCode, "0123456789") != "" {
		out = append(out, platform.FieldError{Key: "pixel_code", Message: "want the pixel code's digits"})
	}
	for stage, ev := range d.Stages {
		if ev == "Refund" {
			out = append(out, platform.FieldError{Key: "stages", Message: "stage " + stage + ": Refund is not an event"})
		}
	}
	return out
}

// withPlatforms gives the web server the platforms.
func withPlatforms(ps ...platform.Platform) func(*web.Options) {
	return func(o *web.Options) { o.Platforms = ps }
}

// fieldError returns the error shown next to a field, "" when none.
func fieldError(body, id string) string {
	m := regexp.MustCompile(`<small id="` + regexp.QuoteMeta(id) + `-err" class="err">([^<]*)</small>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// A platform without a section of its own gets one on the site's page,
// made from its fields: saved into the site's settings document and its
// sealed secrets, each problem next to its field with nothing saved, the
// secret shown only as set, kept when left empty, cleared when asked; its
// test button calls SendTest with what was saved; a change lifts its
// pause.
func TestAdminPlatformSettings(t *testing.T) {
	fake := newFakeAds(t, "fakeads", "FakeAds")
	// A platform named meta has its own section: it gets no second one.
	e := newAdminEnv(t, withPlatforms(newFakeAds(t, model.DestinationMeta, "Meta"), fake))
	ctx := context.Background()
	c := e.login()
	stored := func() *model.Site {
		t.Helper()
		s, err := e.db.SiteByID(ctx, "dent")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	p := c.get("/admin/sites/dent")
	if p.code != 200 || !strings.Contains(p.body, `id="platform-fakeads"`) || strings.Contains(p.body, `id="platform-meta"`) {
		t.Fatalf("site page: %d, fakeads section %v, meta section %v", p.code,
			strings.Contains(p.body, `id="platform-fakeads"`), strings.Contains(p.body, `id="platform-meta"`))
	}
	for _, want := range []string{`name="fakeads.pixel_code"`, `<select id="pf-fakeads-mode" name="fakeads.mode"`,
		`type="password"`, `name="fakeads.access_token"`, `<textarea id="pf-fakeads-stages" name="fakeads.stages"`,
		`data-secret-state="not set"`, "Off: fill in these settings to send events to FakeAds."} {
		if !strings.Contains(html.UnescapeString(p.body), want) {
			t.Errorf("the section lacks %s", want)
		}
	}
	save := func(form url.Values) page {
		t.Helper()
		return c.post("/admin/sites/dent/platforms/fakeads", form)
	}
	// Every kind of mistake: each next to its field, nothing saved, the
	// typed secret never echoed.
	for _, tc := range []struct {
		name  string
		form  url.Values
		field string
		words string
	}{
		{"Validate's word", url.Values{"fakeads.pixel_code": {"C12AB"}, "fakeads.access_token": {fakeToken}}, "pixel_code", "want the pixel code's digits"},
		{"a required field", url.Values{"fakeads.access_token": {fakeToken}, "fakeads.mode": {"live"}}, "pixel_code", "Needed to send to FakeAds."},
		{"a required secret", url.Values{"fakeads.pixel_code": {"123"}}, "access_token", "Needed to send to FakeAds."},
		{"a choice not offered", url.Values{"fakeads.pixel_code": {"123"}, "fakeads.access_token": {fakeToken}, "fakeads.mode": {"sandbox"}}, "mode", "Pick one of: live, test."},
		{"a stage line", url.Values{"fakeads.pixel_code": {"123"}, "fakeads.access_token": {fakeToken}, "fakeads.stages": {"won Purchase"}}, "stages", "Write one stage = event per line"},
		{"Validate's word on stages", url.Values{"fakeads.pixel_code": {"123"}, "fakeads.access_token": {fakeToken}, "fakeads.stages": {"lost = Refund"}}, "stages", "Refund is not an event"},
	} {
		p := save(tc.form)
		if p.code != http.StatusBadRequest {
			t.Errorf("%s: %d", tc.name, p.code)
			continue
		}
		if got := fieldError(p.body, "pf-fakeads-"+tc.field); !strings.Contains(got, tc.words) {
			t.Errorf("%s: next to %s: %q", tc.name, tc.field, got)
		}
		if strings.Contains(p.body, fakeToken) {
			t.Errorf("%s: the page echoes the secret", tc.name)
		}
		if !strings.Contains(p.body, "Nothing was saved.") {
			t.Errorf("%s: the page does not say nothing was saved", tc.name)
		}
		if s := stored(); len(s.Secrets) != 0 || s.Settings.Platforms["fakeads"] != nil {
			t.Errorf("%s: saved %v %s", tc.name, s.Secrets, s.Settings.Platforms["fakeads"])
		}
	}
	// The typed values come back with the problem.
	p = save(url.Values{"fakeads.pixel_code": {"C12AB"}, "fakeads.stages": {"Won = Purchase"}, "fakeads.access_token": {fakeToken}})
	if !strings.Contains(p.body, `value="C12AB"`) || !strings.Contains(p.body, "Won = Purchase</textarea>") {
		t.Errorf("the typed values did not come back")
	}

	// A pause of the platform, shown on the page and lifted by the save.
	share := model.Share{Site: "dent", Destination: "fakeads"}
	if err := e.db.DestinationPauseSet(ctx, share, "the access token was refused", time.Now()); err != nil {
		t.Fatal(err)
	}
	if p := c.get("/admin/sites/dent"); !strings.Contains(p.body, "Paused: the access token was refused") {
		t.Errorf("the pause is not shown")
	}
	if p := c.get("/admin/sites"); !strings.Contains(p.body, "FakeAds: the access token was refused") {
		t.Errorf("the sites page does not name the paused platform by its label")
	}
	p = save(url.Values{"fakeads.pixel_code": {" 123 "}, "fakeads.mode": {"test"}, "fakeads.access_token": {fakeToken},
		"fakeads.stages": {"# our CRM\nWon = Purchase\n\nmeeting = Schedule"}})
	if p.code != http.StatusSeeOther || p.hdr.Get("Location") != "/admin/sites/dent?saved=fakeads#platform-fakeads" {
		t.Fatalf("save: %d %s", p.code, p.hdr.Get("Location"))
	}
	s := stored()
	if d := fake.doc(s); d.PixelCode != "123" || d.Mode != "test" || d.Stages["won"] != "Purchase" || d.Stages["meeting"] != "Schedule" || len(d.Stages) != 2 {
		t.Errorf("settings document %s", s.Settings.Platforms["fakeads"])
	}
	if s.Secrets["fakeads.access_token"] != fakeToken || len(s.Secrets) != 1 {
		t.Errorf("secrets %v", s.Secrets)
	}
	if reason, _ := e.db.DestinationPauseReason(ctx, share); reason != "" {
		t.Errorf("the save kept the pause: %s", reason)
	}
	p = c.get("/admin/sites/dent?saved=fakeads")
	if strings.Contains(p.body, fakeToken) || !strings.Contains(p.body, `data-secret-state="set"`) ||
		!strings.Contains(p.body, "meeting = Schedule\nwon = Purchase\n</textarea>") || !strings.Contains(p.body, `value="123"`) ||
		!strings.Contains(p.body, "On: events go to FakeAds.") || !strings.Contains(p.body, "Saved.") {
		t.Errorf("the saved section: %s", sectionOf(p.body, "fakeads"))
	}

	// The test button: SendTest with what was saved, its answer shown.
	p = c.post("/admin/sites/dent/platforms/fakeads/test", nil)
	body := html.UnescapeString(p.body)
	if p.code != 200 || !strings.Contains(body, "FakeAds received the test event.") || !strings.Contains(body, `"pixel_code": "123"`) ||
		!strings.Contains(body, `"message": "OK"`) || !strings.Contains(body, "TEST123") {
		t.Errorf("test event: %d %s", p.code, sectionOf(body, "fakeads"))
	}
	if got := fake.seen(); len(got) != 1 || got[0] != fakeToken {
		t.Errorf("the stand-in saw %v", got)
	}

	// Saved again without the secret: it stays; another value changes.
	if p := save(url.Values{"fakeads.pixel_code": {"456"}, "fakeads.mode": {"live"}}); p.code != http.StatusSeeOther {
		t.Fatalf("save without the secret: %d %s", p.code, fieldError(p.body, "pf-fakeads-access_token"))
	}
	if s := stored(); s.Secrets["fakeads.access_token"] != fakeToken || fake.doc(s).PixelCode != "456" || fake.doc(s).Stages != nil {
		t.Errorf("after a save without the secret: %v %s", s.Secrets, s.Settings.Platforms["fakeads"])
	}
	// A wrong token: the test shows the platform's refusal.
	if p := save(url.Values{"fakeads.pixel_code": {"456"}, "fakeads.access_token": {"wrong-token"}}); p.code != http.StatusSeeOther {
		t.Fatalf("new token: %d", p.code)
	}
	p = c.post("/admin/sites/dent/platforms/fakeads/test", nil)
	if body := html.UnescapeString(p.body); p.code != http.StatusBadGateway || !strings.Contains(body, "FakeAds refused the test event.") ||
		!strings.Contains(body, "Access token is invalid") || strings.Contains(body, "wrong-token") {
		t.Errorf("a refused test: %d %s", p.code, sectionOf(body, "fakeads"))
	}
	// The site's own form keeps the platform's settings and secrets.
	before := stored()
	p = c.post("/admin/sites/dent", url.Values{"name": {"Istanbul Dental"}, "origins": {origin}, "country": {"TR"},
		"pixel_id": {"123456789012345"}, "mode": {"dry_run"}, "stages": {"meeting = Schedule\nwon = Purchase, 5000, TRY"}})
	if after := stored(); p.code != http.StatusSeeOther || string(after.Settings.Platforms["fakeads"]) != string(before.Settings.Platforms["fakeads"]) ||
		after.Secrets["fakeads.access_token"] != "wrong-token" {
		t.Errorf("the site's form lost the platform: %d %s %v", p.code, after.Settings.Platforms["fakeads"], after.Secrets)
	}
	// Everything emptied and the secret removed: the platform is off,
	// with nothing of it to check.
	fake.mu.Lock()
	calls := fake.validated
	fake.mu.Unlock()
	if p := save(url.Values{"fakeads.access_token.clear": {"1"}}); p.code != http.StatusSeeOther {
		t.Fatalf("turn off: %d %s", p.code, sectionOf(p.body, "fakeads"))
	}
	if fake.mu.Lock(); fake.validated != calls {
		t.Errorf("Validate was asked about a platform turned off")
	}
	fake.mu.Unlock()
	if s := stored(); len(s.Secrets) != 0 || s.Settings.Platforms["fakeads"] != nil {
		t.Errorf("after turning off: %v %s", s.Secrets, s.Settings.Platforms["fakeads"])
	}
	if p := c.post("/admin/sites/dent/platforms/fakeads/test", nil); p.code != http.StatusBadRequest ||
		!strings.Contains(p.body, "set the FakeAds settings first") {
		t.Errorf("a test while off: %d", p.code)
	}
	// No such platform, Meta's (hand-made), and a config file's site.
	for path, want := range map[string]int{"/admin/sites/dent/platforms/nosuch": 404, "/admin/sites/dent/platforms/meta": 404,
		"/admin/sites/kitchen/platforms/fakeads": 409} {
		if p := c.post(path, url.Values{"fakeads.pixel_code": {"1"}}); p.code != want {
			t.Errorf("POST %s: %d, want %d", path, p.code, want)
		}
	}
	if p := c.get("/admin/sites/kitchen"); !strings.Contains(p.body, `id="platform-fakeads"`) ||
		strings.Contains(sectionOf(p.body, "fakeads"), "<input id=") {
		t.Errorf("a config file's site: the section should be read-only")
	}
}

// The section speaks the owner's language: its own words, and the
// problems the form finds.
func TestAdminPlatformSettingsTurkish(t *testing.T) {
	e := newAdminEnv(t, withPlatforms(newFakeAds(t, "fakeads", "FakeAds")))
	c := e.login()
	c.hdr["Accept-Language"] = "tr"
	p := c.get("/admin/sites/dent")
	if !strings.Contains(p.body, "FakeAds ayarlarını kaydet") || !strings.Contains(p.body, "Girilmemiş.") {
		t.Errorf("the section is not in Turkish: %s", sectionOf(p.body, "fakeads"))
	}
	p = c.post("/admin/sites/dent/platforms/fakeads", url.Values{"fakeads.access_token": {fakeToken}, "fakeads.mode": {"beta"}})
	if got := fieldError(p.body, "pf-fakeads-pixel_code"); got != "FakeAds platformuna göndermek için gerekli." {
		t.Errorf("required, in Turkish: %q", got)
	}
	if got := fieldError(p.body, "pf-fakeads-mode"); !strings.HasPrefix(got, "Şunlardan birini seçin") {
		t.Errorf("choice, in Turkish: %q", got)
	}
}

// sectionOf is a platform's section of a page, for messages.
func sectionOf(body, name string) string {
	i := strings.Index(body, `id="platform-`+name+`"`)
	if i < 0 {
		return "(no section)"
	}
	j := strings.Index(body[i:], "</section>")
	if j < 0 {
		return body[i:]
	}
	return body[i : i+j]
}
