package capi

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The Lead Ads side of the Graph API: reading a lead by its leadgen id, a
// form's leads since a time, a Page's forms, the Page's subscribed apps and
// the token's permissions. Every call carries the token and its
// appsecret_proof; errors are *APIError as for Send, classified alike.

// GraphID is a Graph object id: decimal digits, kept as a string end to end
// (Lead Ads ids exceed 2^53, so a float would change them). It decodes from
// a JSON string or a JSON number, as Meta writes either.
type GraphID string

// UnmarshalJSON takes "123" or 123, digits only; null is empty.
func (id *GraphID) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		*id = ""
		return nil
	}
	if len(s) >= 2 && s[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		s = strings.TrimSpace(str)
	}
	if !digits(s) {
		return fmt.Errorf("capi: a Graph id is digits, got %q", s)
	}
	*id = GraphID(s)
	return nil
}

// checkID refuses a Graph id that is not digits: it goes into a URL path.
func checkID(kind, id string) error {
	if !digits(id) {
		return fmt.Errorf("capi: %s id %q: %w", kind, id, ErrInvalidRequest)
	}
	return nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// GraphAuth is what a Lead Ads call is made with: the Page (or system-user)
// token and the Meta app's secret, for appsecret_proof.
type GraphAuth struct {
	AccessToken string
	AppSecret   string
}

// AppSecretProof is HMAC-SHA256 of the token keyed with the app secret, in
// hex: Meta's proof that a call comes from the app's server.
func AppSecretProof(token, appSecret string) string {
	mac := hmac.New(sha256.New, []byte(appSecret))
	mac.Write([]byte(token))
	return hex.EncodeToString(mac.Sum(nil))
}

// LeadgenLead is a Lead Ads lead as the Graph API returns it.
type LeadgenLead struct {
	ID           GraphID     `json:"id"`
	CreatedTime  string      `json:"created_time"` // 2026-12-03T10:11:12+0000
	FormID       GraphID     `json:"form_id"`
	AdID         GraphID     `json:"ad_id"`
	AdName       string      `json:"ad_name"`
	AdsetID      GraphID     `json:"adset_id"`
	AdsetName    string      `json:"adset_name"`
	CampaignID   GraphID     `json:"campaign_id"`
	CampaignName string      `json:"campaign_name"`
	IsOrganic    bool        `json:"is_organic"`
	Platform     string      `json:"platform"`
	FieldData    []FieldData `json:"field_data"`
}

// FieldData is one question of an Instant Form and its answers.
type FieldData struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// LeadgenFields are the fields a lead is read with.
const LeadgenFields = "id,created_time,field_data,form_id,ad_id,ad_name,adset_id,adset_name,campaign_id,campaign_name,is_organic,platform"

// graphTimeLayout is how the Graph API writes times.
const graphTimeLayout = "2006-01-02T15:04:05-0700"

// Created is the lead's created_time; zero when Meta's value does not parse.
func (l *LeadgenLead) Created() time.Time {
	t, err := time.Parse(graphTimeLayout, l.CreatedTime)
	if err != nil {
		if t, err = time.Parse(time.RFC3339, l.CreatedTime); err != nil {
			return time.Time{}
		}
	}
	return t.UTC()
}

// Leadgen reads one lead by its leadgen id.
func (c *Client) Leadgen(ctx context.Context, a GraphAuth, id string) (*LeadgenLead, error) {
	if err := checkID("leadgen", id); err != nil {
		return nil, err
	}
	var l LeadgenLead
	if err := c.graphGet(ctx, a, id, url.Values{"fields": {LeadgenFields}}, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// LeadPage is one page of a form's leads, and the cursor of the next one
// ("" on the last).
type LeadPage struct {
	Leads []LeadgenLead
	After string
}

type paging struct {
	Cursors struct {
		After string `json:"after"`
	} `json:"cursors"`
	Next string `json:"next"`
}

// FormLeads reads a page of a form's leads created after since (Unix
// seconds, Meta's time_created filter), from the cursor after ("" for the
// first page), at most limit.
func (c *Client) FormLeads(ctx context.Context, a GraphAuth, formID string, since time.Time, after string, limit int) (*LeadPage, error) {
	if err := checkID("form", formID); err != nil {
		return nil, err
	}
	filter, _ := json.Marshal([]map[string]any{{"field": "time_created", "operator": "GREATER_THAN", "value": since.Unix()}})
	q := url.Values{"fields": {LeadgenFields}, "filtering": {string(filter)}, "limit": {strconv.Itoa(limit)}}
	if after != "" {
		q.Set("after", after)
	}
	var body struct {
		Data   []LeadgenLead `json:"data"`
		Paging paging        `json:"paging"`
	}
	if err := c.graphGet(ctx, a, formID+"/leads", q, &body); err != nil {
		return nil, err
	}
	p := &LeadPage{Leads: body.Data}
	if body.Paging.Next != "" {
		p.After = body.Paging.Cursors.After
	}
	return p, nil
}

// LeadForm is one of a Page's Instant Forms.
type LeadForm struct {
	ID     GraphID `json:"id"`
	Name   string  `json:"name"`
	Status string  `json:"status"`
}

// PageForms reads every Instant Form of a Page, following the cursors.
func (c *Client) PageForms(ctx context.Context, a GraphAuth, pageID string) ([]LeadForm, error) {
	if err := checkID("page", pageID); err != nil {
		return nil, err
	}
	var forms []LeadForm
	after := ""
	for range 100 {
		q := url.Values{"fields": {"id,name,status"}, "limit": {"100"}}
		if after != "" {
			q.Set("after", after)
		}
		var body struct {
			Data   []LeadForm `json:"data"`
			Paging paging     `json:"paging"`
		}
		if err := c.graphGet(ctx, a, pageID+"/leadgen_forms", q, &body); err != nil {
			return nil, err
		}
		forms = append(forms, body.Data...)
		if body.Paging.Next == "" || body.Paging.Cursors.After == "" {
			break
		}
		after = body.Paging.Cursors.After
	}
	return forms, nil
}

// FormName reads an Instant Form's name.
func (c *Client) FormName(ctx context.Context, a GraphAuth, formID string) (string, error) {
	if err := checkID("form", formID); err != nil {
		return "", err
	}
	var f LeadForm
	if err := c.graphGet(ctx, a, formID, url.Values{"fields": {"id,name"}}, &f); err != nil {
		return "", err
	}
	return f.Name, nil
}

// SubscribedApp is an app a Page sends webhooks to, and for which fields.
type SubscribedApp struct {
	ID               GraphID  `json:"id"`
	Name             string   `json:"name"`
	SubscribedFields []string `json:"subscribed_fields"`
}

// SubscribedApps reads the apps the Page sends webhooks to.
func (c *Client) SubscribedApps(ctx context.Context, a GraphAuth, pageID string) ([]SubscribedApp, error) {
	if err := checkID("page", pageID); err != nil {
		return nil, err
	}
	var body struct {
		Data []SubscribedApp `json:"data"`
	}
	if err := c.graphGet(ctx, a, pageID+"/subscribed_apps", nil, &body); err != nil {
		return nil, err
	}
	return body.Data, nil
}

// Permission is one permission of the token's user and whether it is
// granted.
type Permission struct {
	Permission string `json:"permission"`
	Status     string `json:"status"` // granted, declined, expired
}

// Permissions reads the permissions of the token's user (/me/permissions).
func (c *Client) Permissions(ctx context.Context, a GraphAuth) ([]Permission, error) {
	var body struct {
		Data []Permission `json:"data"`
	}
	if err := c.graphGet(ctx, a, "me/permissions", nil, &body); err != nil {
		return nil, err
	}
	return body.Data, nil
}

// graphGet makes a signed GET of /{version}/{path} and decodes the answer.
func (c *Client) graphGet(ctx context.Context, a GraphAuth, path string, q url.Values, out any) error {
	if a.AccessToken == "" {
		return fmt.Errorf("capi: no Lead Ads access token: %w", ErrInvalidRequest)
	}
	if q == nil {
		q = url.Values{}
	}
	q.Set("access_token", a.AccessToken)
	if a.AppSecret != "" {
		q.Set("appsecret_proof", AppSecretProof(a.AccessToken, a.AppSecret))
	}
	endpoint := c.base + "/" + c.version + "/" + path
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"?"+q.Encode(), nil)
	if err != nil {
		return fmt.Errorf("capi: GET %s: %v: %w", endpoint, scrub(err, a.AccessToken), ErrInvalidRequest)
	}
	hreq.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(hreq)
	if err != nil {
		return &sendError{endpoint: endpoint, err: err, token: a.AccessToken}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return &sendError{endpoint: endpoint, err: err, token: a.AccessToken}
	}
	if resp.StatusCode/100 != 2 {
		return c.apiError(resp, raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return &APIError{Status: resp.StatusCode, Message: "unreadable answer: " + snippet(raw), IsTransient: true}
	}
	return nil
}

// MissingPermission names the permission a refusal says is missing, or ""
// when err is no permission error (codes 10 and 200-299). Meta names it in
// the message ("Requires leads_retrieval permission"); when it does not,
// the answer is "a permission".
func MissingPermission(err error) string {
	var ae *APIError
	if !errors.As(err, &ae) || !(ae.Code == 10 || ae.Code >= 200 && ae.Code <= 299) {
		return ""
	}
	for _, p := range LeadAdsPermissions() {
		if strings.Contains(ae.Message, p) {
			return p
		}
	}
	return "a permission"
}

// LeadAdsPermissions are the permissions Meta's Lead Ads guides ask of the
// token that reads leads with their ad fields by webhook.
func LeadAdsPermissions() []string {
	return []string{"leads_retrieval", "pages_manage_metadata", "pages_show_list", "pages_read_engagement",
		"ads_management", "pages_manage_ads"}
}
