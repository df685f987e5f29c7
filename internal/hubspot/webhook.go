package hubspot

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/source"
)

// The subscriptions and properties the source acts on, and its jobs'
// kinds.
const (
	DealChange    = "deal.propertyChange"
	ContactChange = "contact.propertyChange"
	KindDeal      = "deal.stage"
	KindContact   = "contact.lifecyclestage"
)

// Event is one event of a webhook post, as HubSpot sends it.
type Event struct {
	EventID          json.Number `json:"eventId"`
	SubscriptionID   json.Number `json:"subscriptionId,omitempty"`
	PortalID         json.Number `json:"portalId"`
	AppID            json.Number `json:"appId,omitempty"`
	OccurredAt       int64       `json:"occurredAt"`
	SubscriptionType string      `json:"subscriptionType"`
	AttemptNumber    int         `json:"attemptNumber"`
	ObjectID         json.Number `json:"objectId"`
	PropertyName     string      `json:"propertyName,omitempty"`
	PropertyValue    string      `json:"propertyValue,omitempty"`
	ChangeSource     string      `json:"changeSource,omitempty"`
}

// job is what a queued change holds for the worker.
type job struct {
	ObjectID string `json:"object_id"`
	// Stage is the HubSpot stage the object moved to, as the event said:
	// the worker records it, not the object's stage when it is read.
	Stage      string `json:"stage"`
	OccurredAt int64  `json:"occurred_at"`
	PortalID   string `json:"portal_id,omitempty"`
}

// Answer is what a webhook post is answered: how many of its events were
// queued, were already queued (HubSpot's retries), or are not acted on.
type Answer struct {
	Queued     int `json:"queued"`
	Duplicates int `json:"duplicates"`
	Ignored    int `json:"ignored"`
}

// Routes is the webhook, POST /v1/webhooks/hubspot/{site}.
func (s *Source) Routes() []source.Route {
	return []source.Route{{Pattern: "POST /v1/webhooks/hubspot/{site}", Handler: s.receive}}
}

// receive checks a webhook post's signature and age before it reads
// anything of the body, then queues each stage change the site maps, once
// per eventId, and answers at once: the CRM reads are the worker's.
func (s *Source) receive(w http.ResponseWriter, r *http.Request) error {
	site, err := source.SiteFromPath(r, s.d.Sites, s.On, "HubSpot is not set up for this site")
	if err != nil {
		return err
	}
	sig, ts := r.Header.Get("X-HubSpot-Signature-v3"), r.Header.Get("X-HubSpot-Request-Timestamp")
	if sig == "" || ts == "" {
		return source.Error(http.StatusUnauthorized, "the post has no X-HubSpot-Signature-v3 and X-HubSpot-Request-Timestamp: only HubSpot's signed webhooks are taken")
	}
	ms, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return source.Error(http.StatusUnauthorized, "X-HubSpot-Request-Timestamp is not a time in milliseconds")
	}
	if err := source.Age(time.UnixMilli(ms), s.now(), MaxAge); err != nil {
		return err
	}
	body, err := source.ReadBody(r)
	if err != nil {
		return err
	}
	if !s.signed(r, body, ts, sig, secret(site, SecretClientSecret)) {
		return source.Error(http.StatusUnauthorized, "the X-HubSpot-Signature-v3 does not match: check the client secret in the site's HubSpot section, and public_url when CleanAds is behind a proxy")
	}
	if err := source.Admit(r, site); err != nil {
		return err
	}
	var events []Event
	if err := source.DecodeJSON(body, &events, false); err != nil {
		return err
	}
	st, _, err := settings(site)
	if err != nil {
		return err
	}
	var ans Answer
	var jobs []app.Job
	for _, e := range events {
		kind, mapped := "", ""
		switch {
		case e.SubscriptionType == DealChange && e.PropertyName == "dealstage":
			kind, mapped = KindDeal, stage(st.DealStages, e.PropertyValue)
		case e.SubscriptionType == ContactChange && e.PropertyName == "lifecyclestage":
			kind, mapped = KindContact, stage(st.LifecycleStages, e.PropertyValue)
		}
		if kind == "" || mapped == "" || e.EventID == "" || e.ObjectID == "" || e.OccurredAt <= 0 {
			ans.Ignored++
			continue
		}
		payload, _ := json.Marshal(job{ObjectID: e.ObjectID.String(), Stage: e.PropertyValue, OccurredAt: e.OccurredAt,
			PortalID: e.PortalID.String()})
		jobs = append(jobs, app.Job{Key: e.EventID.String(), Kind: kind, Payload: payload, At: time.UnixMilli(e.OccurredAt)})
	}
	if len(jobs) > 0 {
		n, err := s.d.App.QueueJobs(r.Context(), site, Name, jobs)
		if err != nil {
			return err
		}
		ans.Queued, ans.Duplicates = n, len(jobs)-n
	}
	source.JSON(w, http.StatusOK, ans)
	return nil
}

// signed tells whether sig is HubSpot's v3 signature of the request: the
// URI it signed is the address it posted to, which behind a proxy is the
// server's public_url and not the address the request arrived at, so
// each address the request may have been posted to is tried.
func (s *Source) signed(r *http.Request, body []byte, ts, sig, clientSecret string) bool {
	want, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sig))
	if err != nil || clientSecret == "" {
		return false
	}
	for _, uri := range s.signedURIs(r) {
		if hmac.Equal(Sign(clientSecret, r.Method, uri, body, ts), want) {
			return true
		}
	}
	return false
}

// signedURIs are the addresses HubSpot may have signed: public_url's, then
// the request's own host over https (a proxy that keeps the Host), and
// over the scheme it arrived in.
func (s *Source) signedURIs(r *http.Request) []string {
	path := r.URL.RequestURI()
	var out []string
	if s.d.PublicURL != "" {
		out = append(out, strings.TrimRight(s.d.PublicURL, "/")+path)
	}
	out = append(out, "https://"+r.Host+path)
	if r.TLS == nil {
		out = append(out, "http://"+r.Host+path)
	}
	return out
}

// Sign is HubSpot's v3 signature of a request (before base64): the
// HMAC-SHA256, keyed with the client secret, of method, URI (the percent
// escapes HubSpot decodes, decoded), body and timestamp.
func Sign(clientSecret, method, uri string, body []byte, ts string) []byte {
	mac := hmac.New(sha256.New, []byte(clientSecret))
	mac.Write([]byte(method))
	mac.Write([]byte(decodeURI(uri)))
	mac.Write(body)
	mac.Write([]byte(ts))
	return mac.Sum(nil)
}

// uriDecoder decodes the escapes HubSpot decodes in the signed URI.
var uriDecoder = strings.NewReplacer(
	"%3A", ":", "%2F", "/", "%3F", "?", "%40", "@", "%21", "!", "%24", "$", "%27", "'",
	"%28", "(", "%29", ")", "%2A", "*", "%2C", ",", "%3B", ";",
	"%3a", ":", "%2f", "/", "%3f", "?", "%2a", "*", "%2c", ",", "%3b", ";")

func decodeURI(uri string) string { return uriDecoder.Replace(uri) }
