package pipedrive

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/source"
)

// The kinds of the worker's jobs.
const (
	KindStage = "deal.stage"
	KindWon   = "deal.won"
	KindLost  = "deal.lost"
)

// Job is what a queued change carries to the worker.
type Job struct {
	DealID   int64    `json:"deal_id"`
	PersonID int64    `json:"person_id,omitempty"`
	StageID  int64    `json:"stage_id,omitempty"`
	Value    *float64 `json:"value,omitempty"`
	Currency string   `json:"currency,omitempty"`
	// At is when the change happened at Pipedrive.
	At time.Time `json:"at"`
}

// Answer is the webhook's answer.
type Answer struct {
	Queued  int    `json:"queued"`
	Ignored int    `json:"ignored"`
	Note    string `json:"note,omitempty"`
}

// envelope is a webhook body, v2 (meta, data, previous) and the v1 keys
// that tell a v1 body apart (current, event, v).
type envelope struct {
	Meta struct {
		Action   string          `json:"action"`
		Entity   string          `json:"entity"`
		ID       json.RawMessage `json:"id"`
		EntityID json.RawMessage `json:"entity_id"`
		Version  string          `json:"version"`
		// Timestamp is when the change happened: Unix seconds (or
		// milliseconds), or an RFC 3339 string.
		Timestamp json.RawMessage `json:"timestamp"`
		// V is v1's version.
		V json.RawMessage `json:"v"`
	} `json:"meta"`
	Data     *deal           `json:"data"`
	Previous json.RawMessage `json:"previous"`
	Current  json.RawMessage `json:"current"`
	Event    string          `json:"event"`
}

// deal is the part of a deal the source reads.
type deal struct {
	ID         json.Number     `json:"id"`
	StageID    json.Number     `json:"stage_id"`
	Status     string          `json:"status"`
	Value      *float64        `json:"value"`
	Currency   string          `json:"currency"`
	PersonID   json.Number     `json:"person_id"`
	UpdateTime string          `json:"update_time"`
	Custom     json.RawMessage `json:"custom_fields"`
}

// v1Words is the answer to a webhooks v1 body.
const v1Words = "this is a Pipedrive webhooks v1 body; CleanAds reads webhooks v2: create the webhook again with version 2.0 (Pipedrive's default)"

// receive takes a Pipedrive webhook: the site's webhook user and password
// are checked (HTTP Basic auth, in constant time) before the body is
// read; each change that matters is queued once (Pipedrive's retries of
// the same event add nothing) and the rest are counted as ignored.
func (s *Source) receive(w http.ResponseWriter, r *http.Request) error {
	site, err := source.SiteFromPath(r, s.d.Sites, s.On, "Pipedrive is not set up for this site")
	if err != nil {
		return err
	}
	if !s.authorized(r, site) {
		w.Header().Set("WWW-Authenticate", `Basic realm="cleanads pipedrive", charset="UTF-8"`)
		return source.Error(http.StatusUnauthorized, "wrong or missing webhook user name and password: set the webhook's HTTP Auth as in the site's Pipedrive section")
	}
	if err := source.Admit(r, site); err != nil {
		return err
	}
	body, err := source.ReadBody(r)
	if err != nil {
		return err
	}
	var env envelope
	if err := source.DecodeJSON(bytes.TrimSpace(body), &env, false); err != nil {
		return err
	}
	if len(env.Current) > 0 || env.Event != "" || len(env.Meta.V) > 0 || strings.HasPrefix(env.Meta.Version, "1") {
		return source.Error(http.StatusBadRequest, v1Words)
	}
	jobs, note := s.changes(site, &env, s.d.Clock()())
	ans := Answer{Ignored: 1, Note: note}
	if len(jobs) > 0 {
		n, err := s.d.App.QueueJobs(r.Context(), site, Name, jobs)
		if err != nil {
			return err
		}
		ans = Answer{Queued: n, Ignored: len(jobs) - n}
		if n < len(jobs) {
			ans.Note = "already received"
		}
	}
	source.JSON(w, http.StatusOK, ans)
	return nil
}

