package leadads

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/metahook"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/source"
)

// Source receives the Page leadgen webhook of a site's Meta app, at
// /v1/webhooks/leadgen/{site}: each advertiser's app has its own secret and
// verify token (the site's lead_ads settings), so the URL names the site
// whose secrets check the call. It queues a fetch per lead (an outbox row
// of destination model.DestinationMetaLeadgen); with a Graph API client in
// its Deps it is also the source.Worker that does them.
type Source struct {
	d   source.Deps
	log *slog.Logger
}

// Worker is the Lead Ads source with its fetch worker.
type Worker struct {
	*Source
	f *fetcher
}

// NewSource returns the Lead Ads source: a *Worker when d has a Graph API
// client, else routes only (the fetches wait for a program that runs the
// worker). Its constructor is not New: that is the Service's, the backfill's
// and the check's.
func NewSource(d source.Deps) source.Source {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	src := &Source{d: d, log: log}
	if d.Graph == nil {
		return src
	}
	return &Worker{Source: src, f: newFetcher(d.Graph, d.App, log)}
}

// Destination is the worker's outbox destination.
func (*Worker) Destination() string { return model.DestinationMetaLeadgen }

// Handler fetches the rows of a share (fetcher.Send) with the runner's
// pauses, backoff and deadlines, as for every platform.
func (w *Worker) Handler() deliver.Handler { return deliver.NewPlatformHandler(w.f, w.d.Pauses) }

// Name is the source's key.
func (*Source) Name() string { return "leadads" }

// Label is its name for people.
func (*Source) Label() string { return "Lead Ads (Instant Forms)" }

// Routes are the site's Meta app's handshake and the webhook's posts.
func (s *Source) Routes() []source.Route {
	return []source.Route{
		{Pattern: "GET /v1/webhooks/leadgen/{site}", Handler: s.verify},
		{Pattern: "POST /v1/webhooks/leadgen/{site}", Handler: s.receive, Body: source.DefaultBody},
	}
}

// site is the site a leadgen webhook is for, when its Lead Ads webhook is
// set up.
func (s *Source) site(r *http.Request) (*model.Site, error) {
	return source.SiteFromPath(r, s.d.Sites, func(site *model.Site) bool {
		return site.LeadAds.AppSecret != "" && site.LeadAds.VerifyToken != ""
	}, "no Lead Ads webhook here: set the site's lead_ads app_secret and verify_token")
}

// verify answers Meta's subscription handshake for the site's app: the
// challenge when the verify token is the site's.
func (s *Source) verify(w http.ResponseWriter, r *http.Request) error {
	site, err := s.site(r)
	if err != nil {
		return err
	}
	return metahook.Handshake(w, r, site.LeadAds.VerifyToken)
}

// payload is a Page webhook as Meta posts it. Ids come as strings or
// numbers and exceed 2^53: capi.GraphID keeps their digits.
type payload struct {
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

// receive takes a signed leadgen webhook: the signature is checked over
// the bytes as received before anything is read from them; then every
// leadgen change of every entry for one of the site's Pages is persisted as
// a fetch job (idempotent on the leadgen id) in one transaction, and the
// post is answered at once. The lead is read from the Graph API afterwards
// by the delivery runner, with retries. Changes for other Pages or fields
// are counted as ignored, and answered 200 too: Meta retries anything else.
func (s *Source) receive(w http.ResponseWriter, r *http.Request) error {
	site, err := s.site(r)
	if err != nil {
		return err
	}
	body, err := metahook.SignedBody(r, site.LeadAds.AppSecret)
	if err != nil {
		return err
	}
	var p payload
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return model.Invalid("", "malformed JSON: "+err.Error())
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
		if out, err = s.d.App.LeadgenQueue(r.Context(), site, changes); err != nil {
			// Nothing of this post was kept: Meta retries it whole.
			return err
		}
	}
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "leadgen webhook", slog.String("site", string(site.ID)),
		slog.Int("queued", out.Queued), slog.Int("duplicate", out.Duplicate), slog.Int("ignored", ignored))
	source.JSON(w, http.StatusOK, map[string]int{"queued": out.Queued, "duplicate": out.Duplicate, "ignored": ignored})
	return nil
}
