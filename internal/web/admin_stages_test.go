package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/web"
)

// newStagesEnv is a real server on a fresh database of the engine under
// test (CLEANADS_TEST_ENGINE), with an admin user, site "dent" made in the
// admin UI with stages meeting and won, and site "kitchen" from the config
// file with stage visit.
func newStagesEnv(t *testing.T, opts ...func(*web.Options)) (*adminEnv, *client) {
	t.Helper()
	db := storetest.New(t)
	ctx := context.Background()
	now := time.Now()
	for _, s := range []*model.Site{
		{ID: "dent", Name: "Istanbul Dental", APIKeyHash: model.HashAPIKey(apiKey),
			Settings: model.SiteSettings{Origins: []string{origin}, Country: "TR",
				Meta:       model.MetaSettings{Mode: model.ModeDryRun, Stages: model.DefaultStages("TRY")},
				StageOrder: model.DefaultStageOrder()}},
		{ID: "kitchen", Name: "Ankara Kitchens", Pinned: true, APIKeyHash: model.HashAPIKey("kitchen-key-0123456789abcdef"),
			Settings: model.SiteSettings{Origins: []string{"https://kitchen.example"}, Country: "TR",
				Meta: model.MetaSettings{Mode: model.ModeDryRun, Stages: map[string]model.StageEvent{"visit": {Event: "Schedule"}}}}},
	} {
		if err := db.SiteUpsert(ctx, s, now); err != nil {
			t.Fatal(err)
		}
	}
	svc := app.New(app.Options{Store: db})
	users := auth.New(auth.Options{Store: db, Cost: bcrypt.MinCost})
	if _, err := users.AddUser(ctx, adminEmail, adminPass); err != nil {
		t.Fatal(err)
	}
	wo := web.Options{App: svc, Store: db, Auth: users, Location: time.UTC}
	for _, o := range opts {
		o(&wo)
	}
	srv := httptest.NewServer(web.New(wo).Handler())
	t.Cleanup(srv.Close)
	e := &adminEnv{t: t, db: db, srv: srv, svc: svc, leads: map[string]*model.Lead{}}
	return e, e.login()
}

// stageForm is the stage editor's form: the rows as "name=event" with an
// optional ",value,currency" (a value makes the rule fixed), existing
// first, then the new row's.
func stageForm(existing []string, added string) url.Values {
	f := url.Values{}
	row := func(i int, spec string, old bool) {
		name, rest, _ := strings.Cut(spec, "=")
		parts := strings.Split(rest, ",")
		k := func(s string) string { return fmt.Sprintf("stage.%d.%s", i, s) }
		f.Set(k("name"), name)
		f.Set(k("event"), parts[0])
		f.Set(k("rule"), "given")
		if len(parts) > 1 && parts[1] != "" {
			f.Set(k("rule"), "fixed")
			f.Set(k("value"), parts[1])
		}
		if len(parts) > 2 {
			f.Set(k("currency"), parts[2])
		}
		if old {
			f.Set(k("existing"), "1")
		}
	}
	for i, s := range existing {
		row(i, s, true)
	}
	row(len(existing), added, false)
	f.Set("count", fmt.Sprint(len(existing)+1))
	return f
}

