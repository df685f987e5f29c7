package graphtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// The Lead Ads side of the stand-in: GET /{version}/{leadgen_id} (a lead),
// /{form_id}/leads (a form's leads, newest first, with Meta's time_created
// filter and cursor paging), /{form_id} (a form's name),
// /{page_id}/leadgen_forms, /{page_id}/subscribed_apps and /me/permissions.
// Each needs a valid token and, once SetAppSecret is called, the token's
// appsecret_proof; a lead read needs the leads_retrieval permission. Errors
// are Meta's bodies: 190 for a bad token, 100 with "Invalid appsecret_proof"
// for a wrong proof, 200 for a missing permission, 100/33 for an unknown
// object. Answers escape every non-ASCII character as \uXXXX, as Meta does.

// Lead is a Lead Ads lead the stand-in serves.
type Lead struct {
	ID           string
	Created      time.Time
	FormID       string
	PageID       string
	AdID         string // empty for an organic lead
	AdName       string
	AdsetID      string
	AdsetName    string
	CampaignID   string
	CampaignName string
	IsOrganic    bool
	Platform     string // fb or ig
	// Fields are the form's questions and answers, in the form's order.
	Fields []Field
}

// Field is one question of a lead's form and its answers.
type Field struct {
	Name   string
	Values []string
}

// App is an app a Page sends its webhooks to.
type App struct {
	ID     string
	Name   string
	Fields []string
}

type leadgenState struct {
	appSecret   string
	leads       map[string]Lead
	forms       map[string]formInfo
	apps        map[string][]App
	permissions map[string]string
	reads       int
}

type formInfo struct{ page, name string }

func (s *Server) lg() *leadgenState {
	if s.leadgen == nil {
		s.leadgen = &leadgenState{leads: map[string]Lead{}, forms: map[string]formInfo{}, apps: map[string][]App{},
			permissions: map[string]string{}}
		for _, p := range []string{"leads_retrieval", "pages_manage_metadata", "pages_show_list", "pages_read_engagement",
			"ads_management", "pages_manage_ads"} {
			s.leadgen.permissions[p] = "granted"
		}
	}
	return s.leadgen
}

// SetAppSecret makes every Lead Ads call need appsecret_proof made with
// secret.
func (s *Server) SetAppSecret(secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lg().appSecret = secret
}

// AddForm adds an Instant Form of a Page.
func (s *Server) AddForm(pageID, formID, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lg().forms[formID] = formInfo{page: pageID, name: name}
}

// AddLead adds a lead (its form is added too when missing).
func (s *Server) AddLead(l Lead) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.lg()
	st.leads[l.ID] = l
	if _, ok := st.forms[l.FormID]; !ok {
		st.forms[l.FormID] = formInfo{page: l.PageID, name: "Form " + l.FormID}
	}
}

// SetSubscribedApps sets the apps a Page sends its webhooks to.
func (s *Server) SetSubscribedApps(pageID string, apps ...App) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lg().apps[pageID] = apps
}

// SetPermission sets a permission's status (granted, declined) for the
// token; every Lead Ads permission starts granted.
func (s *Server) SetPermission(name, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lg().permissions[name] = status
}

// LeadReads counts the reads of single leads (GET /{leadgen_id}).
func (s *Server) LeadReads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lg().reads
}

var leadgenPathRE = regexp.MustCompile(`^/v[0-9]+\.[0-9]+/([0-9]+|me)(?:/(leads|leadgen_forms|subscribed_apps|permissions))?$`)

// serveLeadgen answers a Lead Ads GET; false when r is not one.
func (s *Server) serveLeadgen(w http.ResponseWriter, r *http.Request, trace string) bool {
	m := leadgenPathRE.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodGet || m == nil {
		return false
	}
	q := r.URL.Query()
	token := q.Get("access_token")
	s.mu.Lock()
	st := s.lg()
	if m[2] == "" && m[1] != "me" && pixelFields(q.Get("fields")) {
		// Neither a lead nor a form, asked for a pixel's fields: a pixel,
		// which the Graph side answers (graphtest.go).
		_, lead := st.leads[m[1]]
		_, form := st.forms[m[1]]
		if !lead && !form {
			s.mu.Unlock()
			return false
		}
	}
	secret := st.appSecret
	s.mu.Unlock()
	if !s.authorized(w, token, trace) {
		return true
	}
	if secret != "" && !validProof(q.Get("appsecret_proof"), token, secret) {
		s.fail(w, http.StatusBadRequest, metaError{Code: 100, Type: "GraphMethodException", FBTraceID: trace,
			Message: "Invalid appsecret_proof provided in the API argument"})
		return true
	}
	id, edge := m[1], m[2]
	s.mu.Lock()
	defer s.mu.Unlock()
	unknown := func() {
		s.fail(w, http.StatusBadRequest, metaError{Code: 100, Subcode: 33, Type: "GraphMethodException", FBTraceID: trace,
			Message: fmt.Sprintf("Unsupported get request. Object with ID '%s' does not exist, cannot be loaded due to missing permissions, or does not support this operation.", id)})
	}
	needLeads := func() bool {
		if st.permissions["leads_retrieval"] != "granted" {
			s.fail(w, http.StatusForbidden, metaError{Code: 200, FBTraceID: trace,
				Message: "(#200) Requires leads_retrieval permission to manage the object"})
			return false
		}
		return true
	}
	switch edge {
	case "":
		if l, ok := st.leads[id]; ok {
			if !needLeads() {
				return true
			}
			st.reads++
			writeEscaped(w, leadJSON(l))
			return true
		}
		if f, ok := st.forms[id]; ok {
			writeEscaped(w, map[string]any{"id": id, "name": f.name})
			return true
		}
		unknown()
	case "leads":
		if _, ok := st.forms[id]; !ok {
			unknown()
			return true
		}
		if !needLeads() {
			return true
		}
		s.serveFormLeads(w, q, id, trace)
	case "leadgen_forms":
		var list []map[string]any
		for fid, f := range st.forms {
			if f.page == id {
				list = append(list, map[string]any{"id": fid, "name": f.name, "status": "ACTIVE"})
			}
		}
		sort.Slice(list, func(i, j int) bool { return list[i]["id"].(string) < list[j]["id"].(string) })
		writeEscaped(w, map[string]any{"data": list})
	case "subscribed_apps":
		list := []map[string]any{}
		for _, a := range st.apps[id] {
			list = append(list, map[string]any{"id": a.ID, "name": a.Name, "subscribed_fields": a.Fields})
		}
		writeEscaped(w, map[string]any{"data": list})
	case "permissions":
		if id != "me" {
			unknown()
			return true
		}
		var list []map[string]any
		names := make([]string, 0, len(st.permissions))
		for p := range st.permissions {
			names = append(names, p)
		}
		sort.Strings(names)
		for _, p := range names {
			list = append(list, map[string]any{"permission": p, "status": st.permissions[p]})
		}
		writeEscaped(w, map[string]any{"data": list})
	}
	return true
}

