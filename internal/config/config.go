// Package config owns CleanAds' settings: one Config struct read once from a
// YAML file and then from CLEANADS_* environment variables, with ${ENV}
// expansion and *_file secrets, validated all at once so every mistake is
// reported together.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"
	_ "time/tzdata" // admin.time_zone works on machines without a zone database

	"go.yaml.in/yaml/v3"

	"github.com/cleanads/cleanads/internal/model"
)

// DefaultDatabase is where the embedded database lives when nothing is set.
const DefaultDatabase = "sqlite:./cleanads-data/cleanads.db"

// Config is every setting of a CleanAds server.
type Config struct {
	Listen string `yaml:"listen"`
	// PublicURL is the server's own address as browsers see it, e.g.
	// https://t.example.com; used in install snippets.
	PublicURL string `yaml:"public_url"`
	Database  string `yaml:"database"`
	// UpgradeJournal is the file that keeps the intake's requests while
	// serve migrates the database, until they are stored; empty: beside a
	// SQLite database (PATH.upgrade), none on PostgreSQL (serve then
	// migrates before it listens).
	UpgradeJournal string `yaml:"upgrade_journal"`
	// TrustedProxies are the addresses whose X-Forwarded-For and X-Real-IP
	// headers are believed.
	TrustedProxies []string `yaml:"trusted_proxies"`
	Meta           Meta     `yaml:"meta"`
	Admin          Admin    `yaml:"admin"`
	// SecretKey encrypts secrets at rest and signs tokens.
	SecretKey     string `yaml:"secret_key" secret:"true"`
	SecretKeyFile string `yaml:"secret_key_file"`
	Log           Log    `yaml:"log"`
	// DisposableDomainsFile replaces the embedded list of disposable e-mail
	// domains with a newer one (one domain a line).
	DisposableDomainsFile string `yaml:"disposable_domains_file"`
	// Delivery tunes the outbox runner that sends events to Meta.
	Delivery Delivery `yaml:"delivery"`
	// WhatsApp is the Meta app whose WhatsApp Cloud API webhooks CleanAds
	// receives; each site names its numbers in its own whatsapp block.
	WhatsApp WhatsApp `yaml:"whatsapp"`
	// HTTP bounds what one client can hold of the main listener.
	HTTP HTTP `yaml:"http"`
	// Limits are the request rates each client may use.
	Limits Limits `yaml:"limits"`
	// MetricsListen is a separate address (host:port) that serves only
	// /metrics; empty means none.
	MetricsListen string `yaml:"metrics_listen"`
	// MetricsToken, when set, is the bearer token /metrics asks for; on the
	// main listener /metrics exists only with it.
	MetricsToken     string `yaml:"metrics_token" secret:"true"`
	MetricsTokenFile string `yaml:"metrics_token_file"`
	// Retention says how long personal data is kept.
	Retention Retention `yaml:"retention"`
	// TLS makes the server speak HTTPS itself; without it the server speaks
	// plain HTTP on listen, behind a proxy that terminates TLS.
	TLS TLS `yaml:"tls"`
	// Google is the Data Manager API shared by the sites' google blocks.
	Google Google `yaml:"google"`
	// PlatformAPIURLs are the API addresses of the platforms that have no
	// block of their own here, by platform name (a stand-in's in tests, a
	// proxy): {tiktok: "http://127.0.0.1:9000"}.
	PlatformAPIURLs map[string]string `yaml:"platform_api_urls"`
	Sites           []Site            `yaml:"sites"`

	// Proxies is TrustedProxies parsed by Validate.
	Proxies []netip.Prefix `yaml:"-"`
}

// Meta holds the Graph API location shared by all sites.
type Meta struct {
	GraphURL   string `yaml:"graph_url"`
	APIVersion string `yaml:"api_version"`
}

// Delivery tunes the outbox runner.
type Delivery struct {
	// Workers is how many sites are sent to at once.
	Workers int `yaml:"workers"`
	// Lease is how long a node keeps the events it claimed; a crashed
	// node's events are claimed again after it.
	Lease model.Duration `yaml:"lease"`
	// Poll is the longest the runner sleeps when nothing is due.
	Poll model.Duration `yaml:"poll"`
	// Timeout bounds each request to Meta.
	Timeout model.Duration `yaml:"timeout"`
}