// authorized compares the request's Basic auth with the site's webhook
// user and password. Both are compared as hashes of equal length, in
// constant time and both always, so the answer's timing tells nothing.
func (s *Source) authorized(r *http.Request, site *model.Site) bool {
	user, pass, ok := r.BasicAuth()
	wantUser, wantPass := settings(site).User, platform.Secret(site, Name, KeyPassword)
	hu, hp := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(pass))
	wu, wp := sha256.Sum256([]byte(wantUser)), sha256.Sum256([]byte(wantPass))
	match := subtle.ConstantTimeCompare(hu[:], wu[:]) & subtle.ConstantTimeCompare(hp[:], wp[:])
	return ok && wantUser != "" && wantPass != "" && match == 1
}

// changes are the jobs of one webhook, or why it has none. Each job's key
// is the event's id with the change and its new value, so a retry of the
// event is the same key.
func (s *Source) changes(site *model.Site, env *envelope, now time.Time) ([]app.Job, string) {
	if env.Meta.Entity != "deal" {
		return nil, "not a deal"
	}
	if env.Meta.Action != "change" && env.Meta.Action != "create" {
		return nil, "action " + env.Meta.Action + " is not recorded"
	}
	if env.Data == nil {
		return nil, "no deal data"
	}
	d := env.Data
	dealID, err := d.ID.Int64()
	if err != nil || dealID <= 0 {
		return nil, "no deal id"
	}
	// Webhooks v2's previous holds only the fields that changed (null on
	// create).
	var prev map[string]json.RawMessage
	_ = json.Unmarshal(env.Previous, &prev)
	changed := func(field string) bool {
		if env.Meta.Action == "create" {
			return true
		}
		_, ok := prev[field]
		return ok
	}
	eventID := rawString(env.Meta.ID)
	if eventID == "" {
		eventID = rawString(env.Meta.Timestamp)
	}
	at := changeTime(env, now)
	person, _ := d.PersonID.Int64()
	st := settings(site)
	base := Job{DealID: dealID, PersonID: person, At: at}
	var jobs []app.Job
	add := func(kind, what string, j Job) {
		payload, _ := json.Marshal(j)
		jobs = append(jobs, app.Job{Key: fmt.Sprintf("%s:deal:%d:%s", eventID, dealID, what), Kind: kind,
			Payload: payload, At: at})
	}
	if stage, err := d.StageID.Int64(); err == nil && changed("stage_id") {
		if _, mapped := st.Stages[strconv.FormatInt(stage, 10)]; mapped {
			j := base
			j.StageID = stage
			add(KindStage, "stage:"+strconv.FormatInt(stage, 10), j)
		}
	}
	if changed("status") {
		switch {
		case d.Status == "won" && st.Won != "":
			j := base
			j.Value, j.Currency = d.Value, strings.ToUpper(d.Currency)
			add(KindWon, "won", j)
		case d.Status == "lost" && st.Lost != "":
			add(KindLost, "lost", base)
		}
	}
	if len(jobs) == 0 {
		return nil, "no mapped stage, won or lost change"
	}
	return jobs, ""
}

// changeTime is when the change happened: meta.timestamp, else the deal's
// update_time, else now; never in the future.
func changeTime(env *envelope, now time.Time) time.Time {
	var at time.Time
	raw := rawString(env.Meta.Timestamp)
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil && n > 0 {
		if n > 1e12 {
			at = time.UnixMilli(n)
		} else {
			at = time.Unix(n, 0)
		}
	} else if t, err := time.Parse(time.RFC3339, raw); err == nil {
		at = t
	} else if env.Data != nil {
		if t, err := time.Parse(time.RFC3339, env.Data.UpdateTime); err == nil {
			at = t
		}
	}
	if at.IsZero() || at.After(now) {
		at = now
	}
	return at.UTC()
}

// rawString is a JSON string or number as text ("" for null or absent).
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}
