package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

// Value rules of a stage in the stage editor.
const (
	stageRuleGiven = "given" // the value given when the stage is recorded, if any
	stageRuleFixed = "fixed" // a fixed value, unless one is given
)

// validStageName reports whether name may be a stage's name: a CRM's word,
// in any language, without the characters a URL, a delivery kind or a CSV
// would trip on; what `^[\p{L}\p{N}][\p{L}\p{N} _.-]{0,39}$` matches
// (TestValidStageNameIsThePattern). A loop, not that regexp: compiled, its
// forty copies of Unicode's letter and digit classes took 0.86 MB of heap
// for as long as the server ran, twice that in peak RSS.
func validStageName(name string) bool {
	n := 0
	for _, r := range name {
		n++
		switch {
		case n > 40:
			return false
		case unicode.IsLetter(r) || unicode.IsNumber(r):
		case n > 1 && (r == ' ' || r == '_' || r == '.' || r == '-'):
		default:
			return false
		}
	}
	return n > 0
}

// stageEditor is the stage editor of a site's page: its rows (as stored,
// or as typed when a save was refused) and an empty row to add one.
type stageEditor struct {
	Rows []stageRow
	New  stageRow
	// Count is how many rows the form posts, the new one included.
	Count int
	// Full is set when the site has model.MaxStages stages already.
	Full, Pinned, Edited bool
	Max                  int
	// Platforms are the platforms whose own section maps stages to their
	// events: the editor links to them.
	Platforms []stagePlatform
	// Others are stages only another platform maps, with the platform.
	Others []string
	// Events are Meta's standard events a stage is usually sent as,
	// offered as the event field's suggestions.
	Events []string
}

// metaStageEvents are the events the stage editor suggests: Meta's
// standard events that fit a lead's later steps, and the qualified one.
var metaStageEvents = []string{"QualifiedLead", "Schedule", "Contact", "SubmitApplication",
	"CompleteRegistration", "StartTrial", "Subscribe", "InitiateCheckout", "Purchase"}

// stageRow is one stage in the editor.
type stageRow struct {
	Index                              int
	Name, Event, Rule, Value, Currency string
	// Existing rows keep their name: a stage is removed and added, never
	// renamed, so the leads that reached it keep meaning the same.
	Existing, Remove bool
	Sends            []stageSend
	Problems         map[string]string
}

// stageSend is a platform that sends a stage as its own event.
type stageSend struct{ Name, Label, Event string }

// stagePlatform is a platform with a stages setting in its section.
type stagePlatform struct{ Name, Label string }

// platformStageMaps are the stage-to-event maps of the site's platforms
// that have a stages setting (Google's conversion actions, TikTok's
// events), in the order of their sections.
func (s *Server) platformStageMaps(site *model.Site) ([]stagePlatform, []map[string]string) {
	var (
		list []stagePlatform
		maps []map[string]string
	)
	for _, p := range s.platforms {
		c, ok := p.(platform.Configurable)
		if !ok || handMade[p.Name()] {
			continue
		}
		for _, f := range c.Fields() {
			if f.Kind != platform.FieldStages {
				continue
			}
			m := map[string]string{}
			var doc map[string]json.RawMessage
			if ok, err := platform.Decode(site, p.Name(), &doc); ok && err == nil {
				_ = json.Unmarshal(doc[f.Key], &m) // unreadable: maps nothing
			}
			list, maps = append(list, stagePlatform{Name: p.Name(), Label: c.Label()}), append(maps, m)
		}
	}
	return list, maps
}

