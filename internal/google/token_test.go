package google_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"

	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/google/googletest"
	"github.com/cleanads/cleanads/internal/model"
)

// An access token Google ends before its expires_in, while the grant
// behind it holds, is replaced from the grant and the call made once
// more: nothing pauses.
func TestEarlyExpiredTokenIsRenewed(t *testing.T) {
	for name, creds := range map[string]func(*googletest.Server) google.Credentials{
		"refresh token": oauthCreds,
		"service account": func(g *googletest.Server) google.Credentials {
			return google.Credentials{ServiceAccountKey: g.ServiceAccountKey()}
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := googletest.New(t)
			ts, err := google.NewTokens(nil).Source(creds(g))
			if err != nil {
				t.Fatal(err)
			}
			c := google.NewClient(google.ClientOptions{BaseURL: g.URL})
			ctx := context.Background()
			out, _, err := c.IngestAll(ctx, ts, target, []google.Event{event(0, "111")})
			if err != nil || !out[0].Accepted {
				t.Fatalf("first: %+v %v", out, err)
			}
			g.ExpireTokens()
			out, _, err = c.IngestAll(ctx, ts, target, []google.Event{event(1, "111")})
			if err != nil || !out[0].Accepted {
				t.Fatalf("after early expiry: %+v %v (class %v)", out, err, google.Classify(err))
			}
			if g.Unauthenticated() != 1 || g.Grants() != 2 || len(g.Events()) != 2 {
				t.Errorf("%d refused, %d grants, %d events; want 1, 2, 2", g.Unauthenticated(), g.Grants(), len(g.Events()))
			}
			// The status call renews the same way.
			g.ExpireTokens()
			if _, err := c.Status(ctx, ts, out[0].RequestID); err != nil {
				t.Fatalf("status after early expiry: %v", err)
			}
			if g.Grants() != 3 {
				t.Errorf("%d grants, want 3", g.Grants())
			}
		})
	}
}

