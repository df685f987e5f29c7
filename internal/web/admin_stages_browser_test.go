package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/browsertest"
	"github.com/cleanads/cleanads/internal/model"
)

// TestStageEditorInBrowser adds a stage in the site's stage editor in real
// Chromium, on a desktop and a phone, in English and Turkish: a bad event
// name is marked on its row in the owner's language with nothing saved and
// what was typed kept; corrected, the stage is saved, the lead page offers
// it at once and records it; nothing is wider than the screen.
func TestStageEditorInBrowser(t *testing.T) {
	ctx := browsertest.New(t)
	e, _ := newStagesEnv(t)
	base := e.srv.URL
	bg := context.Background()
	do, text := browserSteps(t, ctx)
	user, err := e.db.UserByEmail(bg, adminEmail)
	if err != nil {
		t.Fatal(err)
	}
	browserLogIn(t, ctx, base, "#main")
	save := chromedp.CSS(`form[action="/admin/sites/dent/stages#stages"] button.primary`)
	words := map[string]map[string]string{
		"en": {"bad": "Not an event name: a letter, then letters, digits, spaces or _, up to 50 (e.g. Purchase).",
			"saved": "The stages were saved.", "added": "The stage was added."},
		"tr": {"bad": "Geçerli bir olay adı değil: bir harf, ardından harf, rakam, boşluk veya _; en çok 50 karakter (örn. Purchase).",
			"saved": "Aşamalar kaydedildi.", "added": "Aşama eklendi."},
	}
	run := 0
	for _, view := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		for _, lang := range []string{"en", "tr"} {
			name := view.name + "-" + lang
			w := words[lang]
			run++
			if err := e.db.UserSetLang(bg, user.ID, lang, time.Now()); err != nil {
				t.Fatal(err)
			}
			// Each run starts with the default stages and a new lead.
			site, err := e.db.SiteByID(bg, "dent")
			if err != nil {
				t.Fatal(err)
			}
			site.Settings.Meta.Stages, site.Settings.StageOrder = model.DefaultStages("TRY"), model.DefaultStageOrder()
			if err := e.db.SiteUpsert(bg, site, time.Now()); err != nil {
				t.Fatal(err)
			}
			l, _, err := e.svc.Submit(bg, site, &app.LeadInput{Email: fmt.Sprintf("ayse%d@gmail.com", run),
				Phone: fmt.Sprintf("0532 412 87 %02d", 10+run), Name: "Ayşe Yılmaz",
				Message: "Merhaba, implant tedavisi için randevu almak istiyorum.", ClientIP: "85.105.1.2", UserAgent: "Mozilla/5.0"})
			if err != nil {
				t.Fatal(err)
			}
			opts := []chromedp.EmulateViewportOption{}
			if view.w < 500 {
				opts = append(opts, chromedp.EmulateMobile)
			}
			do(name+": screen", chromedp.EmulateViewport(view.w, view.h, opts...))
			do(name+": the page", chromedp.Navigate(base+"/admin/sites/dent#stages"), chromedp.WaitVisible(chromedp.CSS("#stage-2-name")))
			if got := value(t, ctx, "#stage-2-currency"); got != "TRY" {
				t.Errorf("%s: the new stage's currency %q, want the site's TRY", name, got)
			}

			// A bad event name: marked on its row, nothing saved, the
			// typed name kept.
			do(name+": a bad event",
				chromedp.SendKeys(chromedp.CSS("#stage-2-name"), "proposal"),
				chromedp.SendKeys(chromedp.CSS("#stage-2-event"), "Send offer!"),
				chromedp.Click(save),
				chromedp.WaitVisible(chromedp.CSS("#stage-2-event-err")))
			if got := text("#stage-2-event-err"); got != w["bad"] {
				t.Errorf("%s: the row's error %q, want %q", name, got, w["bad"])
			}
			if got := value(t, ctx, "#stage-2-name"); got != "proposal" {
				t.Errorf("%s: the typed name came back as %q", name, got)
			}
			if s, _ := e.db.SiteByID(bg, "dent"); len(s.Settings.Meta.Stages) != 2 {
				t.Errorf("%s: a refused form saved %v", name, s.Settings.Meta.Stages)
			}
			if over := pageOverflow(t, ctx); over > 0 {
				t.Errorf("%s: the page with an error reaches %.0f px past the screen's edge", name, over)
			}
			browsertest.ScreenshotOf(t, ctx, "stages-"+name+"-error", "#stages")

			// Corrected, with a fixed value: saved.
			do(name+": corrected",
				chromedp.SetValue(chromedp.CSS("#stage-2-event"), "SubmitApplication"),
				chromedp.SetValue(chromedp.CSS("#stage-2-rule"), "fixed"),
				chromedp.SetValue(chromedp.CSS("#stage-2-value"), "1200"),
				chromedp.Click(save),
				chromedp.WaitVisible(chromedp.CSS(".alert.ok")),
				chromedp.WaitVisible(chromedp.CSS(`fieldset[data-stage="proposal"]`)))
			if got := text(".alert.ok"); len(got) < len(w["saved"]) || got[:len(w["saved"])] != w["saved"] {
				t.Errorf("%s: the notice %q", name, got)
			}
			s, _ := e.db.SiteByID(bg, "dent")
			if se := s.Settings.Meta.Stages["proposal"]; se.Event != "SubmitApplication" || se.Value != 1200 || se.Currency != "TRY" {
				t.Errorf("%s: saved %+v", name, s.Settings.Meta.Stages)
			}
			if over := pageOverflow(t, ctx); over > 0 {
				t.Errorf("%s: the saved page reaches %.0f px past the screen's edge", name, over)
			}
			browsertest.ScreenshotOf(t, ctx, "stages-"+name+"-saved", "#stages")

			// The lead page offers it at once, and records it.
			do(name+": the lead page", chromedp.Navigate(base+"/admin/leads/"+string(l.ID)), chromedp.WaitVisible(chromedp.CSS("#stage")))
			if got := value(t, ctx, "#stage"); got != "meeting" {
				t.Errorf("%s: the stage first selected is %q, want meeting", name, got)
			}
			if got := value(t, ctx, "#currency"); got != "TRY" {
				t.Errorf("%s: the stage form's currency %q", name, got)
			}
			do(name+": record it",
				chromedp.SetValue(chromedp.CSS("#stage"), "proposal"),
				chromedp.Click(chromedp.CSS(`form[action$="/stages"] button[type=submit]`)),
				chromedp.WaitVisible(chromedp.CSS(".alert.ok")))
			if got := text(".alert.ok"); got != w["added"] {
				t.Errorf("%s: the lead page's notice %q", name, got)
			}
			stages, err := e.db.LeadStagesByLead(bg, l.ID)
			if err != nil || len(stages) != 1 || stages[0].Stage != "proposal" || stages[0].EventName != "SubmitApplication" ||
				stages[0].Value == nil || *stages[0].Value != 1200 || stages[0].Currency != "TRY" {
				t.Errorf("%s: recorded %+v %v", name, stages, err)
			}
			if over := pageOverflow(t, ctx); over > 0 {
				t.Errorf("%s: the lead page reaches %.0f px past the screen's edge", name, over)
			}
			browsertest.Screenshot(t, ctx, "stages-"+name+"-lead")
		}
	}
}
