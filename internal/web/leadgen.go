package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/metahook"
	"github.com/cleanads/cleanads/internal/model"
)

// The Page leadgen webhook of a site's Meta app, at
// /v1/webhooks/leadgen/{site}: each advertiser's app has its own secret and
// verify token, so the URL names the site whose secrets check the call.

// leadgenSite is the site a leadgen webhook is for, when its Lead Ads
// webhook is set up.
func (s *Server) leadgenSite(w http.ResponseWriter, r *http.Request) *model.Site {
	site, err := s.db.SiteByID(r.Context(), model.SiteID(r.PathValue("site")))
	if errors.Is(err, model.ErrNotFound) || err == nil && (site.LeadAds.AppSecret == "" || site.LeadAds.VerifyToken == "") {
		s.fail(w, r, errStatus(http.StatusNotFound, "no Lead Ads webhook here: set the site's lead_ads app_secret and verify_token"))
		return nil
	}
	if err != nil {
		s.fail(w, r, err)
		return nil
	}
	return site
}

// leadgenVerify answers Meta's subscription handshake for the site's app:
// the challenge, as plain text, when the mode is subscribe and the verify
// token is the site's (compared in constant time).
func (s *Server) leadgenVerify(w http.ResponseWriter, r *http.Request) {
	site := s.leadgenSite(w, r)
	if site == nil {
		return
	}
	if err := metahook.Handshake(w, r, site.LeadAds.VerifyToken); err != nil {
		s.fail(w, r, err)
	}
}

// leadgenPayload is a Page webhook as Meta posts it. Ids come as strings
// or numbers and exceed 2^53: capi.GraphID keeps their digits.
type leadgenPayload struct {
	Object string `json:"object"`
	Entry  []struct {
		ID      capi.GraphID `json:"id"`
		Changes []struct {
			Field string `json:"field"`
			Value struct {
				LeadgenID   capi.GraphID `json:"leadgen_id"`
				PageID      capi.GraphID `json:"page_id"`
				FormID      capi.GraphID `json:"form_id"`
				AdID        capi.GraphID `json:"ad_id"`
				CreatedTime json.Number  `json:"created_time"`
			} `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

// leadgenReceive takes a signed leadgen webhook: the signature is checked
// over the bytes as received before anything is read from them; then every
// leadgen change of every entry for one of the site's Pages is persisted as
// a fetch job (idempotent on the leadgen id) in one transaction, and the
// post is answered at once. The lead is read from the Graph API afterwards
// by the delivery runner, with retries. Changes for other Pages or fields
// are counted as ignored, and answered 200 too: Meta retries anything else.
func (s *Server) leadgenReceive(w http.ResponseWriter, r *http.Request) {
	site := s.leadgenSite(w, r)
	if site == nil {
		return
	}
	body, err := metahook.SignedBody(r, site.LeadAds.AppSecret)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var p leadgenPayload
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		s.fail(w, r, model.Invalid("", "malformed JSON: "+err.Error()))
		return
	}
	var changes []app.LeadgenChange
	ignored := 0
	for _, e := range p.Entry {
		for _, ch := range e.Changes {
			v := ch.Value
			page := v.PageID
			if page == "" {
				page = e.ID
			}
			if p.Object != "page" || ch.Field != "leadgen" || v.LeadgenID == "" || !site.Settings.LeadAds.HasPage(string(page)) {
				ignored++
				continue
			}
			c := app.LeadgenChange{LeadgenID: string(v.LeadgenID), PageID: string(page), FormID: string(v.FormID),
				AdID: string(v.AdID), Via: "webhook"}
			if sec, err := v.CreatedTime.Int64(); err == nil && sec > 0 {
				c.Created = time.Unix(sec, 0).UTC()
			}
			changes = append(changes, c)
		}
	}
	out := app.LeadgenOutcome{}
	if len(changes) > 0 {
		if out, err = s.app.LeadgenQueue(r.Context(), site, changes); err != nil {
			// Nothing of this post was kept: Meta retries it whole.
			s.fail(w, r, err)
			return
		}
	}
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "leadgen webhook", slog.String("site", string(site.ID)),
		slog.Int("queued", out.Queued), slog.Int("duplicate", out.Duplicate), slog.Int("ignored", ignored))
	writeJSON(w, http.StatusOK, map[string]int{"queued": out.Queued, "duplicate": out.Duplicate, "ignored": ignored})
}
