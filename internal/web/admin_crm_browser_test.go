package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cleanads/cleanads/internal/browsertest"
	"github.com/cleanads/cleanads/internal/hubspot"
	"github.com/cleanads/cleanads/internal/hubspot/hubspottest"
	"github.com/cleanads/cleanads/internal/pipedrive"
	"github.com/cleanads/cleanads/internal/pipedrive/pipedrivetest"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/source"
	"github.com/cleanads/cleanads/internal/sources"
	"github.com/cleanads/cleanads/internal/web"
)

// TestCRMConnectionsInBrowser sets up the site's HubSpot and Pipedrive
// connections in real Chromium, as an owner does from the guides, on a
// desktop and a phone, in English and Turkish: the section shows the
// webhook address to paste into the CRM, a required secret left out is
// marked next to it with nothing saved, the filled form is saved with the
// secrets sealed and never shown, and "Check the connection" reads the
// CRM's stand-in with the token and says it works; nothing is wider than
// the screen.
func TestCRMConnectionsInBrowser(t *testing.T) {
	ctx := browsertest.New(t)
	hs, pd := hubspottest.New(t), pipedrivetest.New(t)
	e := newAdminEnv(t, func(o *web.Options) {
		o.Sources = sources.All(source.Deps{Deps: platform.Deps{Endpoints: map[string]string{
			hubspot.Name: hs.URL, pipedrive.Name: pd.URL}}, App: o.App, Sites: o.Store, Pauses: o.Store})
	})
	base := e.srv.URL
	bg := context.Background()
	do, text := browserSteps(t, ctx)
	user, err := e.db.UserByEmail(bg, adminEmail)
	if err != nil {
		t.Fatal(err)
	}
	browserLogIn(t, ctx, base, "#main")

	type fill struct{ sel, value string }
	crms := []struct {
		name, label string
		// missing is the required secret left out first; fills are the
		// rest of the owner's form.
		missing fill
		fills   []fill
		secrets map[string]string
		// saved checks the stored settings.
		saved func(t *testing.T, settings []byte) bool
	}{
		{name: hubspot.Name, label: "HubSpot",
			missing: fill{"#pf-hubspot-client_secret", "hubspot-client-secret-0123"},
			fills: []fill{{"#pf-hubspot-access_token", hubspottest.Token},
				{"#pf-hubspot-deal_stages", "appointmentscheduled = meeting\nclosedwon = won"}},
			secrets: map[string]string{"hubspot.access_token": hubspottest.Token, "hubspot.client_secret": "hubspot-client-secret-0123"},
			saved: func(t *testing.T, b []byte) bool {
				return strings.Contains(string(b), `"closedwon":"won"`)
			}},
		{name: pipedrive.Name, label: "Pipedrive",
			missing: fill{"#pf-pipedrive-webhook_password", "a-long-webhook-password"},
			fills: []fill{{"#pf-pipedrive-api_token", pipedrivetest.Token}, {"#pf-pipedrive-webhook_user", "cleanads"},
				{"#pf-pipedrive-stages", "3 = meeting"}, {"#pf-pipedrive-won_stage", "won"}},
			secrets: map[string]string{"pipedrive.api_token": pipedrivetest.Token, "pipedrive.webhook_password": "a-long-webhook-password"},
			saved: func(t *testing.T, b []byte) bool {
				return strings.Contains(string(b), `"3":"meeting"`)
			}},
	}
	words := map[string]map[string]string{
		"en": {"required": "Needed to receive from %s.", "ok": "%s answered: the connection works.", "address": "Webhook address to give %s:"},
		"tr": {"required": "%s üzerinden almak için gerekli.", "ok": "%s yanıt verdi: bağlantı çalışıyor.", "address": "%s uygulamasına verilecek webhook adresi:"},
	}
	for _, view := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		for _, lang := range []string{"en", "tr"} {
			if err := e.db.UserSetLang(bg, user.ID, lang, time.Now()); err != nil {
				t.Fatal(err)
			}
			opts := []chromedp.EmulateViewportOption{}
			if view.w < 500 {
				opts = append(opts, chromedp.EmulateMobile)
			}
			do(view.name+": screen", chromedp.EmulateViewport(view.w, view.h, opts...))
			for _, crm := range crms {
				name := view.name + "-" + lang + "-" + crm.name
				w := func(key string) string { return strings.ReplaceAll(words[lang][key], "%s", crm.label) }
				sec := "#platform-" + crm.name
				// Each run starts with the connection off.
				site, err := e.db.SiteByID(bg, "dent")
				if err != nil {
					t.Fatal(err)
				}
				delete(site.Settings.Platforms, crm.name)
				site.Secrets = map[string]string{}
				for k := range crm.secrets {
					site.Secrets[k] = "" // an empty value removes it
				}
				if err := e.db.SiteUpsert(bg, site, time.Now()); err != nil {
					t.Fatal(err)
				}
				do(name+": the page", chromedp.Navigate(base+"/admin/sites/dent"), chromedp.WaitVisible(chromedp.CSS(sec)))
				if got := text(sec); !strings.Contains(got, w("address")) || !strings.Contains(got, base+"/v1/webhooks/"+crm.name+"/dent") {
					t.Errorf("%s: the section does not give the webhook address: %q", name, got)
				}
				save := chromedp.CSS(`form[action^="/admin/sites/dent/platforms/` + crm.name + `#"] button[type=submit]`)

				// A required secret left out: marked, nothing saved.
				var acts []chromedp.Action[chromedp.Void]
				for _, f := range crm.fills {
					acts = append(acts, chromedp.SetValue(chromedp.CSS(f.sel), f.value))
				}
				errSel := crm.missing.sel + "-err"
				acts = append(acts, chromedp.Click(save), chromedp.WaitVisible(chromedp.CSS(errSel)))
				do(name+": a secret left out", acts...)
				if got := text(errSel); got != w("required") {
					t.Errorf("%s: the field's error %q, want %q", name, got, w("required"))
				}
				if s, _ := e.db.SiteByID(bg, "dent"); s.Settings.Platforms[crm.name] != nil {
					t.Errorf("%s: a refused form saved %s", name, s.Settings.Platforms[crm.name])
				} else {
					for k := range crm.secrets {
						if s.Secrets[k] != "" {
							t.Errorf("%s: a refused form saved the secret %s", name, k)
						}
					}
				}
				if over := pageOverflow(t, ctx); over > 0 {
					t.Errorf("%s: the page with an error reaches %.0f px past the screen's edge", name, over)
				}

				// Filled in: saved, the secrets sealed and not shown.
				acts = acts[:0]
				for _, f := range append(crm.fills, crm.missing) {
					acts = append(acts, chromedp.SetValue(chromedp.CSS(f.sel), f.value))
				}
				acts = append(acts, chromedp.Click(save), chromedp.WaitVisible(chromedp.CSS(".alert.ok")), chromedp.WaitVisible(chromedp.CSS(sec)))
				do(name+": filled in", acts...)
				s, _ := e.db.SiteByID(bg, "dent")
				for k, v := range crm.secrets {
					if s.Secrets[k] != v {
						t.Errorf("%s: secret %s not stored", name, k)
					}
				}
				if !crm.saved(t, s.Settings.Platforms[crm.name]) {
					t.Errorf("%s: stored settings %s", name, s.Settings.Platforms[crm.name])
				}
				html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range crm.secrets {
					if strings.Contains(html, v) {
						t.Errorf("%s: the page shows a secret", name)
					}
				}
				browsertest.ScreenshotOf(t, ctx, "crm-"+name+"-saved", sec)

				do(name+": check the connection",
					chromedp.Click(chromedp.CSS(`form[action^="/admin/sites/dent/platforms/`+crm.name+`/test"] button`)),
					chromedp.WaitVisible(chromedp.CSS(sec+" .test-result")))
				if got := text(sec + " .test-result"); !strings.Contains(got, w("ok")) {
					t.Errorf("%s: the check's answer %q", name, got)
				}
				if over := pageOverflow(t, ctx); over > 0 {
					t.Errorf("%s: the page with the check's answer reaches %.0f px past the screen's edge", name, over)
				}
				browsertest.ScreenshotOf(t, ctx, "crm-"+name+"-check", sec)
			}
		}
	}
	if hs.Reads() != 4 || pd.Reads() != 4 {
		t.Errorf("the stand-ins were read %d (HubSpot) and %d (Pipedrive) times, want 4 each", hs.Reads(), pd.Reads())
	}
}
