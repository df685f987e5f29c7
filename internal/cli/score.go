package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/qualify"
	"github.com/cleanads/cleanads/internal/qualify/intent"
	"github.com/cleanads/cleanads/internal/store"
)

// score judges one lead read as JSON from stdin with a configured site's
// rules and prints the verdict, score and reasons; nothing is stored or
// sent, and earlier leads are not looked up.
func score(ctx context.Context, e *env, args []string) error {
	fs := e.flags("score")
	cfgPath := fs.String("config", "", "config file (default $CLEANADS_CONFIG)")
	siteID := fs.String("site", "", "the site whose rules judge the lead (required)")
	fromServer := fs.Bool("from-server", false, "judge the lead as posted by the site's server with its API key: its fill_ms is that server's figure, not our tracker's")
	if err := parse(fs, args); err != nil {
		return err
	}
	c, err := e.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	site := configSite(c, *siteID)
	if site == nil {
		return fmt.Errorf("no site %q in the config (give --site ID)", *siteID)
	}
	lists, err := qualifyLists(c)
	if err != nil {
		return err
	}
	var in app.LeadInput
	dec := json.NewDecoder(e.stdin)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fmt.Errorf("reading the lead from stdin: %w", err)
	}
	in.FromServer = *fromServer
	// The site's text model lives in the database: read it when there is
	// one, never create one.
	db, note, err := existingStore(ctx, c)
	if err != nil {
		return err
	}
	if db != nil {
		defer db.Close()
	}
	svc := app.New(app.Options{Store: db, Lists: lists})
	lead, err := svc.Score(site, &in)
	if err != nil {
		return err
	}
	res := scoreOutput{Decision: lead.Decision, TextModel: scoreText{State: note, MinJudged: qualify.MinJudged},
		Model: modelPart(in.Message, lead.Decision)}
	if db != nil {
		st, err := svc.TextModelStatus(ctx, site)
		if err != nil {
			return err
		}
		res.TextModel.State, res.TextModel.Judged = textState(st), st.Judged
	}
	if r, ok := qualify.TextReason(lead.Decision); ok {
		res.TextModel.Reason = &r
	}
	out := json.NewEncoder(e.stdout)
	out.SetIndent("", "  ")
	return out.Encode(res)
}

// scoreOutput is what score prints: the decision, what the built-in model
// read in the message, and what the site's text model did.
type scoreOutput struct {
	model.Decision
	Model     *scoreModel `json:"model,omitempty"`
	TextModel scoreText   `json:"text_model"`
}

// scoreModel is the built-in intent model's part of score's output: its
// likeliest class, whether it is confident, each class's probability, the
// stretches of the message that weighed most, and the reason it gave.
type scoreModel struct {
	Version   string             `json:"version"`
	Class     string             `json:"class"`
	Confident bool               `json:"confident"`
	Probs     map[string]float64 `json:"probabilities"`
	Evidence  []string           `json:"evidence,omitempty"`
	Reason    *model.Reason      `json:"reason,omitempty"`
}

// modelPart reads the message with the built-in model the rules use; nil
// for a message without words.
func modelPart(message string, d model.Decision) *scoreModel {
	m := intent.Default()
	j := m.Judge(intent.Digits(message))
	if j.Words == 0 {
		return nil
	}
	out := &scoreModel{Version: m.Version + " " + m.Corpus[:12], Class: j.Class.String(), Confident: j.Confident,
		Probs: map[string]float64{}, Evidence: j.Evidence}
	for c := range intent.NumClasses {
		out.Probs[intent.Class(c).String()] = math.Round(1000*j.Probs[c]) / 1000
	}
	if r, ok := qualify.ModelReason(d); ok {
		out.Reason = &r
	}
	return out
}

// scoreText is the text model's part of score's output.
type scoreText struct {
	// State is "live" (it counts), "shadow" (shown, 0 points, until
	// min_judged leads are judged), "off" (the site's setting), "untrained"
	// (no owner-judged lead yet) or "no database".
	State     string        `json:"state"`
	Judged    int           `json:"judged"`
	MinJudged int           `json:"min_judged"`
	Reason    *model.Reason `json:"reason,omitempty"`
}

func textState(st app.TextModelStatus) string {
	switch {
	case st.Off:
		return "off"
	case st.Judged == 0:
		return "untrained"
	case st.Live:
		return "live"
	}
	return "shadow"
}

// existingStore opens the configured database for reading when it exists
// and has the current schema; otherwise it returns nil and says why.
func existingStore(ctx context.Context, c *config.Config) (*store.DB, string, error) {
	if path, ok := strings.CutPrefix(c.Database, "sqlite:"); ok {
		if _, err := os.Stat(path); err != nil {
			return nil, "no database", nil
		}
	}
	db, err := openStore(ctx, c)
	if err != nil {
		return nil, "", err
	}
	if err := db.CheckSchema(ctx); err != nil {
		db.Close()
		return nil, "no database (" + err.Error() + ")", nil
	}
	return db, "", nil
}

// qualifyLists returns the rules' lists, with a newer disposable-domain file
// when the config names one.
func qualifyLists(c *config.Config) (*qualify.Lists, error) {
	l := qualify.DefaultLists()
	if c.DisposableDomainsFile == "" {
		return l, nil
	}
	return l.WithDisposableFile(c.DisposableDomainsFile)
}
