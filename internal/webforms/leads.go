package webforms

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/source"
)

// leadBody is the JSON body of POST /v1/leads.
type leadBody struct {
	Site string `json:"site"`
	app.LeadInput
}

// leadCreate takes a lead from a website (JSON from t.js, or a plain HTML
// form post) or from the site's server (JSON with the API key). The lead is
// committed before the answer; the answer never says how it was judged.
func (s *Source) leadCreate(w http.ResponseWriter, r *http.Request) error {
	in, siteID, redirect, isForm, err := readLead(r)
	if err != nil {
		return err
	}
	site, err := site(r, siteID)
	if err != nil {
		return err
	}
	edge := source.EdgeOf(r)
	keySite, err := edge.APISite(r)
	if err != nil {
		return err
	}
	// A lead posted with the API key comes from the site's own server: its
	// fill_ms is the backend's figure, which the rules weigh as such.
	in.FromServer = keySite != nil
	switch {
	case keySite != nil && keySite.ID != site.ID:
		return source.Error(http.StatusForbidden, "the API key belongs to another site")
	case keySite == nil:
		if err := checkOrigin(w, r, site); err != nil {
			return err
		}
		if in.ClientIP != "" || in.UserAgent != "" || in.SubmittedAt != "" {
			return source.Error(http.StatusForbidden, "client_ip, user_agent and submitted_at may only be set with the site's API key")
		}
		in.ClientIP = edge.ClientIP(r)
		in.UserAgent = r.UserAgent()
		s.browserCookies(r, in)
	}
	// A browser's JSON post is t.js's: the lead may change with a later
	// attempt unless confirmed. A form post is the submission itself.
	in.Browser = keySite == nil && !isForm
	if isForm {
		// Checked before the lead is stored: a refused redirect stores
		// nothing, so the corrected post is not a duplicate.
		if redirect != "" {
			safe, ok := site.SafeRedirect(redirect)
			if !ok {
				return model.Invalid("_redirect", "must be an absolute http(s) URL on one of the site's origins")
			}
			redirect = safe
		} else if site.Settings.ThankYouURL != "" {
			// The thank-you page is checked again here: a site edited in the
			// database has not passed the config file's check.
			safe, ok := site.SafeRedirect(site.Settings.ThankYouURL)
			if !ok {
				s.log.WarnContext(r.Context(), "thank_you_url is not on the site's origins; answering without a redirect",
					"site", string(site.ID))
			}
			redirect = safe
		}
	}
	lead, _, err := s.app.Submit(r.Context(), site, in)
	if err != nil {
		return err
	}
	if isForm {
		if redirect != "" {
			http.Redirect(w, r, redirect, http.StatusSeeOther)
			return nil
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "<!doctype html><meta charset=utf-8><title>Thank you</title><p>Thank you. We received your message.</p>\n")
		return nil
	}
	source.JSON(w, http.StatusAccepted, map[string]string{"id": string(lead.ID), "event_id": lead.EventID})
	return nil
}

// readLead parses a lead from JSON (application/json, or text/plain, which
// browsers may send without a preflight) or from a form post.
func readLead(r *http.Request) (in *app.LeadInput, site, redirect string, isForm bool, err error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json", "text/plain":
		var body leadBody
		if err := decodeJSON(r, &body); err != nil {
			return nil, "", "", false, err
		}
		site = body.Site
		if site == "" {
			site = siteParam(r)
		}
		return &body.LeadInput, site, "", false, nil
	case "application/x-www-form-urlencoded", "multipart/form-data":
		in, site, redirect, err := readLeadForm(r, ct)
		return in, site, redirect, true, err
	case "":
		return nil, "", "", false, source.Error(http.StatusUnsupportedMediaType, "set Content-Type: application/json or a form type")
	}
	return nil, "", "", false, source.Error(http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported Content-Type %q: want application/json or a form post", ct))
}

