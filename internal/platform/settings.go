package platform

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cleanads/cleanads/internal/model"
)

// Decode reads the site's settings document of the named platform into v;
// it reports false when the site has none.
func Decode(site *model.Site, name string, v any) (bool, error) {
	raw, ok := site.Settings.Platforms[name]
	if !ok || len(raw) == 0 || string(raw) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("%s settings: %w", name, err)
	}
	return true, nil
}

// Secret returns the site's secret key of the named platform, in clear.
func Secret(site *model.Site, name, key string) string {
	return site.Secrets[SecretName(name, key)]
}

// SecretName is the name a platform's secret is stored under.
func SecretName(platform, key string) string { return platform + "." + key }

// ParseStages reads a FieldStages value: one "stage = event" per line
// (blank lines and lines starting with # skipped). Stage names are
// lower-cased, as stages are recorded.
func ParseStages(text string) (map[string]string, error) {
	out := map[string]string{}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		stage, event, ok := strings.Cut(line, "=")
		stage, event = strings.ToLower(strings.TrimSpace(stage)), strings.TrimSpace(event)
		if !ok || stage == "" || event == "" {
			return nil, fmt.Errorf("line %d: write it as stage = event, e.g. won = CompletePayment", n+1)
		}
		out[stage] = event
	}
	return out, nil
}

// FormatStages writes stages as ParseStages reads them, sorted by stage.
func FormatStages(stages map[string]string) string {
	keys := make([]string, 0, len(stages))
	for k := range stages {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %s\n", k, stages[k])
	}
	return b.String()
}