func TestAdminStages(t *testing.T) {
	e, c := newStagesEnv(t, withPlatforms(newFakeAds(t, "fakeads", "FakeAds")))
	ctx := context.Background()
	// Another platform maps won, and a stage of its own: the editor links
	// to its section.
	site, _ := e.db.SiteByID(ctx, "dent")
	site.Settings.Platforms = map[string]json.RawMessage{"fakeads": json.RawMessage(`{"pixel_code":"1","stages":{"won":"CompletePayment","lost":"Refund"}}`)}
	if err := e.db.SiteUpsert(ctx, site, time.Now()); err != nil {
		t.Fatal(err)
	}
	if p := c.get("/admin/sites/dent"); !strings.Contains(p.body, `Also sent as: <a href="#platform-fakeads">FakeAds</a> CompletePayment`) ||
		!strings.Contains(p.body, "Stages only other platforms send: lost (only FakeAds)") {
		t.Errorf("the editor does not link the other platform's stages")
	}

	// The editor lists the stages in their order, with an empty row to add
	// one whose currency is the site's.
	p := c.get("/admin/sites/dent")
	if p.code != http.StatusOK || !regexp.MustCompile(`(?s)data-stage="meeting".*data-stage="won".*name="stage.2.currency" value="TRY"`).MatchString(p.body) {
		t.Fatalf("the stage editor: %d", p.code)
	}

	// Add a stage between, give won a fixed value: saved at once, in order,
	// marked as the admin's.
	p = c.post("/admin/sites/dent/stages", stageForm([]string{"meeting=Schedule", "won=Purchase,7500,TRY"}, "proposal=SubmitApplication"))
	if p.code != http.StatusSeeOther || p.hdr.Get("Location") != "/admin/sites/dent?stages=saved#stages" {
		t.Fatalf("save: %d %s", p.code, p.body)
	}
	s, _ := e.db.SiteByID(ctx, "dent")
	want := map[string]model.StageEvent{"meeting": {Event: "Schedule"}, "won": {Event: "Purchase", Value: 7500, Currency: "TRY"},
		"proposal": {Event: "SubmitApplication"}}
	if !reflect.DeepEqual(s.Settings.Meta.Stages, want) || !s.Settings.StagesEdited ||
		!reflect.DeepEqual(s.Settings.StageNames(), []string{"meeting", "won", "proposal"}) {
		t.Errorf("saved: %+v %v %v", s.Settings.Meta.Stages, s.Settings.StagesEdited, s.Settings.StageNames())
	}
	if p := c.get("/admin/sites/dent?stages=saved"); !strings.Contains(p.body, "The stages were saved") {
		t.Errorf("no notice after saving")
	}

	// The API takes the new stage at once, and the lead page offers the
	// stages in order, the first not reached selected, in the site's currency.
	l, _, err := e.svc.Submit(ctx, s, &app.LeadInput{Email: "ayse.yilmaz@gmail.com", Phone: "0532 412 87 19", Name: "Ayşe Yılmaz",
		Message: "Merhaba, implant tedavisi için randevu almak istiyorum.", ClientIP: "85.105.1.2", UserAgent: "Mozilla/5.0"})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/leads/"+string(l.ID)+"/events", strings.NewReader(`{"type":"stage","stage":"meeting"}`))
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stage by the API: %d", resp.StatusCode)
	}
	p = c.get("/admin/leads/" + string(l.ID))
	opts := regexp.MustCompile(`<option value="([^"]+)"( selected)?>`).FindAllStringSubmatch(
		regexp.MustCompile(`(?s)<select id="stage".*?</select>`).FindString(p.body), -1)
	var got []string
	for _, o := range opts {
		got = append(got, o[1]+o[2])
	}
	if fmt.Sprint(got) != "[meeting won selected proposal]" || !strings.Contains(p.body, `id="currency" name="currency" maxlength="3" placeholder="TRY" value="TRY"`) {
		t.Errorf("the lead page's stages: %v", got)
	}

	// Remove one.
	f := stageForm([]string{"meeting=Schedule", "won=Purchase,7500,TRY", "proposal=SubmitApplication"}, "=")
	f.Set("stage.2.remove", "1")
	if p := c.post("/admin/sites/dent/stages", f); p.code != http.StatusSeeOther {
		t.Fatalf("remove: %d", p.code)
	}
	if s, _ := e.db.SiteByID(ctx, "dent"); len(s.Settings.Meta.Stages) != 2 || s.Settings.Meta.Stages["proposal"].Event != "" {
		t.Errorf("after remove: %+v", s.Settings.Meta.Stages)
	}

	// The site form's save keeps the stages: they have one editor.
	if p := c.post("/admin/sites/dent", url.Values{"name": {"Istanbul Dental"}, "origins": {origin}, "country": {"TR"},
		"mode": {"dry_run"}, "stages": {"lost = Purchase"}}); p.code != http.StatusSeeOther {
		t.Fatalf("site form: %d %s", p.code, p.body)
	}
	if s, _ := e.db.SiteByID(ctx, "dent"); len(s.Settings.Meta.Stages) != 2 || !s.Settings.StagesEdited {
		t.Errorf("the site form changed the stages: %+v", s.Settings.Meta.Stages)
	}
}