// pixelFields tells whether a fields list asks only for what a pixel has
// (id, name), as a token check does; a lead fetch asks for field_data.
func pixelFields(fields string) bool {
	if fields == "" {
		return false
	}
	for _, f := range strings.Split(fields, ",") {
		if f = strings.TrimSpace(f); f != "id" && f != "name" {
			return false
		}
	}
	return true
}

// serveFormLeads answers /{form_id}/leads: newest first, the
// time_created filter (GREATER_THAN, Unix seconds) applied, limit per page
// (default 25) and an opaque after cursor. Called with s.mu held.
func (s *Server) serveFormLeads(w http.ResponseWriter, q map[string][]string, formID, trace string) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	var since int64 = -1
	if f := get("filtering"); f != "" {
		var filters []struct {
			Field    string      `json:"field"`
			Operator string      `json:"operator"`
			Value    json.Number `json:"value"`
		}
		if err := json.Unmarshal([]byte(f), &filters); err != nil {
			s.reject(w, trace, 0, "Invalid filtering", "filtering must be a JSON array of {field, operator, value}: "+err.Error())
			return
		}
		for _, f := range filters {
			v, err := f.Value.Int64()
			if f.Field != "time_created" || f.Operator != "GREATER_THAN" || err != nil {
				s.reject(w, trace, 0, "Invalid filtering", fmt.Sprintf("unsupported filter %s %s %s", f.Field, f.Operator, f.Value))
				return
			}
			since = v
		}
	}
	limit := 25
	if l, err := strconv.Atoi(get("limit")); err == nil && l > 0 {
		limit = min(l, 500)
	}
	var list []Lead
	for _, l := range s.leadgen.leads {
		if l.FormID == formID && l.Created.Unix() > since {
			list = append(list, l)
		}
	}
	slices.SortFunc(list, func(a, b Lead) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	start := 0
	if a := get("after"); a != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(a, "cursor-"))
		if err != nil || n < 0 || n > len(list) {
			s.reject(w, trace, 0, "Invalid cursor", "after is not a cursor of this edge")
			return
		}
		start = n
	}
	end := min(start+limit, len(list))
	data := []map[string]any{}
	for _, l := range list[start:end] {
		data = append(data, leadJSON(l))
	}
	body := map[string]any{"data": data}
	if len(data) > 0 {
		pg := map[string]any{"cursors": map[string]string{"before": "cursor-" + strconv.Itoa(start), "after": "cursor-" + strconv.Itoa(end)}}
		if end < len(list) {
			pg["next"] = "https://graph.facebook.com/v25.0/" + formID + "/leads?after=cursor-" + strconv.Itoa(end)
		}
		body["paging"] = pg
	}
	writeEscaped(w, body)
}

func leadJSON(l Lead) map[string]any {
	fields := []map[string]any{}
	for _, f := range l.Fields {
		fields = append(fields, map[string]any{"name": f.Name, "values": f.Values})
	}
	m := map[string]any{"id": l.ID, "created_time": l.Created.UTC().Format("2006-01-02T15:04:05-0700"),
		"form_id": l.FormID, "field_data": fields, "is_organic": l.IsOrganic, "platform": l.Platform}
	// An organic lead has no ad: Meta leaves the ad fields out.
	for k, v := range map[string]string{"ad_id": l.AdID, "ad_name": l.AdName, "adset_id": l.AdsetID,
		"adset_name": l.AdsetName, "campaign_id": l.CampaignID, "campaign_name": l.CampaignName} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

func validProof(proof, token, secret string) bool {
	got, err := hex.DecodeString(proof)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(token))
	return hmac.Equal(got, mac.Sum(nil))
}

// writeEscaped writes v as JSON with every non-ASCII character as \uXXXX
// (surrogate pairs past the BMP), as the Graph API writes them.
func writeEscaped(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write([]byte(EscapeNonASCII(string(b))))
}

// EscapeNonASCII rewrites every non-ASCII character of a JSON text as a
// \uXXXX escape, as Meta's servers write JSON.
func EscapeNonASCII(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}
