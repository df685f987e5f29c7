package hubspot_test

import (
	"encoding/base64"
	"testing"

	"github.com/cleanads/cleanads/internal/hubspot"
	"github.com/cleanads/cleanads/internal/hubspot/hubspottest"
)

// TestSignKnownAnswer: the v3 signature of a fixed request, computed apart
// with openssl over the string HubSpot documents (method, the URI with
// %3A decoded, body, timestamp):
//
//	printf '%s' 'POSThttps://ads.example.com/v1/webhooks/hubspot/dent?x=a:b[{"eventId":1}]1765000000000' |
//	  openssl dgst -sha256 -hmac 'secret-1' -binary | base64
func TestSignKnownAnswer(t *testing.T) {
	const want = "yF66cN9RuVrkIufKjkGod/LBoH+2an/0XSJgpEzyNy8="
	uri, body, ts := "https://ads.example.com/v1/webhooks/hubspot/dent?x=a%3Ab", []byte(`[{"eventId":1}]`), "1765000000000"
	if got := base64.StdEncoding.EncodeToString(hubspot.Sign("secret-1", "POST", uri, body, ts)); got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
	if got := hubspottest.Signature("secret-1", uri, body, ts); got != want {
		t.Errorf("the stand-in signs %s, want %s", got, want)
	}
}
