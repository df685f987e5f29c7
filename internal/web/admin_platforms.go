package web

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/source"
)

// handMade are the platforms whose settings have a section of their own on
// the site's page (Meta's form; the Lead Ads fetch, set in the config
// file): every other platform's section is rendered from its Fields.
var handMade = map[string]bool{model.DestinationMeta: true, model.DestinationMetaLeadgen: true}

// platformSection is one platform's settings on a site's page.
type platformSection struct {
	Name, Label string
	// On: the site sends to the platform, or receives from the lead
	// source (its settings are complete).
	On bool
	// Source: a lead source (a CRM) rather than an ad platform; its words
	// say "receives from" and its test checks the connection.
	Source bool
	// Inbound are the addresses the source posts to for this site, to be
	// pasted into the CRM's webhook settings.
	Inbound []string
	// Paused is why the platform's deliveries of the site wait, if they do.
	Paused string
	Fields []platformField
	// Problems is set when a save was refused: nothing was saved.
	Problems bool
	Test     *platformTest
}

// platformField is one of a platform's settings as its form shows it.
type platformField struct {
	// Input is the form field's name, "<platform>.<key>"; ID is the
	// element's id.
	Input, ID     string
	Label, Help   string
	Kind          string // text, secret, choice, stages
	Value         string // never a secret's
	Choices       []string
	Required, Set bool // Set: a secret is stored
	Problem       string
}

// platformTest is the outcome of a platform's "send a test event".
type platformTest struct {
	OK                          bool
	Account, Code, Event, Reply string
	Error                       string
}

// platformEdit is a platform's form as typed, brought back with its
// problems when the save was refused, or the test's outcome.
type platformEdit struct {
	Name     string
	Values   map[string]string
	Problems map[string]string
	Test     *platformTest
}

var fieldKinds = map[platform.FieldKind]string{platform.FieldText: "text", platform.FieldSecret: "secret",
	platform.FieldChoice: "choice", platform.FieldStages: "stages"}

