package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/nyaruka/phonenumbers"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/secret"
)

var (
	siteIDPattern     = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	apiVersionPattern = regexp.MustCompile(`^v[0-9]+\.[0-9]+$`)
	eventNamePattern  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_ ]{0,49}$`)
)

// IsEventName tells whether name is a valid event name for a site's
// events (meta.lead_event, qualified_event, a stage's event): a letter,
// then letters, digits, spaces or _, at most 50 in all.
func IsEventName(name string) bool { return eventNamePattern.MatchString(name) }

// MinAPIKeyLength is the shortest API key accepted: keys are bearer secrets.
const MinAPIKeyLength = 16

// validate checks every setting, fills defaults that depend on others, and
// records each problem with its key.
func (c *Config) validate(errs *Problems) {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs.add("listen", "want host:port, e.g. 127.0.0.1:8080 (%v)", err)
	}
	if !strings.HasPrefix(c.Database, "sqlite:") && !strings.HasPrefix(c.Database, "postgres://") &&
		!strings.HasPrefix(c.Database, "postgresql://") {
		errs.add("database", "want sqlite:PATH or postgres://..., got %q", c.Database)
	} else if c.Database == "sqlite:" {
		errs.add("database", "sqlite: needs a file path")
	}
	if c.PublicURL != "" {
		if _, err := parseOrigin(c.PublicURL); err != nil {
			errs.add("public_url", "%v", err)
		}
	}
	c.Proxies = nil
	for i, p := range c.TrustedProxies {
		pfx, err := parsePrefix(p)
		if err != nil {
			errs.add(fmt.Sprintf("trusted_proxies[%d]", i), "%v", err)
			continue
		}
		c.Proxies = append(c.Proxies, pfx)
	}
	if u, err := url.Parse(c.Meta.GraphURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs.add("meta.graph_url", "want an http(s) URL, got %q", c.Meta.GraphURL)
	}
	if !apiVersionPattern.MatchString(c.Meta.APIVersion) {
		errs.add("meta.api_version", "want a version like v25.0, got %q", c.Meta.APIVersion)
	}
	if c.Admin.Email != "" {
		if !strings.Contains(c.Admin.Email, "@") {
			errs.add("admin.email", "not an e-mail address: %q", c.Admin.Email)
		}
		if len(c.Admin.Password) < 8 {
			errs.add("admin.password", "set a password of at least 8 characters for the admin user")
		}
	}
	c.Admin.Location = time.Local
	if c.Admin.TimeZone != "" {
		loc, err := time.LoadLocation(c.Admin.TimeZone)
		if err != nil {
			errs.add("admin.time_zone", "unknown time zone %q: want an IANA name like Europe/Istanbul", c.Admin.TimeZone)
		} else {
			c.Admin.Location = loc
		}
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		errs.add("log.level", "want debug, info, warn or error, got %q", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		errs.add("log.format", "want text or json, got %q", c.Log.Format)
	}
	if c.DisposableDomainsFile != "" {
		if _, err := os.Stat(c.DisposableDomainsFile); err != nil {
			errs.add("disposable_domains_file", "%v", err)
		}
	}
	c.Delivery.validate(errs)
	c.HTTP.validate(errs)
	c.validateTLS(errs)
	if c.SecretKey != "" && len(c.SecretKey) < secret.MinKeyLength {
		errs.add("secret_key", "too short: use at least %d random characters (e.g. openssl rand -hex 32)", secret.MinKeyLength)
	}
	if c.MetricsListen != "" {
		if _, _, err := net.SplitHostPort(c.MetricsListen); err != nil {
			errs.add("metrics_listen", "want host:port, e.g. 127.0.0.1:9090 (%v)", err)
		} else if c.MetricsListen == c.Listen && !strings.HasSuffix(c.Listen, ":0") {
			errs.add("metrics_listen", "must differ from listen; to serve /metrics on the main address set metrics_token instead")
		}
	}
	if c.MetricsToken != "" && len(c.MetricsToken) < MinAPIKeyLength {
		errs.add("metrics_token", "too short: use at least %d random characters", MinAPIKeyLength)
	}
	if c.Retention.LeadDays < 0 {
		errs.add("retention.lead_days", "want days (0 keeps leads' contact details forever), got %d", c.Retention.LeadDays)
	}
	if c.Retention.VisitDays < 0 {
		errs.add("retention.visit_days", "want days (0 keeps visits forever), got %d", c.Retention.VisitDays)
	}
	if c.Retention.ReceiptDays < 0 || (c.Retention.ReceiptDays > 0 && c.Retention.ReceiptDays < MinReceiptDays) {
		errs.add("retention.receipt_days", "want at least %d days (WhatsApp retries a message for up to 7; 0 keeps receipts forever), got %d",
			MinReceiptDays, c.Retention.ReceiptDays)
	}
	if c.Retention.ClickDays < 0 || (c.Retention.ClickDays > 0 && c.Retention.ClickDays < MinClickDays) {
		errs.add("retention.click_days", "want at least %d days (a lead in review may be confirmed within Meta's 7 days, and its event carries the click; 0 keeps the click identity with the lead), got %d",
			MinClickDays, c.Retention.ClickDays)
	}
	if c.Retention.EventDays < 0 || (c.Retention.EventDays > 0 && c.Retention.EventDays < MinEventDays) {
		errs.add("retention.event_days", "want at least %d days (a month of events keeps the request as sent, to check against the platform's event tools; 0 keeps events whole forever), got %d",
			MinEventDays, c.Retention.EventDays)
	}
	seen := map[string]bool{}
	numbers := false
	for i := range c.Sites {
		c.Sites[i].validate(fmt.Sprintf("sites[%d]", i), seen, errs)
		numbers = numbers || len(c.Sites[i].WhatsApp.PhoneNumberIDs) > 0
	}
	w := c.WhatsApp
	switch {
	case (w.VerifyToken == "") != (w.AppSecret == ""):
		errs.add("whatsapp", "set both verify_token and app_secret, or neither")
	case numbers && w.AppSecret == "":
		errs.add("whatsapp.app_secret", "sites name WhatsApp numbers: set the Meta app's secret (and verify_token) to receive their webhooks")
	}
	if w.VerifyToken != "" && len(w.VerifyToken) < MinAPIKeyLength {
		errs.add("whatsapp.verify_token", "too short: use at least %d random characters", MinAPIKeyLength)
	}
}

func (d *Delivery) validate(errs *Problems) {
	if d.Workers < 1 || d.Workers > 256 {
		errs.add("delivery.workers", "want 1 to 256 sites sent to at once, got %d", d.Workers)
	}
	timeout, lease, poll := time.Duration(d.Timeout), time.Duration(d.Lease), time.Duration(d.Poll)
	if timeout < time.Second || timeout > 5*time.Minute {
		errs.add("delivery.timeout", "want 1s to 5m per request to Meta, got %s", timeout)
	}
	if poll < 100*time.Millisecond || poll > time.Hour {
		errs.add("delivery.poll", "want 100ms to 1h, got %s", poll)
	}
	// A site's round sends several requests (batches, splits); the lease
	// must outlast them or another node would send the same events.
	if lease < 4*timeout || lease > 24*time.Hour {
		errs.add("delivery.lease", "want at least 4 times delivery.timeout (%s) and at most 24h, got %s", 4*timeout, lease)
	}
}

func (h *HTTP) validate(errs *Problems) {
	for _, t := range []struct {
		key      string
		v        model.Duration
		min, max time.Duration
	}{
		{"http.read_header_timeout", h.ReadHeaderTimeout, 100 * time.Millisecond, time.Minute},
		{"http.read_timeout", h.ReadTimeout, 100 * time.Millisecond, 10 * time.Minute},
		{"http.write_timeout", h.WriteTimeout, 100 * time.Millisecond, 10 * time.Minute},
		{"http.idle_timeout", h.IdleTimeout, 100 * time.Millisecond, time.Hour},
	} {
		if d := time.Duration(t.v); d < t.min || d > t.max {
			errs.add(t.key, "want %s to %s, got %s", t.min, t.max, d)
		}
	}
	if h.ReadHeaderTimeout > h.ReadTimeout {
		errs.add("http.read_header_timeout", "must not exceed http.read_timeout (%s)", h.ReadTimeout)
	}
	if h.MaxHeaderBytes < 4<<10 || h.MaxHeaderBytes > 1<<20 {
		errs.add("http.max_header_bytes", "want 4096 to 1048576 bytes, got %d", h.MaxHeaderBytes)
	}
}

func (s *Site) validate(key string, seen map[string]bool, errs *Problems) {
	if !siteIDPattern.MatchString(s.ID) {
		errs.add(key+".id", "want lower-case letters, digits, - or _ (up to 63), got %q", s.ID)
	} else if seen[s.ID] {
		errs.add(key+".id", "site %q is defined twice", s.ID)
	}
	seen[s.ID] = true
	if s.Name == "" {
		s.Name = s.ID
	}
	if s.APIKey != "" && len(s.APIKey) < MinAPIKeyLength {
		errs.add(key+".api_key", "too short: use at least %d random characters", MinAPIKeyLength)
	}
	if s.CallToken != "" && len(s.CallToken) < MinAPIKeyLength {
		errs.add(key+".call_token", "too short: use at least %d random characters", MinAPIKeyLength)
	}
	if s.CallToken != "" && s.CallToken == s.APIKey {
		errs.add(key+".call_token", "must differ from api_key: it is given to call trackers")
	}
	for j, id := range s.WhatsApp.PhoneNumberIDs {
		s.WhatsApp.PhoneNumberIDs[j] = strings.TrimSpace(id)
		if !isDigits(s.WhatsApp.PhoneNumberIDs[j]) {
			errs.add(fmt.Sprintf("%s.whatsapp.phone_number_ids[%d]", key, j),
				"want the Cloud API phone number id (digits, from WhatsApp Manager), got %q", id)
		}
	}
	s.validateCTWA(key, errs)
	s.LeadAds.validate(key+".lead_ads", errs)
	for j, o := range s.Origins {
		norm, err := parseOrigin(o)
		if err != nil {
			errs.add(fmt.Sprintf("%s.origins[%d]", key, j), "%v", err)
			continue
		}
		s.Origins[j] = norm
	}
	s.Country = strings.ToUpper(strings.TrimSpace(s.Country))
	if s.Country == "" {
		errs.add(key+".country", "set the default country for phone numbers, e.g. TR")
	} else if phonenumbers.GetCountryCodeForRegion(s.Country) == 0 {
		errs.add(key+".country", "unknown region %q: want an ISO 3166 code like TR or DE", s.Country)
	}
	if s.CookieDomain != "" && (strings.ContainsAny(s.CookieDomain, "/: ") || !strings.Contains(s.CookieDomain, ".")) {
		errs.add(key+".cookie_domain", "want a domain like .example.com, got %q", s.CookieDomain)
	}
	if s.ThankYouURL != "" {
		if _, ok := s.SiteModel().SafeRedirect(s.ThankYouURL); !ok {
			errs.add(key+".thank_you_url", "must be an absolute http(s) URL on one of the site's origins, got %q", s.ThankYouURL)
		}
	}
	switch s.Consent {
	case "":
		s.Consent = model.ConsentImplied
	case model.ConsentImplied, model.ConsentRequired:
	default:
		errs.add(key+".consent", "want implied or required, got %q", s.Consent)
	}
	m := &s.Meta
	if m.PixelID != "" && !isDigits(m.PixelID) {
		errs.add(key+".meta.pixel_id", "want the pixel's digits, got %q", m.PixelID)
	}
	if m.Mode == "" {
		m.Mode = model.ModeDryRun
		if (m.PixelID != "" || s.WhatsApp.SendsCTWA()) && m.AccessToken != "" {
			m.Mode = model.ModeLive
			if m.TestEventCode != "" {
				m.Mode = model.ModeTest
			}
		}
	}
	switch m.Mode {
	case model.ModeLive, model.ModeTest:
		if m.PixelID == "" && !s.WhatsApp.SendsCTWA() {
			errs.add(key+".meta.pixel_id", "mode %s needs a pixel id (or whatsapp.dataset_id)", m.Mode)
		}
		if m.AccessToken == "" {
			errs.add(key+".meta.access_token", "mode %s needs an access token", m.Mode)
		}
		if m.Mode == model.ModeTest && m.TestEventCode == "" {
			errs.add(key+".meta.test_event_code", "mode test needs the test event code from Events Manager")
		}
	case model.ModeDryRun:
	default:
		errs.add(key+".meta.mode", "want live, test or dry_run, got %q", m.Mode)
	}
	for _, ev := range []struct{ k, v string }{{"lead_event", m.LeadEvent}, {"qualified_event", m.QualifiedEvent}} {
		if ev.v != "" && !eventNamePattern.MatchString(ev.v) {
			errs.add(key+".meta."+ev.k, "not a valid event name: %q", ev.v)
		}
	}
	for stage, se := range m.Stages {
		if strings.TrimSpace(stage) == "" {
			errs.add(key+".meta.stages", "a stage needs a name")
		}
		if !eventNamePattern.MatchString(se.Event) {
			errs.add(key+".meta.stages."+stage, "not a valid event name: %q", se.Event)
		}
		if se.Value < 0 {
			errs.add(key+".meta.stages."+stage, "value must not be negative")
		}
		if se.Currency != "" && !model.IsCurrencyCode(strings.ToUpper(se.Currency)) {
			errs.add(key+".meta.stages."+stage, "currency must be a 3-letter code, got %q", se.Currency)
		}
		if se.Value > 0 && se.Currency == "" {
			errs.add(key+".meta.stages."+stage, "a value needs its currency, e.g. currency: EUR")
		}
	}
	q := s.Qualify
	before := len(*errs)
	if q.ReviewFrom < 0 || q.ReviewFrom > 100 || q.JunkFrom < 0 || q.JunkFrom > 100 {
		errs.add(key+".qualify", "thresholds are scores from 0 to 100")
	}
	if q.ReviewFrom != 0 && q.JunkFrom != 0 && q.ReviewFrom >= q.JunkFrom {
		errs.add(key+".qualify.review_from", "must be below junk_from (%d)", q.JunkFrom)
	}
	if q.MinFillMS < 0 {
		errs.add(key+".qualify.min_fill_ms", "must not be negative")
	}
	if q.ReviewTimeout < 0 || q.ReviewTimeout > model.Duration(model.MaxEventAge) {
		errs.add(key+".qualify.review_timeout", "must be between 0 and 7 days: Meta takes no older event")
	}
	if err := qualify.CheckTextSettings(q.TextModel); err != nil {
		addQualifyProblems(key, err, errs)
	}
	// The rules check what is left (weights, phrase lists, languages, the
	// exact limits): a setting they refuse would otherwise pass here and be
	// replaced by the defaults at serve time, with only a log line.
	if len(*errs) == before {
		if _, err := qualify.New(q, nil); err != nil {
			addQualifyProblems(key, err, errs)
		}
	}
}

// addQualifyProblems turns the rules' joined errors ("qualify.weights.X:
// ...") into problems under the site's key.
func addQualifyProblems(key string, err error, errs *Problems) {
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	for _, e := range list {
		k, msg, ok := strings.Cut(e.Error(), ": ")
		if !ok {
			k, msg = "qualify", e.Error()
		}
		errs.add(key+"."+k, "%s", msg)
	}
}

// parseOrigin checks an origin (scheme://host[:port], no path) and returns
// it in canonical form.
func parseOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(s), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("want an origin like https://www.example.com, got %q", s)
	}
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("an origin has no path, query or user: %q", s)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return p, fmt.Errorf("want an IP or CIDR, got %q", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("want an IP or CIDR, got %q", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// CheckSite checks one site by the same rules as the file's sites (the
// admin UI uses it for the sites it edits), normalising it in place. Keys
// are relative to the site: "origins[0]", "meta.mode".
func CheckSite(s *Site) Problems {
	var errs Problems
	s.validate("site", map[string]bool{}, &errs)
	for i := range errs {
		errs[i].Key = strings.TrimPrefix(errs[i].Key, "site.")
	}
	return errs
}

// validate checks a site's lead_ads: block: Page ids in digits, the three
// secrets together, and mappings to lead fields that exist.
func (l *SiteLeadAds) validate(key string, errs *Problems) {
	for j, id := range l.PageIDs {
		l.PageIDs[j] = strings.TrimSpace(id)
		if !isDigits(l.PageIDs[j]) {
			errs.add(fmt.Sprintf("%s.page_ids[%d]", key, j), "want the Facebook Page id (digits, from the Page's About), got %q", id)
		}
	}
	set := 0
	for _, v := range []string{l.AccessToken, l.AppSecret, l.VerifyToken} {
		if v != "" {
			set++
		}
	}
	switch {
	case len(l.PageIDs) > 0 && set < 3:
		errs.add(key, "page_ids need access_token, app_secret and verify_token (or their _file twins)")
	case len(l.PageIDs) == 0 && set > 0:
		errs.add(key+".page_ids", "name the Facebook Pages whose Instant Forms are the site's leads")
	}
	if l.VerifyToken != "" && len(l.VerifyToken) < MinAPIKeyLength {
		errs.add(key+".verify_token", "too short: use at least %d random characters", MinAPIKeyLength)
	}
	targets := model.LeadAdsTargets()
	check := func(k string, m map[string]string) {
		for q, t := range m {
			if t != "-" && !slices.Contains(targets, t) {
				errs.add(k+"."+q, "want one of %s or - (drop), got %q", strings.Join(targets, ", "), t)
			}
		}
	}
	check(key+".fields", l.Fields)
	for id, f := range l.Forms {
		if !isDigits(id) {
			errs.add(key+".forms."+id, "want a form id (digits), got %q", id)
		}
		check(key+".forms."+id+".fields", f.Fields)
	}
}
