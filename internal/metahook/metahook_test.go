package metahook_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/metahook"
	"github.com/cleanads/cleanads/internal/source"
)

func status(err error) int {
	var se *source.StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

func TestHandshake(t *testing.T) {
	for _, c := range []struct {
		query, token string
		want         int
	}{
		{"hub.mode=subscribe&hub.verify_token=tok&hub.challenge=42", "tok", 200},
		{"hub.mode=subscribe&hub.verify_token=bad&hub.challenge=42", "tok", 403},
		{"hub.mode=unsubscribe&hub.verify_token=tok&hub.challenge=42", "tok", 403},
		{"hub.mode=subscribe&hub.verify_token=&hub.challenge=42", "", 403},
	} {
		rec := httptest.NewRecorder()
		err := metahook.Handshake(rec, httptest.NewRequest("GET", "/?"+c.query, nil), c.token)
		got := rec.Code
		if err != nil {
			got = status(err)
		}
		if got != c.want || c.want == 200 && rec.Body.String() != "42" || c.want != 200 && rec.Body.Len() > 0 {
			t.Errorf("%s: %d %q %v", c.query, got, rec.Body, err)
		}
	}
}

func TestSignedBody(t *testing.T) {
	const body, secret = `{"object":"page"}`, "app-secret"
	for _, c := range []struct {
		sig  string
		want int
	}{
		{metahook.Sign([]byte(body), secret), 0},
		{"", http.StatusUnauthorized},
		{metahook.Sign([]byte(body), "other"), http.StatusForbidden},
		{metahook.Sign([]byte(body+" "), secret), http.StatusForbidden},
		{strings.TrimPrefix(metahook.Sign([]byte(body), secret), "sha256="), http.StatusForbidden},
		{"sha256=zz", http.StatusForbidden},
	} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		if c.sig != "" {
			r.Header.Set("X-Hub-Signature-256", c.sig)
		}
		got, err := metahook.SignedBody(r, secret)
		if status(err) != c.want || err == nil && string(got) != body {
			t.Errorf("%q: %q %v", c.sig, got, err)
		}
	}
}

// TestSignKnownAnswer: Sign is Meta's X-Hub-Signature-256, checked against
// an answer computed apart from this code (openssl dgst -sha256 -hmac), so
// the tests that sign their posts with it sign as Meta does.
func TestSignKnownAnswer(t *testing.T) {
	const want = "sha256=ae958d6f00b134dd32b95a9a76bedaaeb068c0949769358355023f7d1a0c580b"
	if got := metahook.Sign([]byte(`{"object":"page"}`), "app-secret"); got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}