// formFields maps a form's field names to the lead's; any other field is
// kept in Fields as it came.
var formFields = map[string]func(in *app.LeadInput, v string) error{
	"event_id":   func(in *app.LeadInput, v string) error { in.EventID = v; return nil },
	"email":      func(in *app.LeadInput, v string) error { in.Email = v; return nil },
	"phone":      func(in *app.LeadInput, v string) error { in.Phone = v; return nil },
	"name":       func(in *app.LeadInput, v string) error { in.Name = v; return nil },
	"first_name": func(in *app.LeadInput, v string) error { in.FirstName = v; return nil },
	"last_name":  func(in *app.LeadInput, v string) error { in.LastName = v; return nil },
	"message":    func(in *app.LeadInput, v string) error { in.Message = v; return nil },
	"page_url":   func(in *app.LeadInput, v string) error { in.PageURL = v; return nil },
	"referrer":   func(in *app.LeadInput, v string) error { in.Referrer = v; return nil },
	"fbc":        func(in *app.LeadInput, v string) error { in.FBC = v; return nil },
	"fbp":        func(in *app.LeadInput, v string) error { in.FBP = v; return nil },
	"fbclid":     func(in *app.LeadInput, v string) error { in.FBClid = v; return nil },
	"gclid":      func(in *app.LeadInput, v string) error { in.GClid = v; return nil },
	"external_id": func(in *app.LeadInput, v string) error {
		in.ExternalID = v
		return nil
	},
	"lead_id":      func(in *app.LeadInput, v string) error { in.LeadAdsID = v; return nil },
	"visitor_id":   func(in *app.LeadInput, v string) error { in.VisitorID = v; return nil },
	"hp":           func(in *app.LeadInput, v string) error { in.Honeypot = v; return nil },
	"form_token":   func(in *app.LeadInput, v string) error { in.FormToken = v; return nil },
	"client_ip":    func(in *app.LeadInput, v string) error { in.ClientIP = v; return nil },
	"user_agent":   func(in *app.LeadInput, v string) error { in.UserAgent = v; return nil },
	"submitted_at": func(in *app.LeadInput, v string) error { in.SubmittedAt = v; return nil },
	"consent": func(in *app.LeadInput, v string) error {
		var b bool
		switch strings.ToLower(v) {
		case "1", "true", "on", "yes":
			b = true
		case "0", "false", "off", "no":
		default:
			return model.Invalid("consent", "want true or false")
		}
		in.Consent = &b
		return nil
	},
	"fill_ms": func(in *app.LeadInput, v string) error {
		if v == "" {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return model.Invalid("fill_ms", "want whole milliseconds")
		}
		in.FillMS = &n
		return nil
	},
}

func readLeadForm(r *http.Request, ct string) (in *app.LeadInput, site, redirect string, err error) {
	if ct == "multipart/form-data" {
		err = r.ParseMultipartForm(source.BrowserBody)
	} else {
		err = r.ParseForm()
	}
	if err != nil {
		var mb *http.MaxBytesError
		var ne net.Error
		if errors.As(err, &mb) || errors.As(err, &ne) {
			return nil, "", "", source.ReadError(err)
		}
		return nil, "", "", model.Invalid("", "malformed form body")
	}
	in = &app.LeadInput{}
	for name, vals := range r.PostForm {
		v := strings.Join(vals, ", ")
		if !utf8.ValidString(name) || !utf8.ValidString(v) {
			return nil, "", "", model.Invalid(name, "is not valid UTF-8")
		}
		switch {
		case name == "site":
			site = v
		case name == "_redirect":
			redirect = v
		case strings.HasPrefix(name, "_"):
		case formFields[name] != nil:
			if err := formFields[name](in, v); err != nil {
				return nil, "", "", err
			}
		default:
			if in.Fields == nil {
				in.Fields = map[string]string{}
			}
			in.Fields[name] = v
		}
	}
	if site == "" {
		site = siteParam(r)
	}
	return in, site, redirect, nil
}