// TestAdminStagesRefused: each mistake is named on its row, in English and
// Turkish, and nothing saved changes.
func TestAdminStagesRefused(t *testing.T) {
	e, c := newStagesEnv(t)
	ctx := context.Background()
	before, _ := e.db.SiteByID(ctx, "dent")
	old := []string{"meeting=Schedule", "won=Purchase"}
	many := stageForm(nil, "=")
	for i := range model.MaxStages + 1 {
		many.Set(fmt.Sprintf("stage.%d.name", i), fmt.Sprintf("s%d", i))
		many.Set(fmt.Sprintf("stage.%d.event", i), "Schedule")
	}
	many.Set("count", fmt.Sprint(model.MaxStages+1))
	for _, tc := range []struct {
		name   string
		form   url.Values
		en, tr string
	}{
		{"empty name", stageForm(old, "=Schedule"), "Give the stage a name", "Aşamaya bir ad verin"},
		{"duplicate", stageForm(old, "Won=Purchase"), `There is a stage "Won" already.`, `"Won" adında bir aşama zaten var.`},
		{"bad event", stageForm(old, "visit=Book a call!"), "Not an event name", "Geçerli bir olay adı değil"},
		{"no event", stageForm(old, "visit="), "Give the Meta event it sends", "Gönderdiği Meta olayını yazın"},
		{"bad name", stageForm(old, "<b>=Schedule"), "Use letters, digits", "Harf, rakam"},
		{"fixed value without a number", stageForm(old, "visit=Schedule,abc,TRY"), "Write the fixed value as a number above 0", "0'dan büyük bir sayı"},
		{"fixed value without currency", stageForm(old, "visit=Schedule,100,"), "A fixed value needs its currency", "Sabit bir değerin para birimi gerekir"},
		{"bad currency", stageForm(old, "visit=Schedule,,TL"), "Want a 3-letter currency code", "3 harfli bir para birimi kodu"},
		{"too many", many, fmt.Sprintf("A site has at most %d stages", model.MaxStages), fmt.Sprintf("Bir sitenin en çok %d aşaması olur", model.MaxStages)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for lang, want := range map[string]string{"en": tc.en, "tr": tc.tr} {
				c.hdr["Accept-Language"] = lang
				p := c.post("/admin/sites/dent/stages", tc.form)
				body := html.UnescapeString(p.body)
				if p.code != http.StatusBadRequest || !strings.Contains(body, want) || !strings.Contains(body, `aria-invalid="true"`) {
					t.Errorf("%s: %d, want %q", lang, p.code, want)
				}
				// What was typed comes back.
				if v := tc.form.Get("stage.2.event"); v != "" && !strings.Contains(body, `value="`+v+`"`) {
					t.Errorf("%s: the typed event %q is lost", lang, v)
				}
			}
			delete(c.hdr, "Accept-Language")
			if s, _ := e.db.SiteByID(ctx, "dent"); !reflect.DeepEqual(s.Settings, before.Settings) {
				t.Errorf("a refused save changed the site: %+v", s.Settings.Meta.Stages)
			}
		})
	}
}

// TestAdminStagesPinned: a config file's site takes the editor's stages,
// which win over its file from then on, until "use the config file's
// stages again"; a site made here has no file to go back to.
func TestAdminStagesPinned(t *testing.T) {
	e, c := newStagesEnv(t)
	ctx := context.Background()
	p := c.get("/admin/sites/kitchen")
	if !strings.Contains(p.body, "These come from the config file") || !strings.Contains(p.body, `data-stage="visit"`) {
		t.Fatalf("the pinned site's editor")
	}
	// A name the file gave that the editor would not take for a new stage
	// is kept as it is; posted as a new one, it is refused.
	k, _ := e.db.SiteByID(ctx, "kitchen")
	k.Settings.Meta.Stages["Deal won!"] = model.StageEvent{Event: "Purchase"}
	if err := e.db.SiteUpsert(ctx, k, time.Now()); err != nil {
		t.Fatal(err)
	}
	if p := c.post("/admin/sites/kitchen/stages", stageForm([]string{"visit=Schedule"}, "Deal lost!=Purchase")); p.code != http.StatusBadRequest {
		t.Errorf("a new stage with a bad name: %d", p.code)
	}
	if p := c.post("/admin/sites/kitchen/stages", stageForm([]string{"visit=Schedule", "Deal won!=Purchase"}, "won=Purchase,,TRY")); p.code != http.StatusSeeOther {
		t.Fatalf("save: %d", p.code)
	}
	s, _ := e.db.SiteByID(ctx, "kitchen")
	if !s.Pinned || !s.Settings.StagesEdited || s.Settings.Meta.Stages["won"].Event != "Purchase" || len(s.Settings.Meta.Stages) != 3 {
		t.Errorf("saved: %+v", s.Settings)
	}
	p = c.get("/admin/sites/kitchen")
	if !strings.Contains(p.body, "Saved here: this list wins") || !strings.Contains(p.body, "Use the config file&#39;s stages again") {
		t.Errorf("the pinned site's editor after a save")
	}
	if p := c.post("/admin/sites/kitchen/stages", url.Values{"use_file": {"1"}}); p.code != http.StatusSeeOther {
		t.Fatalf("use the file: %d", p.code)
	}
	if s, _ := e.db.SiteByID(ctx, "kitchen"); s.Settings.StagesEdited {
		t.Errorf("still the admin's stages")
	}
	if p := c.post("/admin/sites/dent/stages", url.Values{"use_file": {"1"}}); p.code != http.StatusConflict {
		t.Errorf("use the file of a site made here: %d", p.code)
	}
}