// HTTP holds the main listener's timeouts and header limit: a slow or
// stalled client is cut off instead of holding a connection.
type HTTP struct {
	ReadHeaderTimeout model.Duration `yaml:"read_header_timeout"`
	ReadTimeout       model.Duration `yaml:"read_timeout"`
	WriteTimeout      model.Duration `yaml:"write_timeout"`
	IdleTimeout       model.Duration `yaml:"idle_timeout"`
	MaxHeaderBytes    int            `yaml:"max_header_bytes"`
}

// Limits are request rates ("60/m"), kept per node in memory: with several
// nodes each limits on its own.
type Limits struct {
	// PublicPerIP bounds each visitor address on /v1/collect and /v1/leads.
	PublicPerIP model.Rate `yaml:"public_per_ip"`
	// APIPerKey bounds each API key, on the API and on leads posted with it.
	APIPerKey model.Rate `yaml:"api_per_key"`
}

// SiteLimits override the global limits for one site; unset ones inherit.
type SiteLimits struct {
	PublicPerIP *model.Rate `yaml:"public_per_ip"`
	APIPerKey   *model.Rate `yaml:"api_per_key"`
}

// MinReceiptDays is the shortest retention.receipt_days: a receipt must
// outlive the platforms' retries of its item (WhatsApp's, up to 7 days).
const MinReceiptDays = 8

// MinEventDays is the shortest retention.event_days: a month of events
// keeps the request as sent, for the owner to set beside what the
// platform's own event tools show. (The dashboard's match-key coverage and
// the readiness page read counters since migration 0430, not payloads.)
const MinEventDays = 30

// MinClickDays is the shortest retention.click_days: a lead in review may
// be confirmed up to Meta's 7 days after it came, and its qualified event
// carries the click identity then.
const MinClickDays = 8

// Retention is how long personal data is kept; 0 days keeps it forever.
type Retention struct {
	// LeadDays: a lead's contact details are removed this many days after
	// it arrived; its verdict, reasons and times stay.
	LeadDays int `yaml:"lead_days"`
	// VisitDays: visits, and visitors not seen since, are deleted after it.
	VisitDays int `yaml:"visit_days"`
	// ReceiptDays: the receipts of inbound WhatsApp messages and calls (each
	// item's id, kept so that a platform's retry is handled once, with what
	// became of it) are deleted after it. At least 8: WhatsApp retries a
	// message for up to 7 days.
	ReceiptDays int `yaml:"receipt_days"`
	// EventDays: a finished event (sent, dead, expired, dry run) whose
	// deadline has passed is shrunk this many days after it was queued to
	// what the owner's view needs (its name, time, value and the names of
	// its match keys); the hashed keys and the request as sent go. At least
	// 30 (MinEventDays).
	EventDays int `yaml:"event_days"`
	// ClickDays: a lead's click identity (IP, user agent, fbc, fbp, the ad
	// platforms' cookies) is cleared this many days after it arrived; its
	// device and browser family stays until LeadDays, its click ids
	// (fbclid, gclid) with it. At least 8 (MinClickDays).
	ClickDays int `yaml:"click_days"`
}

// Admin bootstraps the first admin user and sets how the admin UI shows
// times.
type Admin struct {
	Email        string `yaml:"email"`
	Password     string `yaml:"password" secret:"true"`
	PasswordFile string `yaml:"password_file"`
	// TimeZone is the IANA zone admin pages show times and days in, e.g.
	// Europe/Istanbul; empty means the server's zone.
	TimeZone string `yaml:"time_zone"`

	// Location is TimeZone loaded by Validate.
	Location *time.Location `yaml:"-"`
}

// WhatsApp holds the secrets of the Meta app that sends WhatsApp webhooks:
// one callback URL per app, so one for every site.
type WhatsApp struct {
	// VerifyToken is the token typed into the app's webhook settings; Meta
	// echoes it in the GET handshake.
	VerifyToken     string `yaml:"verify_token" secret:"true"`
	VerifyTokenFile string `yaml:"verify_token_file"`
	// AppSecret signs every webhook (X-Hub-Signature-256).
	AppSecret     string `yaml:"app_secret" secret:"true"`
	AppSecretFile string `yaml:"app_secret_file"`
}

// Log sets the log output.
type Log struct {
	Level  string `yaml:"level"`  // debug, info, warn, error
	Format string `yaml:"format"` // text or json
}

