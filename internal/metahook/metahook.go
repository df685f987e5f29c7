// Package metahook owns what Meta's webhooks share, whichever source they
// feed (WhatsApp Cloud API, a Page's Lead Ads): the subscription handshake
// (GET with hub.mode, hub.verify_token and hub.challenge) and the
// X-Hub-Signature-256 check of a post, over the body as received, with the
// Meta app's secret.
package metahook

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"io"
	"net/http"
	"strings"

	"github.com/cleanads/cleanads/internal/source"
)

// Handshake answers the subscription handshake of a Meta webhook: the
// challenge, as plain text, when the mode is subscribe and the verify
// token is token (compared in constant time; an empty token verifies
// nothing). Anything else is refused with 403 and nothing written.
func Handshake(w http.ResponseWriter, r *http.Request, token string) error {
	q := r.URL.Query()
	if token == "" || q.Get("hub.mode") != "subscribe" ||
		subtle.ConstantTimeCompare([]byte(q.Get("hub.verify_token")), []byte(token)) != 1 {
		return source.Error(http.StatusForbidden, "verification failed: wrong hub.mode or hub.verify_token")
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, q.Get("hub.challenge"))
	return nil
}

// SignedBody reads a Meta webhook's body and checks its X-Hub-Signature-256
// with secret over the bytes as received, before anything is read from
// them: 401 when the header is missing, 403 when it does not match.
func SignedBody(r *http.Request, secret string) ([]byte, error) {
	body, err := source.ReadBody(r)
	if err != nil {
		return nil, err
	}
	sig := r.Header.Get("X-Hub-Signature-256")
	if sig == "" {
		return nil, source.Error(http.StatusUnauthorized, "unsigned: X-Hub-Signature-256 is missing")
	}
	if !Valid(body, sig, secret) {
		return nil, source.Error(http.StatusForbidden, "X-Hub-Signature-256 does not match the body")
	}
	return body, nil
}

// Valid reports whether header is Meta's "sha256=<hex>" HMAC-SHA256 of
// body with secret, compared in constant time.
func Valid(body []byte, header, secret string) bool {
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(header), "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// Sign returns the X-Hub-Signature-256 Meta sends with body: for tests and
// local stand-ins.
func Sign(body []byte, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