// newStageEditor fills the editor from the site's stored stages, or from
// rows as typed.
func (s *Server) newStageEditor(lang string, site *model.Site, typed []stageRow, added stageRow) stageEditor {
	e := stageEditor{Pinned: site.Pinned, Edited: site.Settings.StagesEdited, Max: model.MaxStages, Events: metaStageEvents}
	plats, maps := s.platformStageMaps(site)
	e.Platforms = plats
	if typed != nil {
		e.Rows, e.New = typed, added
	} else {
		for _, n := range site.Settings.StageNames() {
			se := site.Settings.Meta.Stages[n]
			r := stageRow{Name: n, Event: se.Event, Rule: stageRuleGiven, Currency: se.Currency, Existing: true}
			if se.Value > 0 {
				r.Rule, r.Value = stageRuleFixed, strconv.FormatFloat(se.Value, 'f', -1, 64)
			}
			e.Rows = append(e.Rows, r)
		}
		e.New = stageRow{Rule: stageRuleGiven, Currency: siteCurrency(site)}
	}
	for i := range e.Rows {
		e.Rows[i].Index = i
		for j, m := range maps {
			if ev, ok := m[e.Rows[i].Name]; ok {
				e.Rows[i].Sends = append(e.Rows[i].Sends, stageSend{Name: plats[j].Name, Label: plats[j].Label, Event: ev})
			}
		}
	}
	e.New.Index, e.Count = len(e.Rows), len(e.Rows)+1
	// A refused new row is shown with its problem, even past the limit.
	e.Full = len(e.Rows) >= model.MaxStages && len(e.New.Problems) == 0
	for j, m := range maps {
		for n := range m {
			if _, ok := site.Settings.Meta.Stages[n]; !ok {
				e.Others = append(e.Others, tr(lang, "%s (only %s)", n, plats[j].Label))
			}
		}
	}
	return e
}

// siteCurrency is the currency a site's values are in: its stages', else
// its country's usual one.
func siteCurrency(site *model.Site) string {
	if c := app.SiteCurrency(site); c != "" {
		return c
	}
	return model.CountryCurrency(site.Settings.Country)
}

// adminStagesSave saves a site's stages from the stage editor. Each
// problem is shown on its row and nothing is saved while any is left; a
// saved list takes effect at once, and wins over a config file's
// meta.stages.
func (s *Server) adminStagesSave(w http.ResponseWriter, r *http.Request) {
	p := s.newPage(r, "sites", "Site")
	site, err := s.pathSite(r)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	ctx := r.Context()
	if r.PostFormValue("use_file") != "" {
		if err := s.app.SiteStagesFromFile(ctx, site.ID); err != nil {
			if errors.Is(err, app.ErrNotPinned) {
				err = errStatus(http.StatusConflict, tr(p.Lang, "This site has no config file to take its stages from."))
			}
			s.adminFail(w, r, err)
			return
		}
		s.sites.forget(site.ID)
		s.log.InfoContext(ctx, "site stages from the config file", "site", string(site.ID), "user", string(adminFrom(ctx).user.ID))
		http.Redirect(w, r, "/admin/sites/"+string(site.ID)+"?stages=file#stages", http.StatusSeeOther)
		return
	}
	rows, added, stages, order, bad := readStageForm(r, p.Lang, site.Settings.Meta.Stages)
	if !bad {
		if msg := stagesConfigProblem(site, stages); msg != "" {
			p.Problem = tr(p.Lang, "Nothing was saved: %s", msg)
			s.renderSiteStages(w, r, p, http.StatusBadRequest, site, rows, added)
			return
		}
		if err := s.app.SiteStagesSave(ctx, site.ID, stages, order); err != nil {
			s.adminFail(w, r, err)
			return
		}
		// This node's public endpoints and API see the stages at once;
		// the other nodes within the site cache's TTL.
		s.sites.forget(site.ID)
		s.log.InfoContext(ctx, "site stages saved", "site", string(site.ID), "stages", len(stages),
			"user", string(adminFrom(ctx).user.ID))
		http.Redirect(w, r, "/admin/sites/"+string(site.ID)+"?stages=saved#stages", http.StatusSeeOther)
		return
	}
	p.Problem = tr(p.Lang, "Nothing was saved. Please correct the marked fields.")
	s.renderSiteStages(w, r, p, http.StatusBadRequest, site, rows, added)
}

// renderSiteStages shows the site's page with the stage editor as typed.
func (s *Server) renderSiteStages(w http.ResponseWriter, r *http.Request, p *page, status int, site *model.Site, rows []stageRow, added stageRow) {
	if rows == nil {
		rows = []stageRow{}
	}
	ed := s.newStageEditor(p.Lang, site, rows, added)
	s.renderSiteFull(w, r, p, status, site, formOf(site), "", nil, nil, &ed)
}

