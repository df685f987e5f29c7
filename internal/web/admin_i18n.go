package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cleanads/cleanads/internal/model"
)

// langs are the admin UI's languages; the first is the default.
var langs = []string{"en", "tr"}

// tr returns key (English) in lang, formatted with args. A key without a
// translation shows in English; a test checks that every key has one.
func tr(lang, key string, args ...any) string {
	if lang == "tr" {
		if v, ok := turkish[key]; ok {
			key = v
		}
	}
	if len(args) > 0 {
		return fmt.Sprintf(key, args...)
	}
	return key
}

// langOf picks the page language: the user's setting, else the browser's
// most preferred language we speak, else English.
func langOf(r *http.Request, u *model.User) string {
	if u != nil && u.Lang != "" {
		return u.Lang
	}
	best, bestQ := "en", -1.0
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		base, _, _ := strings.Cut(strings.ToLower(tag), "-")
		for _, l := range langs {
			if base == l && q > bestQ {
				best, bestQ = l, q
			}
		}
	}
	return best
}