// configurables are the platforms and lead sources whose settings the
// site's page renders from their Fields, in the order the program lists
// them: platforms first.
func (s *Server) configurables() []platform.Configurable {
	var out []platform.Configurable
	for _, p := range s.platforms {
		if !handMade[p.Name()] && len(p.Fields()) > 0 {
			out = append(out, p)
		}
	}
	for _, src := range s.sources {
		if c, ok := src.(platform.Configurable); ok && len(c.Fields()) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// platform returns the generic-section platform or source named name, or
// nil.
func (s *Server) platform(name string) platform.Configurable {
	for _, c := range s.configurables() {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

// platformSections are the site's sections of the platforms without a
// hand-made one, in the order the program lists them, in lang.
func (s *Server) platformSections(r *http.Request, lang string, site *model.Site, edit *platformEdit) ([]platformSection, error) {
	var out []platformSection
	list := s.configurables()
	if len(list) == 0 {
		return nil, nil
	}
	pauses, err := s.db.DestinationPauses(r.Context(), site.ID)
	if err != nil {
		return nil, err
	}
	for _, p := range list {
		sec := platformSection{Name: p.Name(), Label: p.Label(), On: p.On(site)}
		if src, ok := p.(source.Source); ok {
			sec.Source, sec.Inbound = true, inboundURLs(s.baseURL(r), src, site.ID)
		}
		for _, h := range pauses {
			if h.Share.Destination == p.Name() {
				sec.Paused = h.Reason
			}
		}
		values := platformValues(site, p)
		var problems map[string]string
		if edit != nil && edit.Name == p.Name() {
			if edit.Values != nil {
				values, problems, sec.Problems = edit.Values, edit.Problems, len(edit.Problems) > 0
			}
			sec.Test = edit.Test
		}
		for _, f := range p.Fields() {
			pf := platformField{Input: p.Name() + "." + f.Key, ID: "pf-" + p.Name() + "-" + f.Key,
				Label: tr(lang, f.Label), Kind: fieldKinds[f.Kind], Choices: f.Choices, Required: f.Required,
				Problem: problems[f.Key]}
			if f.Help != "" {
				pf.Help = tr(lang, f.Help)
			}
			if f.Kind == platform.FieldSecret {
				pf.Set = platform.Secret(site, p.Name(), f.Key) != ""
			} else {
				pf.Value = values[f.Key]
			}
			sec.Fields = append(sec.Fields, pf)
		}
		out = append(out, sec)
	}
	return out, nil
}

// platformValues are the site's settings of p as its form shows them:
// text and choices as they are, stages as "stage = event" lines.
func platformValues(site *model.Site, p platform.Configurable) map[string]string {
	out := map[string]string{}
	var doc map[string]json.RawMessage
	if ok, err := platform.Decode(site, p.Name(), &doc); !ok || err != nil {
		return out
	}
	for _, f := range p.Fields() {
		raw, ok := doc[f.Key]
		if !ok {
			continue
		}
		switch f.Kind {
		case platform.FieldStages:
			var st map[string]string
			if json.Unmarshal(raw, &st) == nil {
				out[f.Key] = platform.FormatStages(st)
			}
		case platform.FieldText, platform.FieldChoice:
			var v string
			if json.Unmarshal(raw, &v) == nil {
				out[f.Key] = v
			}
		}
	}
	return out
}

// adminPlatformSave saves one platform's settings and secrets of a site
// edited here. Each problem is shown next to its field and nothing is
// saved while any is left. A secret left empty stays as it was; its
// "remove" box clears it. All fields left empty turn the platform off.
func (s *Server) adminPlatformSave(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "sites", "Site")
	site, pl, ok := s.pathPlatform(w, r)
	if !ok {
		return
	}
	if site.Pinned {
		s.adminFail(w, r, errStatus(http.StatusConflict, tr(p.Lang, "This site is set in the config file; change it there.")))
		return
	}
	next, values, problems, used := platformForm(r, p.Lang, site, pl)
	// A platform left empty is off: nothing of it to check.
	if len(problems) == 0 && used {
		for _, fe := range pl.Validate(next) {
			if _, dup := problems[fe.Key]; !dup {
				problems[fe.Key] = tr(p.Lang, fe.Message)
			}
		}
	}
	if len(problems) > 0 {
		// A problem with a key no field has is still shown, on the first
		// field: nothing may be refused without a word.
		keys := map[string]bool{}
		for _, f := range pl.Fields() {
			keys[f.Key] = true
		}
		first := pl.Fields()[0].Key
		for _, k := range slices.Sorted(maps.Keys(problems)) {
			if !keys[k] {
				problems[first] = strings.TrimSpace(problems[first] + " " + problems[k])
			}
		}
		p.Problem = tr(p.Lang, "Nothing was saved. Please correct the marked fields.")
		s.renderSitePlatform(w, r, p, http.StatusBadRequest, site, &platformEdit{Name: pl.Name(), Values: values, Problems: problems})
		return
	}
	if err := s.app.SiteSave(r.Context(), next); err != nil {
		if errors.Is(err, app.ErrPinned) {
			err = errStatus(http.StatusConflict, tr(p.Lang, "This site is set in the config file; change it there."))
		}
		s.adminFail(w, r, err)
		return
	}
	s.sites.forget(site.ID)
	s.log.InfoContext(r.Context(), "platform settings saved", "site", string(site.ID), "platform", pl.Name(),
		"on", pl.On(next), "user", string(adminFrom(r.Context()).user.ID))
	http.Redirect(w, r, "/admin/sites/"+string(site.ID)+"?saved="+pl.Name()+"#platform-"+pl.Name(), http.StatusSeeOther)
}

// platformForm reads a platform's form into a copy of the site: its
// settings document (keys no field names are kept) and the secrets given
// or cleared. It returns the values as typed, the problems the form
// alone shows (a choice not offered, a stage line, a required field left
// empty while others are set), in lang, and whether any setting or secret
// of the platform is left (false: the platform is off).
func platformForm(r *http.Request, lang string, site *model.Site, pl platform.Configurable) (next *model.Site, values, problems map[string]string, used bool) {
	name := pl.Name()
	cp := *site
	next = &cp
	next.Settings.Platforms = maps.Clone(site.Settings.Platforms)
	if next.Settings.Platforms == nil {
		next.Settings.Platforms = map[string]json.RawMessage{}
	}
	// The secrets as they will be: Validate reads them, and the store
	// writes the changed ones ("" clears one; a secret the form leaves
	// empty keeps its stored value).
	secrets := maps.Clone(site.Secrets)
	if secrets == nil {
		secrets = map[string]string{}
	}
	doc := map[string]json.RawMessage{}
	if raw := site.Settings.Platforms[name]; len(raw) > 0 {
		_ = json.Unmarshal(raw, &doc) // unreadable: replaced whole
	}
	values, problems = map[string]string{}, map[string]string{}
	for _, f := range pl.Fields() {
		in := r.PostFormValue(name + "." + f.Key)
		switch f.Kind {
		case platform.FieldSecret:
			sn := platform.SecretName(name, f.Key)
			switch v := strings.TrimSpace(in); {
			case v != "":
				secrets[sn] = v
			case r.PostFormValue(name+"."+f.Key+".clear") != "":
				secrets[sn] = ""
			}
			used = used || secrets[sn] != ""
			continue
		case platform.FieldStages:
			values[f.Key] = in
			st, err := platform.ParseStages(in)
			switch {
			case err != nil:
				problems[f.Key] = tr(lang, "Write one stage = event per line, e.g. won = CompletePayment (%s).", err.Error())
			case len(st) == 0:
				delete(doc, f.Key)
			default:
				b, _ := json.Marshal(st)
				doc[f.Key] = b
				used = true
			}
			continue
		}
		v := strings.TrimSpace(in)
		values[f.Key] = v
		if f.Kind == platform.FieldChoice && v != "" && !slices.Contains(f.Choices, v) {
			problems[f.Key] = tr(lang, "Pick one of: %s.", strings.Join(f.Choices, ", "))
		}
		if v == "" {
			delete(doc, f.Key)
			continue
		}
		b, _ := json.Marshal(v)
		doc[f.Key] = b
		used = true
	}
	// A platform left empty is off, and asks for nothing; one in use
	// needs every required field.
	if used {
		for _, f := range pl.Fields() {
			_, bad := problems[f.Key]
			if !f.Required || bad {
				continue
			}
			set := values[f.Key] != ""
			if f.Kind == platform.FieldSecret {
				set = secrets[platform.SecretName(name, f.Key)] != ""
			}
			if !set {
				problems[f.Key] = tr(lang, "Needed to send to %s.", pl.Label())
				if isSource(pl) {
					problems[f.Key] = tr(lang, "Needed to receive from %s.", pl.Label())
				}
			}
		}
	}
	if len(doc) == 0 {
		delete(next.Settings.Platforms, name)
	} else {
		b, _ := json.Marshal(doc)
		next.Settings.Platforms[name] = b
	}
	next.Secrets = secrets
	return next, values, problems, used
}

// adminPlatformTest sends one made-up lead event of the site to the
// platform at once, marked as a test as the platform allows, and shows
// what was sent and the platform's answer in its section.
func (s *Server) adminPlatformTest(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "sites", "Site")
	ctx := r.Context()
	site, pl, ok := s.pathPlatform(w, r)
	if !ok {
		return
	}
	status := http.StatusOK
	out := &platformTest{}
	// A lead source's test checks the connection: its words say so.
	words := [4]string{"No test event was sent: set the %s settings first.", "%s received the test event.",
		"%s refused the test event.", "The test event could not reach %s; try again."}
	if isSource(pl) {
		words = [4]string{"Nothing was checked: set the %s settings first.", "%s answered: the connection works.",
			"%s refused the connection.", "%s could not be reached; try again."}
	}
	if !pl.On(site) {
		p.Problem = tr(p.Lang, words[0], pl.Label())
		s.renderSitePlatform(w, r, p, http.StatusBadRequest, site, &platformEdit{Name: pl.Name()})
		return
	}
	res, err := pl.SendTest(ctx, site)
	if err == nil {
		out.OK = true
		p.Notice = tr(p.Lang, words[1], pl.Label())
	} else {
		f := platform.Classify(err)
		out.Error = err.Error()
		p.Problem = tr(p.Lang, words[2], pl.Label())
		if f.Class == platform.Transient || f.Class == platform.Throttled {
			p.Problem = tr(p.Lang, words[3], pl.Label())
		}
		status = http.StatusBadGateway
	}
	if res != nil {
		out.Account, out.Code, out.Event, out.Reply = res.Account, res.Code, prettyJSON(res.Event), prettyJSON(res.Answer)
	}
	s.log.InfoContext(ctx, "platform test event from the admin", "site", string(site.ID), "platform", pl.Name(),
		"ok", err == nil, "user", string(adminFrom(ctx).user.ID))
	s.renderSitePlatform(w, r, p, status, site, &platformEdit{Name: pl.Name(), Test: out})
}

// renderSitePlatform shows the site's page with one platform's section as
// edit says.
func (s *Server) renderSitePlatform(w http.ResponseWriter, r *http.Request, p *page, status int, site *model.Site, edit *platformEdit) {
	s.renderSiteFull(w, r, p, status, site, formOf(site), "", nil, edit, nil)
}

// pathPlatform is the site and the platform a platform page's path names;
// false when either is not there (the page has answered).
func (s *Server) pathPlatform(w http.ResponseWriter, r *http.Request) (*model.Site, platform.Configurable, bool) {
	site, err := s.pathSite(r)
	if err != nil {
		s.adminFail(w, r, err)
		return nil, nil, false
	}
	pl := s.platform(r.PathValue("name"))
	if pl == nil {
		s.adminFail(w, r, model.ErrNotFound)
		return nil, nil, false
	}
	return site, pl, true
}

// inboundURLs are the addresses at base where src receives the site's
// posts: its routes whose path names the site.
func inboundURLs(base string, src source.Source, site model.SiteID) []string {
	var out []string
	for _, rt := range src.Routes() {
		path := rt.Pattern
		if _, p, ok := strings.Cut(path, " "); ok {
			path = p
		}
		if strings.Contains(path, "{site}") {
			out = append(out, base+strings.ReplaceAll(path, "{site}", string(site)))
		}
	}
	return out
}

// isSource tells whether c is a lead source rather than an ad platform.
func isSource(c platform.Configurable) bool {
	_, ok := c.(source.Source)
	return ok
}
