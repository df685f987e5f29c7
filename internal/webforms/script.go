package webforms

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"time"
)

// trackerJS is the newest tracker, t.v2.js, served at /t.js (short cache,
// so fixes reach sites within minutes) and at /t.v2.js (immutable, for
// subresource integrity). trackerV1 is the first one, still served at
// /t.v1.js for the sites that pin it. Once released, a version's bytes
// must not change: a new script is t.v3.js.
//
//go:embed static/t.v2.js
var trackerJS []byte

//go:embed static/t.v1.js
var trackerV1 []byte

// script is a static file with its gzipped twin and validators, made once.
type script struct {
	plain, gz           []byte
	etag, etagGz, cache string
}

func newScript(b []byte, cache string) *script {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	sum := sha256.Sum256(b)
	tag := hex.EncodeToString(sum[:8])
	return &script{plain: b, gz: buf.Bytes(), etag: `"` + tag + `"`, etagGz: `"` + tag + `-gz"`, cache: cache}
}

// ServeHTTP sends the script, gzipped when the browser takes it. Any origin
// may load it: SRI on a cross-origin script needs CORS.
func (sc *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Cache-Control", sc.cache)
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Add("Vary", "Accept-Encoding")
	body, tag := sc.plain, sc.etag
	if acceptsGzip(r) {
		body, tag = sc.gz, sc.etagGz
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", tag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// TrackerSRI is the subresource-integrity hash of /t.v2.js, as the docs
// and the Install box give it for the pinned snippet.
func TrackerSRI() string { return sri(trackerJS) }

// TrackerV1SRI is the hash of /t.v1.js, which sites pinned before v2.
func TrackerV1SRI() string { return sri(trackerV1) }

func sri(b []byte) string {
	sum := sha512.Sum384(b)
	return "sha384-" + base64.StdEncoding.EncodeToString(sum[:])
}
