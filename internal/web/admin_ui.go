package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/store"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static/admin.css static/admin.js
var staticFiles embed.FS

// adminUI is the parsed admin templates, one set per language, and the
// static files with their version hashes.
type adminUI struct {
	pages   map[string]map[string]*template.Template // lang -> page -> template
	static  map[string][]byte
	version map[string]string
}

// adminPages are the page templates; each is parsed with layout.html.
var adminPages = []string{"login", "inbox", "import", "lead", "deliveries", "sites", "site", "dashboard", "report", "notify", "readiness", "people", "password", "error"}

func mustAdminUI() *adminUI {
	ui, err := newAdminUI()
	if err != nil {
		panic(err)
	}
	return ui
}

func newAdminUI() (*adminUI, error) {
	ui := &adminUI{pages: map[string]map[string]*template.Template{}, static: map[string][]byte{}, version: map[string]string{}}
	err := fs.WalkDir(staticFiles, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFiles.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ui.static[path.Base(p)] = b
		ui.version[path.Base(p)] = hex.EncodeToString(sum[:6])
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: static files: %w", err)
	}
	for _, lang := range langs {
		base, err := template.New("layout.html").Funcs(ui.funcs(lang)).ParseFS(templateFiles, "templates/layout.html")
		if err != nil {
			return nil, fmt.Errorf("web: templates: %w", err)
		}
		ui.pages[lang] = map[string]*template.Template{}
		for _, p := range adminPages {
			t, err := template.Must(base.Clone()).ParseFS(templateFiles, "templates/"+p+".html")
			if err != nil {
				return nil, fmt.Errorf("web: template %s: %w", p, err)
			}
			ui.pages[lang][p] = t
		}
	}
	return ui, nil
}

func (ui *adminUI) funcs(lang string) template.FuncMap {
	return template.FuncMap{
		"t": func(key string, args ...any) string { return tr(lang, key, args...) },
		// count is a delivery count, "10000+" when the store stopped
		// counting (store.CountCap).
		"count": func(n int) string {
			if n > store.CountCap {
				return strconv.Itoa(store.CountCap) + "+"
			}
			return strconv.Itoa(n)
		},
		"static": func(name string) (string, error) {
			v, ok := ui.version[name]
			if !ok {
				return "", fmt.Errorf("no static file %q", name)
			}
			return "/admin/static/" + name + "?v=" + v, nil
		},
		"lower": strings.ToLower,
		"stage": func(name string) string { return stageName(lang, name) },
		"add":   func(a, b int) int { return a + b },
		"pct": func(n, of int) string {
			if of == 0 {
				return "–"
			}
			return fmt.Sprintf("%d%%", (n*100+of/2)/of)
		},
		"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"mask":     mask,
		"modeNote": func(mode string) string { return modeNote(lang, mode) },
		"field": func(name, label, value string, problems map[string]string, help string) formField {
			return formField{Name: name, Label: label, Value: value, Problem: problems[name], Help: help}
		},
	}
}

// formField is one labelled input of a form, with its help and its problem.
type formField struct {
	Name, Label, Value, Problem, Help string
}

// render writes page in the request's language; a failure is logged and
// answered with a plain 500, since the page cannot be drawn.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	lang := p.Lang
	if lang == "" {
		lang = langOf(r, nil)
		p.Lang = lang
	}
	var buf bytes.Buffer
	if err := s.admin.pages[lang][name].ExecuteTemplate(&buf, "layout.html", p); err != nil {
		s.log.ErrorContext(r.Context(), "render", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Language", lang)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// staticFile serves the admin's CSS and JavaScript; URLs carry a content
// hash, so they can be cached for long.
func (s *Server) staticFile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, ok := s.admin.static[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch path.Ext(name) {
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case ".svg":
		w.Header().Set("Content-Type", "image/svg+xml")
	}
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(b)
}

// AdminPages lists the admin page templates, for tests that render each.
func AdminPages() []string { return append([]string(nil), adminPages...) }