// readStageForm reads the editor's rows (a row posted as existing is one
// only when current has its name); bad is set when any row has a
// problem, each named on its row in lang.
func readStageForm(r *http.Request, lang string, current map[string]model.StageEvent) (rows []stageRow, added stageRow, stages map[string]model.StageEvent, order []string, bad bool) {
	n, _ := strconv.Atoi(r.PostFormValue("count"))
	n = min(max(n, 1), model.MaxStages+1)
	stages = map[string]model.StageEvent{}
	seen := map[string]bool{}
	for i := range n {
		f := func(k string) string { return strings.TrimSpace(r.PostFormValue(fmt.Sprintf("stage.%d.%s", i, k))) }
		row := stageRow{Index: i, Name: f("name"), Event: f("event"), Rule: f("rule"), Value: f("value"),
			Currency: strings.ToUpper(f("currency")), Remove: f("remove") != "",
			Problems: map[string]string{}}
		// Only a stage the site has keeps a name the editor would not
		// take for a new one.
		_, row.Existing = current[row.Name]
		row.Existing = row.Existing && f("existing") != ""
		if row.Rule != stageRuleFixed {
			row.Rule = stageRuleGiven
		}
		last := i == n-1 && !row.Existing
		if row.Remove {
			rows = append(rows, row)
			continue
		}
		if last && row.Name == "" && row.Event == "" && row.Value == "" {
			added = row // the empty row: no stage added
			continue
		}
		se, ok := checkStageRow(lang, &row, seen)
		if len(stages) >= model.MaxStages {
			row.Problems["name"], ok = tr(lang, "A site has at most %d stages: remove one first.", model.MaxStages), false
		}
		bad = bad || !ok
		if ok {
			stages[row.Name] = se
			order = append(order, row.Name)
		}
		if last {
			added = row
		} else {
			rows = append(rows, row)
		}
	}
	return rows, added, stages, order, bad
}

// checkStageRow checks one row and returns its stage; its problems are
// put on the row.
func checkStageRow(lang string, row *stageRow, seen map[string]bool) (model.StageEvent, bool) {
	se := model.StageEvent{Event: row.Event, Currency: row.Currency}
	switch key := strings.ToLower(row.Name); {
	case row.Name == "":
		row.Problems["name"] = tr(lang, "Give the stage a name, e.g. meeting.")
	case !row.Existing && !validStageName(row.Name):
		// A stage already there keeps its name, whatever a config file
		// called it.
		row.Problems["name"] = tr(lang, "Use letters, digits, spaces, _ . or -, up to 40, starting with a letter or digit.")
	case seen[key]:
		row.Problems["name"] = tr(lang, "There is a stage %q already.", row.Name)
	default:
		seen[key] = true
	}
	switch {
	case row.Event == "":
		row.Problems["event"] = tr(lang, "Give the Meta event it sends, e.g. Schedule or Purchase.")
	case !config.IsEventName(row.Event):
		row.Problems["event"] = tr(lang, "Not an event name: a letter, then letters, digits, spaces or _, up to 50 (e.g. Purchase).")
	}
	if row.Rule == stageRuleFixed {
		v, err := strconv.ParseFloat(strings.ReplaceAll(row.Value, ",", "."), 64)
		if err != nil || v <= 0 || v != v || v > 1e12 {
			row.Problems["value"] = tr(lang, "Write the fixed value as a number above 0, e.g. 5000.")
		} else {
			se.Value = v
		}
	}
	switch {
	case se.Currency != "" && !model.IsCurrencyCode(se.Currency):
		row.Problems["currency"] = tr(lang, "Want a 3-letter currency code like TRY or EUR.")
	case row.Rule == stageRuleFixed && se.Currency == "":
		row.Problems["currency"] = tr(lang, "A fixed value needs its currency, e.g. TRY.")
	}
	return se, len(row.Problems) == 0
}

// stagesConfigProblem checks the site with the new stages by the config
// file's rules (a Click-to-WhatsApp dataset takes only some event names)
// and returns the first problem about stages the old ones did not have.
func stagesConfigProblem(site *model.Site, stages map[string]model.StageEvent) string {
	check := func(st map[string]model.StageEvent) map[string]string {
		f := formOf(site)
		cs, _ := f.config(site)
		cs.Meta.Stages = st
		out := map[string]string{}
		for _, pr := range config.CheckSite(cs) {
			if strings.Contains(pr.Key, "stages") {
				out[pr.Key+": "+pr.Message] = pr.Key + ": " + pr.Message
			}
		}
		return out
	}
	before, after := check(site.Settings.Meta.Stages), check(stages)
	keys := make([]string, 0, len(after))
	for k := range after {
		if _, had := before[k]; !had {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	slices.Sort(keys)
	return after[keys[0]]
}