// Site is one site as written in the config file.
type Site struct {
	ID         string `yaml:"id"`
	Name       string `yaml:"name"`
	APIKey     string `yaml:"api_key" secret:"true"`
	APIKeyFile string `yaml:"api_key_file"`
	// CallToken lets a call tracker post calls (POST /v1/calls) without
	// holding the API key, which also reads leads.
	CallToken     string `yaml:"call_token" secret:"true"`
	CallTokenFile string `yaml:"call_token_file"`

	Origins      []string      `yaml:"origins"`
	Country      string        `yaml:"country"`
	CookieDomain string        `yaml:"cookie_domain"`
	ThankYouURL  string        `yaml:"thank_you_url"`
	Consent      string        `yaml:"consent"`
	Meta         SiteMeta      `yaml:"meta"`
	Qualify      model.Qualify `yaml:"qualify"`
	// WhatsApp names the site's WhatsApp Business numbers.
	WhatsApp model.WhatsAppSettings `yaml:"whatsapp"`
	Limits   SiteLimits             `yaml:"limits"`
	// LeadAds connects the site's Facebook Pages' Instant Forms.
	LeadAds SiteLeadAds `yaml:"lead_ads"`
	// Google sends the site's qualified leads and stages to Google Ads.
	Google SiteGoogle `yaml:"google"`
	// Platforms are the settings of the ad platforms without a block of
	// their own (TikTok), by platform name and then by the keys of the
	// admin UI's fields: {tiktok: {pixel_code: ..., access_token_file:
	// ..., stages: "won = Purchase"}}. A secret may come from <key>_file.
	Platforms map[string]map[string]string `yaml:"platforms"`

	// platformDocs and platformSecrets are Platforms as validated and read.
	platformDocs    map[string]json.RawMessage
	platformSecrets map[string]string
}

// SiteLeadAds is a site's lead_ads: block: the model's settings plus the
// Meta app's and the Page's secrets.
type SiteLeadAds struct {
	model.LeadAdsSettings `yaml:",inline"`
	// AccessToken is the Page (or system-user) token that reads the leads.
	AccessToken     string `yaml:"access_token" secret:"true"`
	AccessTokenFile string `yaml:"access_token_file"`
	// AppSecret signs the leadgen webhooks and each call's appsecret_proof.
	AppSecret     string `yaml:"app_secret" secret:"true"`
	AppSecretFile string `yaml:"app_secret_file"`
	// VerifyToken is typed into the app's webhook settings.
	VerifyToken     string `yaml:"verify_token" secret:"true"`
	VerifyTokenFile string `yaml:"verify_token_file"`
}

// SiteMeta is a site's meta: block: the model's settings plus the token.
type SiteMeta struct {
	model.MetaSettings `yaml:",inline"`
	AccessToken        string `yaml:"access_token" secret:"true"`
	AccessTokenFile    string `yaml:"access_token_file"`
}

// Default returns the settings used when nothing is configured.
func Default() *Config {
	return &Config{
		Listen:         "127.0.0.1:8080",
		Database:       DefaultDatabase,
		TrustedProxies: []string{"127.0.0.1/32", "::1/128"},
		Meta:           Meta{GraphURL: "https://graph.facebook.com", APIVersion: "v25.0"},
		Log:            Log{Level: "info", Format: "text"},
		Delivery: Delivery{Workers: 4, Lease: model.Duration(10 * time.Minute), Poll: model.Duration(30 * time.Second),
			Timeout: model.Duration(30 * time.Second)},
		HTTP: HTTP{ReadHeaderTimeout: model.Duration(5 * time.Second), ReadTimeout: model.Duration(15 * time.Second),
			WriteTimeout: model.Duration(30 * time.Second), IdleTimeout: model.Duration(120 * time.Second), MaxHeaderBytes: 32 << 10},
		// Generous: many visitors share one address behind a mobile
		// carrier's NAT, and a campaign arrives in bursts.
		Limits:    Limits{PublicPerIP: model.Rate{N: 300, Per: time.Minute}, APIPerKey: model.Rate{N: 6000, Per: time.Minute}},
		Retention: Retention{LeadDays: 365, VisitDays: 90, ReceiptDays: 30, EventDays: 30, ClickDays: 90},
		TLS: TLS{ListenHTTPS: ":443", ListenHTTP: ":80",
			ACME: ACME{Directory: LetsEncrypt, RenewCheck: model.Duration(10 * time.Minute)}},
	}
}

