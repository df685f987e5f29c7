package google

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/oauth2"
	gauth "golang.org/x/oauth2/google"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// Credentials are how CleanAds reaches a site's Google Ads account: a
// service account key (the JSON file Google gives) or an OAuth client with
// the refresh token its owner's consent gave. Exactly one of the two.
type Credentials struct {
	// ServiceAccountKey is the key file's JSON.
	ServiceAccountKey string `json:"service_account_key,omitempty"`
	ClientID          string `json:"client_id,omitempty"`
	ClientSecret      string `json:"client_secret,omitempty"`
	RefreshToken      string `json:"refresh_token,omitempty"`
	// TokenURL replaces Google's token endpoint for an OAuth client (a
	// key file names its own in token_uri).
	TokenURL string `json:"token_url,omitempty"`
}

// Validate says what is missing or contradictory.
func (c *Credentials) Validate() error {
	oauth := c.ClientID != "" || c.ClientSecret != "" || c.RefreshToken != ""
	switch {
	case c.ServiceAccountKey != "" && oauth:
		return errors.New("both a service account key and an OAuth client are set; keep one")
	case c.ServiceAccountKey != "":
		var k struct {
			Type        string `json:"type"`
			ClientEmail string `json:"client_email"`
			PrivateKey  string `json:"private_key"`
		}
		if err := json.Unmarshal([]byte(c.ServiceAccountKey), &k); err != nil {
			return fmt.Errorf("the service account key is not JSON: %v", err)
		}
		if k.Type != "service_account" || k.ClientEmail == "" || k.PrivateKey == "" {
			return errors.New(`the key file is not a service account key (type "service_account" with client_email and private_key)`)
		}
	case oauth:
		if c.ClientID == "" || c.ClientSecret == "" || c.RefreshToken == "" {
			return errors.New("an OAuth client needs client_id, client_secret and refresh_token")
		}
	default:
		return errors.New("no credentials: set credentials_file (a service account key) or client_id, client_secret and refresh_token")
	}
	return nil
}

// Fingerprint is a short digest of the credentials that tells one from
// another and gives none of them away: the site's settings keep it, so a
// change of key file, client or refresh token is seen (and lifts the
// site's Google pause) without a secret in the database.
func (c Credentials) Fingerprint() string {
	if c == (Credentials{}) {
		return ""
	}
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(append([]byte("cleanads google credentials\n"), b...))
	return hex.EncodeToString(sum[:8])
}

// Tokens keeps one cached, refreshing token source per credential, shared
// by every worker: a token is fetched once and refreshed once before it
// expires, however many sends use it. It is safe for concurrent use.
type Tokens struct {
	http *http.Client
	mu   sync.Mutex
	m    map[[32]byte]oauth2.TokenSource
}

// NewTokens returns a Tokens whose token requests go through hc (nil: the
// default client).
func NewTokens(hc *http.Client) *Tokens {
	return &Tokens{http: hc, m: map[[32]byte]oauth2.TokenSource{}}
}

// Source returns the token source of c, made on first use.
func (t *Tokens) Source(c Credentials) (oauth2.TokenSource, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256(b)
	t.mu.Lock()
	defer t.mu.Unlock()
	if ts, ok := t.m[key]; ok {
		return ts, nil
	}
	if err := c.Validate(); err != nil {
		return nil, &AuthError{Err: err}
	}
	// The source refreshes with this context long after the call that
	// made it: it must not be a request's.
	ctx := context.Background()
	if t.http != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, t.http)
	}
	var fresh func() oauth2.TokenSource
	if c.ServiceAccountKey != "" {
		conf, err := gauth.JWTConfigFromJSON([]byte(c.ServiceAccountKey), Scope)
		if err != nil {
			return nil, &AuthError{Err: fmt.Errorf("service account key: %v", err)}
		}
		fresh = func() oauth2.TokenSource { return conf.TokenSource(ctx) }
	} else {
		ep := gauth.Endpoint
		if c.TokenURL != "" {
			ep.TokenURL = c.TokenURL
		}
		conf := &oauth2.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, Endpoint: ep, Scopes: []string{Scope}}
		fresh = func() oauth2.TokenSource { return conf.TokenSource(ctx, &oauth2.Token{RefreshToken: c.RefreshToken}) }
	}
	ts := &resettable{fresh: fresh, ts: fresh()}
	t.m[key] = ts
	return ts, nil
}

// resettable is a cached token source that can drop its token: an access
// token Google answers UNAUTHENTICATED to (expired early, revoked before
// its time) is not used again; the client fetches a new one from the
// grant and tries once more (see Client.do).
type resettable struct {
	fresh func() oauth2.TokenSource
	mu    sync.Mutex
	ts    oauth2.TokenSource
}

// Token returns the cached token, fetching one when there is none or it
// has expired. The lock is held while fetching, as oauth2's own cache
// does: the workers of one credential wait for one fetch.
func (r *resettable) Token() (*oauth2.Token, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ts.Token()
}

// Invalidate drops the cached token when it is still bad, the one Google
// refused. When another worker has already replaced it, the new one is
// kept: eight workers refused at once make one new grant, not eight.
func (r *resettable) Invalidate(bad string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if tok, err := r.ts.Token(); err == nil && tok.AccessToken != bad {
		return
	}
	r.ts = r.fresh()
}

// The keys of a site's Google secrets (Site.Secrets, by
// platform.SecretName("google", key)), as the admin UI sets them.
const (
	SecretClientID           = "client_id"
	SecretClientSecret       = "client_secret"
	SecretRefreshToken       = "refresh_token"
	SecretServiceAccountJSON = "service_account_json"
)

// SiteCredentials are the Google credentials kept in the site's own
// secrets (an OAuth client with its refresh token, or a service account
// key), with tokenURL as an OAuth client's token endpoint (empty:
// Google's); false when the site keeps none.
func SiteCredentials(site *model.Site, tokenURL string) (Credentials, bool) {
	get := func(key string) string { return strings.TrimSpace(platform.Secret(site, "google", key)) }
	c := Credentials{ServiceAccountKey: get(SecretServiceAccountJSON), ClientID: get(SecretClientID),
		ClientSecret: get(SecretClientSecret), RefreshToken: get(SecretRefreshToken)}
	if c == (Credentials{}) {
		return c, false
	}
	if c.ServiceAccountKey == "" {
		c.TokenURL = tokenURL
	}
	return c, true
}

// SiteSource returns the token source a site's Google requests use: made
// from the site's own secrets when it keeps any (a site set up in the
// admin UI), else fallback (the config's credentials for the site, which
// may be nil). Sources are cached per credential as Source's are. Missing
// or incomplete credentials are an *AuthError, which pauses the site's
// Google rows with words that say what to set.
func (t *Tokens) SiteSource(site *model.Site, tokenURL string, fallback oauth2.TokenSource) (oauth2.TokenSource, error) {
	if c, ok := SiteCredentials(site, tokenURL); ok {
		return t.Source(c)
	}
	if fallback == nil {
		return nil, &AuthError{Err: fmt.Errorf("site %s has no Google credentials: set an OAuth client and refresh token, or a service account key, in its Google Ads settings", site.ID)}
	}
	return fallback, nil
}