// TestAdminSiteCreateDefaultStages: a site made in the admin UI starts with
// meeting and won in its country's currency, and its lead page offers them.
func TestAdminSiteCreateDefaultStages(t *testing.T) {
	e, c := newStagesEnv(t)
	ctx := context.Background()
	p := c.post("/admin/sites", url.Values{"id": {"clinic2"}, "name": {"Clinic Two"}, "origins": {"https://clinic2.example"}, "country": {"TR"}})
	if p.code != http.StatusCreated {
		t.Fatalf("new site: %d", p.code)
	}
	s, _ := e.db.SiteByID(ctx, "clinic2")
	if !reflect.DeepEqual(s.Settings.Meta.Stages, model.DefaultStages("TRY")) || fmt.Sprint(s.Settings.StageNames()) != "[meeting won]" {
		t.Errorf("new site's stages: %+v", s.Settings.Meta.Stages)
	}
	l, _, err := e.svc.Submit(ctx, s, &app.LeadInput{Email: "ayse.yilmaz@gmail.com", Phone: "0532 412 87 19", Name: "Ayşe Yılmaz",
		Message: "Merhaba, randevu almak istiyorum.", ClientIP: "85.105.1.2", UserAgent: "Mozilla/5.0"})
	if err != nil {
		t.Fatal(err)
	}
	p = c.get("/admin/leads/" + string(l.ID))
	if strings.Contains(p.body, "no stages") || !strings.Contains(p.body, `<option value="meeting" selected>meeting → Schedule`) ||
		!strings.Contains(p.body, `value="TRY"`) {
		t.Errorf("the new site's lead page has not its stages")
	}
}

// TestAdminStagesEveryNode: stages saved on one node are taken at once by
// another node on the same database: the API reads the site's stages with
// its key on each call.
func TestAdminStagesEveryNode(t *testing.T) {
	e, c := newStagesEnv(t)
	ctx := context.Background()
	svc2 := app.New(app.Options{Store: e.db})
	node2 := httptest.NewServer(web.New(web.Options{App: svc2, Store: e.db,
		Auth: auth.New(auth.Options{Store: e.db, Cost: bcrypt.MinCost}), Location: time.UTC}).Handler())
	t.Cleanup(node2.Close)
	site, _ := e.db.SiteByID(ctx, "dent")
	l, _, err := svc2.Submit(ctx, site, &app.LeadInput{Email: "ayse.yilmaz@gmail.com", Phone: "0532 412 87 19", Name: "Ayşe Yılmaz",
		Message: "Merhaba, implant tedavisi için randevu almak istiyorum.", ClientIP: "85.105.1.2", UserAgent: "Mozilla/5.0"})
	if err != nil {
		t.Fatal(err)
	}
	stage := func() int {
		req, _ := http.NewRequest("POST", node2.URL+"/v1/leads/"+string(l.ID)+"/events", strings.NewReader(`{"type":"stage","stage":"Proposal"}`))
		req.Header.Set("Authorization", "Bearer "+apiKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := stage(); code != http.StatusBadRequest {
		t.Fatalf("an unknown stage on node 2: %d", code)
	}
	if p := c.post("/admin/sites/dent/stages", stageForm([]string{"meeting=Schedule", "won=Purchase"}, "proposal=SubmitApplication")); p.code != http.StatusSeeOther {
		t.Fatalf("save on node 1: %d", p.code)
	}
	if code := stage(); code != http.StatusOK {
		t.Errorf("the new stage on node 2 right after the save: %d", code)
	}
}
