package leadads

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/model"
)

// Finding is one thing the check looked at, in plain words: what is right,
// or what is wrong and how to fix it.
type Finding struct {
	OK   bool
	What string
	Fix  string
}

// Check tells whether a site's Lead Ads connection works: its settings,
// the token (read with the app secret's appsecret_proof), the permissions
// Meta's Lead Ads guides ask for, each Page's subscription of an app to
// leadgen, and each Page's forms. When everything is right and the site's
// fetches were paused, the pause is lifted (the sweep resumes them). It
// fails only when the database does.
func (s *Service) Check(ctx context.Context, siteID model.SiteID) ([]Finding, error) {
	site, err := s.o.Store.SiteByID(ctx, siteID)
	if err != nil {
		return nil, err
	}
	var out []Finding
	add := func(ok bool, what, fix string) { out = append(out, Finding{OK: ok, What: what, Fix: fix}) }
	la, sec := site.Settings.LeadAds, site.LeadAds
	if !la.Enabled() {
		add(false, "Lead Ads is not set up for this site.",
			"Add a lead_ads: block to the site in the config file with page_ids, access_token, app_secret and verify_token.")
		return out, nil
	}
	for _, m := range []struct{ v, name string }{{sec.AccessToken, "access_token"}, {sec.AppSecret, "app_secret"}, {sec.VerifyToken, "verify_token"}} {
		if m.v == "" {
			add(false, "lead_ads."+m.name+" is not set.", "Set it (or "+m.name+"_file) in the site's lead_ads: block and restart.")
		}
	}
	if sec.AccessToken == "" {
		return out, nil
	}
	a := auth(site)
	perms, err := s.o.Graph.Permissions(ctx, a)
	if err != nil {
		what, fix := "Meta refused the Lead Ads access token: "+err.Error(),
			"Make a new Page or system-user token for the app (Business settings, System users, Generate token) and set lead_ads.access_token."
		if capi.Classify(err).Retryable() {
			what, fix = "Meta could not be asked about the token right now: "+err.Error(), "Run the check again in a few minutes."
		} else if strings.Contains(err.Error(), "appsecret_proof") {
			what, fix = "Meta refused the call's appsecret_proof: lead_ads.app_secret is not the secret of the app the token belongs to.",
				"Copy the App secret from the app's Settings, Basic, into lead_ads.app_secret."
		}
		add(false, what, fix)
		return out, nil
	}
	add(true, "The access token works with the app secret.", "")
	granted := map[string]bool{}
	for _, p := range perms {
		if p.Status == "granted" {
			granted[p.Permission] = true
		}
	}
	var missing []string
	for _, p := range capi.LeadAdsPermissions() {
		if !granted[p] {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		add(false, "The token lacks the permission(s) "+strings.Join(missing, ", ")+".",
			"Generate the token again with them checked (and give the app leads access in the Page's Leads Access Manager).")
	} else {
		add(true, "The token has every permission Lead Ads needs: "+strings.Join(capi.LeadAdsPermissions(), ", ")+".", "")
	}
	for _, page := range la.PageIDs {
		apps, err := s.o.Graph.SubscribedApps(ctx, a, page)
		switch {
		case err != nil:
			add(false, fmt.Sprintf("Page %s: its subscriptions cannot be read: %v", page, err),
				"Use a token of the Page (or of a system user with the Page assigned) with pages_manage_metadata.")
		case !slices.ContainsFunc(apps, func(app capi.SubscribedApp) bool { return slices.Contains(app.SubscribedFields, "leadgen") }):
			add(false, fmt.Sprintf("Page %s sends no leadgen webhooks to any app.", page),
				fmt.Sprintf("Subscribe the app: POST /%s/subscribed_apps?subscribed_fields=leadgen with the Page token "+
					"(Graph API Explorer), and subscribe the app's Page webhook to the leadgen field.", page))
		default:
			var names []string
			for _, app := range apps {
				if slices.Contains(app.SubscribedFields, "leadgen") {
					names = append(names, strings.TrimSpace(app.Name+" "+string(app.ID)))
				}
			}
			add(true, fmt.Sprintf("Page %s sends leadgen webhooks to %s.", page, strings.Join(names, ", ")), "")
		}
		forms, err := s.o.Graph.PageForms(ctx, a, page)
		if err != nil {
			add(false, fmt.Sprintf("Page %s: its Instant Forms cannot be read: %v", page, err),
				"The token needs the Page's leads access (Leads Access Manager) and leads_retrieval; the backfill needs it too.")
			continue
		}
		add(true, fmt.Sprintf("Page %s has %d Instant Form(s) the backfill reads.", page, len(forms)), "")
	}
	if slices.ContainsFunc(out, func(f Finding) bool { return !f.OK }) {
		return out, nil
	}
	if p, err := s.o.Store.DestinationPauseOf(ctx, share(site.ID)); err == nil {
		if err := s.o.Store.DestinationResume(ctx, share(site.ID)); err != nil {
			return out, err
		}
		add(true, "The paused lead fetches (\""+p.Reason+"\") resume now.", "")
	} else if !errors.Is(err, model.ErrNotFound) {
		return out, err
	}
	return out, nil
}
