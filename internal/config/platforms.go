package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/platforms"
)

// sitePlatforms are the ad platforms a site's platforms: block may name:
// those without a block of their own here (Meta's and Google's have
// theirs), as the admin UI's sections show them.
func sitePlatforms() map[string]platform.Platform {
	out := map[string]platform.Platform{}
	for _, p := range platforms.All(platform.Deps{}, platforms.Clients{}) {
		if p.Name() != model.DestinationMeta && p.Name() != model.DestinationGoogle {
			out[p.Name()] = p
		}
	}
	return out
}

// validatePlatforms checks each site's platforms: block against the
// platform's own fields (a secret's value may come from <key>_file), reads
// it into the settings document and secrets the site is stored with, and
// has the platform validate them.
func (c *Config) validatePlatforms(errs *Problems) {
	known := sitePlatforms()
	for i := range c.Sites {
		s := &c.Sites[i]
		s.platformDocs, s.platformSecrets = nil, nil
		for _, name := range slices.Sorted(maps.Keys(s.Platforms)) {
			key := fmt.Sprintf("sites[%d].platforms.%s", i, name)
			p, ok := known[name]
			if !ok {
				errs.add(key, "no such platform here: use one of %s (Meta and Google have their own meta: and google: blocks)",
					strings.Join(slices.Sorted(maps.Keys(known)), ", "))
				continue
			}
			doc, secrets, ok := readPlatform(key, p, s.Platforms[name], errs)
			if !ok {
				continue
			}
			raw, _ := json.Marshal(doc)
			if s.platformDocs == nil {
				s.platformDocs, s.platformSecrets = map[string]json.RawMessage{}, map[string]string{}
			}
			s.platformDocs[name] = raw
			for k, v := range secrets {
				s.platformSecrets[platform.SecretName(name, k)] = v
			}
			site := s.SiteModel()
			for _, fe := range p.Validate(site) {
				errs.add(key+"."+fe.Key, "%s", fe.Message)
			}
		}
	}
}

// readPlatform reads one platform's block by its fields: text and choice
// values as they are, stages as "stage = event" lines, secrets from the
// value or <key>_file. It reports false when any field was wrong.
func readPlatform(key string, p platform.Platform, in map[string]string, errs *Problems) (map[string]any, map[string]string, bool) {
	fields := map[string]platform.Field{}
	for _, f := range p.Fields() {
		fields[f.Key] = f
	}
	ok := true
	doc, secrets := map[string]any{}, map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(in)) {
		v := in[k]
		name, fromFile := strings.CutSuffix(k, "_file")
		f, known := fields[name]
		if !known || (fromFile && f.Kind != platform.FieldSecret) {
			errs.add(key+"."+k, "not a %s setting: use %s", p.Label(), strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
			ok = false
			continue
		}
		if fromFile {
			if in[name] != "" {
				errs.add(key+"."+name, "set both the value and %s_file; keep one", name)
				ok = false
				continue
			}
			var value string
			readSecret(key+"."+name, &value, v, errs)
			v = value
		}
		switch f.Kind {
		case platform.FieldSecret:
			if v != "" {
				secrets[name] = v
			}
		case platform.FieldStages:
			st, err := platform.ParseStages(v)
			if err != nil {
				errs.add(key+"."+k, "%v", err)
				ok = false
				continue
			}
			doc[name] = st
		case platform.FieldChoice:
			if v != "" && !slices.Contains(f.Choices, v) {
				errs.add(key+"."+k, "want one of %s, got %q", strings.Join(f.Choices, ", "), v)
				ok = false
				continue
			}
			doc[name] = v
		default:
			doc[name] = strings.TrimSpace(v)
		}
	}
	return doc, secrets, ok
}

// maskPlatformSecrets hides the secrets of the sites' platforms: blocks in
// a dump.
func maskPlatformSecrets(sites []Site) {
	known := sitePlatforms()
	for i := range sites {
		s := &sites[i]
		if len(s.Platforms) == 0 {
			continue
		}
		masked := make(map[string]map[string]string, len(s.Platforms))
		for name, in := range s.Platforms {
			out := maps.Clone(in)
			if p, ok := known[name]; ok {
				for _, f := range p.Fields() {
					if f.Kind == platform.FieldSecret && out[f.Key] != "" {
						out[f.Key] = "********"
					}
				}
			}
			masked[name] = out
		}
		s.Platforms = masked
	}
}
