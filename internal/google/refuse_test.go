package google_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/google"
)

// refuseWhen is an HTTP client that answers a plain INVALID_ARGUMENT, with
// no field violations, to every ingest whose body matches, and passes the
// rest on: a refusal Google gives without naming the event.
func refuseWhen(t *testing.T, match func(body string) bool) *http.Client {
	return &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil && strings.HasSuffix(r.URL.Path, "events:ingest") {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			if match(string(b)) {
				return &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
					Body: io.NopCloser(strings.NewReader(`{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"There was a problem with the request."}}`))}, nil
			}
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A credentials' fingerprint tells one from another, is stable, and gives
// none of their secrets away.
func TestCredentialsFingerprint(t *testing.T) {
	a := google.Credentials{ClientID: "id", ClientSecret: "secret-value", RefreshToken: "1//refresh-token"}
	b := a
	b.RefreshToken = "1//another-token"
	fa, fb := a.Fingerprint(), b.Fingerprint()
	if fa == "" || fa == fb || fa != a.Fingerprint() || len(fa) != 16 {
		t.Errorf("fingerprints %q %q", fa, fb)
	}
	for _, s := range []string{"secret", "refresh", "id"} {
		if strings.Contains(fa, s) {
			t.Errorf("fingerprint %q shows %q", fa, s)
		}
	}
	if (google.Credentials{}).Fingerprint() != "" {
		t.Error("no credentials have a fingerprint")
	}
}
