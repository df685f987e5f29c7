// Package demo owns the website `cleanads demo` serves beside the server:
// a page that stands for an advertiser's own site, with a real contact form
// that posts to the site's own back end and loads t.js through the one-line
// install snippet only, as a real site would.
package demo

import (
	"embed"
	"html/template"
	"net"
	"net/http"
	"sort"
)

//go:embed page.html thanks.html
var files embed.FS

var pages = template.Must(template.ParseFS(files, "*.html"))

// Options say where the tracker is.
type Options struct {
	// TrackerPort is the CleanAds server's port on the same machine: the
	// page loads t.js from the host it was itself opened on (127.0.0.1 or
	// localhost) at this port, so that the tracker and the page are the
	// same site, as t.example.com and www.example.com are, and the
	// tracker's first-party cookies are kept.
	TrackerPort string
	// SiteID is the demo site's id in the snippet.
	SiteID string
	// AdminURL is where the inbox is, for the page's hints.
	AdminURL string
}

// pageData fills the templates.
type pageData struct {
	Tracker, SiteID, Snippet, AdminURL string
	// Fields are the names of the fields the site's own back end got.
	Fields []string
}

// Handler serves the demo website: the page with the form at /, the
// site's own form handler at POST /contact (it shows the fields it got,
// and takes nothing else), and a thank-you page.
func Handler(o Options) http.Handler {
	mux := http.NewServeMux()
	data := func(r *http.Request) pageData {
		host := r.Host
		if h, _, err := net.SplitHostPort(r.Host); err == nil {
			host = h
		}
		if host != "localhost" {
			host = "127.0.0.1"
		}
		tracker := "http://" + net.JoinHostPort(host, o.TrackerPort)
		return pageData{Tracker: tracker, SiteID: o.SiteID, AdminURL: o.AdminURL,
			Snippet: `<script src="` + tracker + `/t.js" data-site="` + o.SiteID + `" async></script>`}
	}
	render := func(w http.ResponseWriter, name string, d pageData) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := pages.ExecuteTemplate(w, name, d); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { render(w, "page.html", data(r)) })
	mux.HandleFunc("POST /contact", func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		d := data(r)
		for k := range r.PostForm {
			d.Fields = append(d.Fields, k)
		}
		sort.Strings(d.Fields)
		render(w, "thanks.html", d)
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return mux
}