// Eight workers refused at once with the same ended token make one new
// grant between them.
func TestEarlyExpiryOneRenewalForAllWorkers(t *testing.T) {
	g := googletest.New(t)
	tokens := google.NewTokens(nil)
	c := google.NewClient(google.ClientOptions{BaseURL: g.URL})
	ts, _ := tokens.Source(oauthCreds(g))
	if _, err := ts.Token(); err != nil {
		t.Fatal(err)
	}
	g.ExpireTokens()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := c.IngestAll(context.Background(), ts, target, []google.Event{event(i, "111")}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if g.Grants() != 2 || len(g.Events()) != 8 {
		t.Errorf("%d grants, %d events; want 2, 8", g.Grants(), len(g.Events()))
	}
}

// A refused grant pauses: the token is dropped, the token endpoint says
// invalid_grant, and the words ask the owner to authorise again.
func TestRefusedGrantPausesAfterRenewal(t *testing.T) {
	g := googletest.New(t)
	ts, _ := google.NewTokens(nil).Source(oauthCreds(g))
	c := google.NewClient(google.ClientOptions{BaseURL: g.URL})
	if _, _, err := c.IngestAll(context.Background(), ts, target, []google.Event{event(0, "111")}); err != nil {
		t.Fatal(err)
	}
	g.RevokeGrant()
	_, _, err := c.IngestAll(context.Background(), ts, target, []google.Event{event(1, "111")})
	var ae *google.AuthError
	if !errors.As(err, &ae) || !ae.Grant || google.Classify(err) != google.ClassPause ||
		!strings.Contains(google.PauseReason(err), "Authorise CleanAds again") {
		t.Fatalf("revoked grant: %v", err)
	}
	if g.Unauthenticated() != 1 {
		t.Errorf("%d refused calls, want 1", g.Unauthenticated())
	}
	// Once the owner authorises again, the same source works.
	g.RestoreGrant()
	if _, _, err := c.IngestAll(context.Background(), ts, target, []google.Event{event(2, "111")}); err != nil {
		t.Errorf("after the grant is restored: %v", err)
	}
}

// A new token refused again (the API not enabled for the project) pauses
// after the one retry, and the next call does not reuse it.
func TestNewTokenRefusedAgainPauses(t *testing.T) {
	g := googletest.New(t)
	ts, _ := google.NewTokens(nil).Source(oauthCreds(g))
	c := google.NewClient(google.ClientOptions{BaseURL: g.URL})
	g.RefuseTokens(true)
	_, _, err := c.IngestAll(context.Background(), ts, target, []google.Event{event(0, "111")})
	if google.Classify(err) != google.ClassPause || !strings.Contains(google.PauseReason(err), "Data Manager API is enabled") {
		t.Fatalf("refused twice: %v / %s", err, google.PauseReason(err))
	}
	if g.Unauthenticated() != 2 || g.Grants() != 2 || g.Requests() != 2 {
		t.Errorf("%d refused, %d grants, %d requests; want 2, 2, 2", g.Unauthenticated(), g.Grants(), g.Requests())
	}
	g.RefuseTokens(false)
	if _, _, err := c.IngestAll(context.Background(), ts, target, []google.Event{event(1, "111")}); err != nil {
		t.Fatalf("after the API takes tokens again: %v", err)
	}
	if g.Grants() != 3 {
		t.Errorf("%d grants: the twice refused token was used again", g.Grants())
	}
}

// A source that cannot drop its token gets no second try: it would hand
// out the same token.
func TestStaticTokenNotRetried(t *testing.T) {
	g := googletest.New(t)
	c := google.NewClient(google.ClientOptions{BaseURL: g.URL})
	ts := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ya29.not-issued"})
	_, _, err := c.IngestAll(context.Background(), ts, target, []google.Event{event(0, "111")})
	if google.Classify(err) != google.ClassPause || g.Requests() != 1 {
		t.Fatalf("static token: %v, %d requests", err, g.Requests())
	}
}

// A site's own Google secrets (set in the admin UI) win over the config's;
// a site without any uses the config's; incomplete ones pause with words.
func TestSiteSource(t *testing.T) {
	g := googletest.New(t)
	c := google.NewClient(google.ClientOptions{BaseURL: g.URL})
	tokens := google.NewTokens(nil)
	send := func(ts oauth2.TokenSource) error {
		_, _, err := c.IngestAll(context.Background(), ts, target, []google.Event{event(0, "111")})
		return err
	}
	refused := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ya29.config-fallback"})
	for _, tc := range []struct {
		name    string
		secrets map[string]string
		ok      bool
	}{
		{"oauth client", map[string]string{"google.client_id": googletest.ClientID, "google.client_secret": googletest.ClientSecret,
			"google.refresh_token": googletest.RefreshToken}, true},
		{"service account", map[string]string{"google.service_account_json": g.ServiceAccountKey()}, true},
		{"none: the config's", nil, false},
		{"another platform's only", map[string]string{"tiktok.access_token": "t"}, false},
	} {
		site := &model.Site{ID: "dent", Secrets: tc.secrets}
		ts, err := tokens.SiteSource(site, g.TokenURL(), refused)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := send(ts); (err == nil) != tc.ok {
			t.Errorf("%s: %v (the fallback is refused by the stand-in)", tc.name, err)
		}
	}
	_, err := tokens.SiteSource(&model.Site{ID: "dent", Secrets: map[string]string{"google.client_id": googletest.ClientID}}, g.TokenURL(), refused)
	if google.Classify(err) != google.ClassPause || !strings.Contains(err.Error(), "client_secret") {
		t.Errorf("incomplete client: %v", err)
	}
	_, err = tokens.SiteSource(&model.Site{ID: "dent"}, g.TokenURL(), nil)
	if google.Classify(err) != google.ClassPause || !strings.Contains(google.PauseReason(err), "Google Ads settings") {
		t.Errorf("no credentials at all: %v / %s", err, google.PauseReason(err))
	}
}
