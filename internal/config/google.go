package config

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/model"
)

// Google holds the Data Manager API location shared by all sites.
type Google struct {
	// APIURL is the Data Manager API's base URL.
	APIURL string `yaml:"api_url"`
	// TokenURL replaces Google's OAuth token endpoint for OAuth clients
	// (a stand-in's); a service account key names its own.
	TokenURL string `yaml:"token_url"`
}

// SiteGoogle is a site's google: block: the model's settings plus the
// credentials, a service account key file or an OAuth client with a
// refresh token. An empty block (no operating_account_id) sends nothing to
// Google.
type SiteGoogle struct {
	model.GoogleSettings `yaml:",inline"`
	// CredentialsFile is a service account key file (JSON).
	CredentialsFile  string `yaml:"credentials_file"`
	ClientID         string `yaml:"client_id"`
	ClientSecret     string `yaml:"client_secret" secret:"true"`
	ClientSecretFile string `yaml:"client_secret_file"`
	RefreshToken     string `yaml:"refresh_token" secret:"true"`
	RefreshTokenFile string `yaml:"refresh_token_file"`

	// Credentials are what the fields above say, read by Validate.
	Credentials google.Credentials `yaml:"-"`
}

// Enabled tells whether the site sends to Google.
func (g *SiteGoogle) Enabled() bool { return g.OperatingAccountID != "" }

// readGoogleSecrets fills the Google secrets from their *_file twins and
// reads the key files.
func readGoogleSecrets(c *Config, errs *Problems) {
	for i := range c.Sites {
		g := &c.Sites[i].Google
		key := fmt.Sprintf("sites[%d].google", i)
		readSecret(key+".client_secret", &g.ClientSecret, g.ClientSecretFile, errs)
		readSecret(key+".refresh_token", &g.RefreshToken, g.RefreshTokenFile, errs)
		if g.CredentialsFile != "" {
			b, err := os.ReadFile(g.CredentialsFile)
			if err != nil {
				errs.add(key+".credentials_file", "%v", err)
				continue
			}
			g.Credentials.ServiceAccountKey = string(b)
		}
	}
}

// readSecret fills a secret from its *_file twin: the file's content
// without its trailing newline; setting both is a problem.
func readSecret(key string, dst *string, file string, errs *Problems) {
	if file == "" {
		return
	}
	if *dst != "" {
		errs.add(key, "set both the value and %s_file; keep one", key)
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		errs.add(key+"_file", "%v", err)
		return
	}
	*dst = strings.TrimRight(string(b), "\r\n")
}

// googleAccountID reads a Google Ads customer id as Google Ads shows it
// (123-456-7890) or as digits.
func googleAccountID(s string) (string, bool) {
	d := strings.ReplaceAll(strings.TrimSpace(s), "-", "")
	return d, len(d) == 10 && isDigits(d)
}

// validateGoogle checks the global google block and every site's.
func (c *Config) validateGoogle(errs *Problems) {
	if c.Google.APIURL == "" {
		c.Google.APIURL = google.DefaultBaseURL
	}
	for name, v := range c.PlatformAPIURLs {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs.add("platform_api_urls."+name, "want an http(s) URL, got %q", v)
		}
	}
	if u, err := url.Parse(c.Google.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs.add("google.api_url", "want an http(s) URL, got %q", c.Google.APIURL)
	}
	for i := range c.Sites {
		validateSiteGoogle(&c.Sites[i], fmt.Sprintf("sites[%d].google", i), errs)
	}
}

func validateSiteGoogle(s *Site, key string, errs *Problems) {
	g := &s.Google
	creds := g.CredentialsFile != "" || g.ClientID != "" || g.ClientSecret != "" || g.RefreshToken != ""
	if !g.Enabled() {
		if creds || g.QualifiedConversionAction != "" || len(g.Stages) > 0 {
			errs.add(key+".operating_account_id", "set the Google Ads customer id the conversions go to (e.g. 123-456-7890)")
		}
		return
	}
	if id, ok := googleAccountID(g.OperatingAccountID); ok {
		g.OperatingAccountID = id
	} else {
		errs.add(key+".operating_account_id", "want a Google Ads customer id like 123-456-7890, got %q", g.OperatingAccountID)
	}
	if g.LoginAccountID != "" {
		if id, ok := googleAccountID(g.LoginAccountID); ok {
			g.LoginAccountID = id
		} else {
			errs.add(key+".login_account_id", "want the manager account's customer id like 123-456-7890, got %q", g.LoginAccountID)
		}
	}
	if g.QualifiedConversionAction == "" && len(g.Stages) == 0 {
		errs.add(key+".qualified_conversion_action", "name the conversion action (its id) the qualified lead counts under, or stages")
	}
	if g.QualifiedConversionAction != "" && !isDigits(g.QualifiedConversionAction) {
		errs.add(key+".qualified_conversion_action", "want the conversion action id (digits, from the action's URL ctId=), got %q", g.QualifiedConversionAction)
	}
	for stage, action := range g.Stages {
		if !isDigits(action) {
			errs.add(key+".stages."+stage, "want the conversion action id (digits), got %q", action)
		}
	}
	g.Currency = strings.ToUpper(strings.TrimSpace(g.Currency))
	if g.Currency != "" && !model.IsCurrencyCode(g.Currency) {
		errs.add(key+".currency", "want a 3-letter code like EUR, got %q", g.Currency)
	}
	for k, v := range map[string]string{"ad_user_data": g.Consent.AdUserData, "ad_personalization": g.Consent.AdPersonalization} {
		if v != "" && v != model.ConsentGranted && v != model.ConsentDenied {
			errs.add(key+".consent."+k, "want granted or denied, got %q", v)
		}
	}
	switch g.Mode {
	case "":
		g.Mode = model.GoogleModeLive
	case model.GoogleModeLive, model.GoogleModeValidate:
	default:
		errs.add(key+".mode", "want live or validate, got %q", g.Mode)
	}
	g.Credentials.ClientID, g.Credentials.ClientSecret, g.Credentials.RefreshToken = g.ClientID, g.ClientSecret, g.RefreshToken
	if err := g.Credentials.Validate(); err != nil {
		k := key + ".credentials_file"
		if g.CredentialsFile == "" && (g.ClientID != "" || g.ClientSecret != "" || g.RefreshToken != "") {
			k = key + ".client_id"
		}
		errs.add(k, "%v", err)
	}
}

// googleModel is the site's Google settings for the model, nil when the
// site sends nothing to Google.
func (s *Site) googleModel() *model.GoogleSettings {
	if !s.Google.Enabled() {
		return nil
	}
	g := s.Google.GoogleSettings
	g.Credentials = s.Google.Credentials.Fingerprint()
	return &g
}