// Load reads the file at path (none when path is empty), then the CLEANADS_*
// variables from getenv, expands ${VAR} references and *_file secrets, and
// validates the result. Every problem found is reported in one error.
func Load(path string, getenv func(string) string) (*Config, error) {
	c := Default()
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		if err := decodeYAML(b, c); err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
	}
	var errs Problems
	applyEnv(c, getenv, &errs)
	expandAll(c, getenv, &errs)
	readSecretFiles(c, &errs)
	readGoogleSecrets(c, &errs)
	c.validate(&errs)
	c.validateGoogle(&errs)
	c.validatePlatforms(&errs)
	if len(errs) > 0 {
		return nil, errs
	}
	return c, nil
}

func decodeYAML(b []byte, c *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// Problem is one invalid setting, named by its key path.
type Problem struct {
	Key     string
	Message string
}

// Problems is every invalid setting found; it is the error Load returns.
type Problems []Problem

func (p *Problems) add(key, format string, args ...any) {
	*p = append(*p, Problem{Key: key, Message: fmt.Sprintf(format, args...)})
}

func (p Problems) Error() string {
	var b strings.Builder
	if len(p) == 1 {
		b.WriteString("config: 1 problem:")
	} else {
		fmt.Fprintf(&b, "config: %d problems:", len(p))
	}
	for _, e := range p {
		fmt.Fprintf(&b, "\n  %s: %s", e.Key, e.Message)
	}
	return b.String()
}

// readSecretFiles fills a secret from its *_file twin.
func readSecretFiles(c *Config, errs *Problems) {
	read := func(key string, dst *string, file string) { readSecret(key, dst, file, errs) }
	read("secret_key", &c.SecretKey, c.SecretKeyFile)
	read("metrics_token", &c.MetricsToken, c.MetricsTokenFile)
	read("admin.password", &c.Admin.Password, c.Admin.PasswordFile)
	read("whatsapp.verify_token", &c.WhatsApp.VerifyToken, c.WhatsApp.VerifyTokenFile)
	read("whatsapp.app_secret", &c.WhatsApp.AppSecret, c.WhatsApp.AppSecretFile)
	for i := range c.Sites {
		s := &c.Sites[i]
		read(fmt.Sprintf("sites[%d].api_key", i), &s.APIKey, s.APIKeyFile)
		read(fmt.Sprintf("sites[%d].meta.access_token", i), &s.Meta.AccessToken, s.Meta.AccessTokenFile)
		read(fmt.Sprintf("sites[%d].call_token", i), &s.CallToken, s.CallTokenFile)
		read(fmt.Sprintf("sites[%d].lead_ads.access_token", i), &s.LeadAds.AccessToken, s.LeadAds.AccessTokenFile)
		read(fmt.Sprintf("sites[%d].lead_ads.app_secret", i), &s.LeadAds.AppSecret, s.LeadAds.AppSecretFile)
		read(fmt.Sprintf("sites[%d].lead_ads.verify_token", i), &s.LeadAds.VerifyToken, s.LeadAds.VerifyTokenFile)
	}
}

// SiteModel turns a configured site into the model's Site; APIKeyHash and
// CallTokenHash are left to the caller, which owns hashing.
func (s *Site) SiteModel() *model.Site {
	return &model.Site{
		ID:     model.SiteID(s.ID),
		Name:   s.Name,
		Pinned: true,
		Settings: model.SiteSettings{
			Origins:      s.Origins,
			Country:      s.Country,
			CookieDomain: s.CookieDomain,
			ThankYouURL:  s.ThankYouURL,
			Consent:      s.Consent,
			Meta:         s.Meta.MetaSettings,
			Qualify:      s.Qualify,
			WhatsApp:     s.WhatsApp,
			LeadAds:      s.LeadAds.LeadAdsSettings,
			Google:       s.googleModel(),
			Platforms:    s.platformDocs,
		},
		Secrets:     s.platformSecrets,
		AccessToken: s.Meta.AccessToken,
		LeadAds: model.LeadAdsSecrets{AccessToken: s.LeadAds.AccessToken, AppSecret: s.LeadAds.AppSecret,
			VerifyToken: s.LeadAds.VerifyToken},
	}
}
