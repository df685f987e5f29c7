package web

import (
	"html/template"
	"net/http"
)

// homePage is what the tracker's host shows at its root: someone who opens
// it (an owner checking the address of t.js, a curious visitor) learns what
// the host is and where the admin UI is, not "404 page not found".
var homePage = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>CleanAds</title></head>
<body>
<h1>CleanAds</h1>
<p>This host runs CleanAds for the sites it serves: it receives their contact forms, judges each lead
(real, to check, junk) and tells their advertising platforms about the real ones.</p>
<p>Bu sunucu, hizmet verdiği sitelerin iletişim formlarını alır, her talebi değerlendirir ve yalnızca gerçek
olanları reklam platformlarına bildirir.</p>
{{if .}}<p><a href="/admin/">Admin / Yönetim paneli</a></p>{{end}}
</body>
</html>
`))

// home answers the root of the host with a short page saying what it is.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=300")
	if err := homePage.Execute(w, s.auth != nil); err != nil {
		s.log.ErrorContext(r.Context(), "render home", "err", err)
	}
}
