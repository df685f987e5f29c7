package cli

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// TestProvisionStages: a start writes the config file's stages, until
// stages are saved in the admin's stage editor: from then on those win at
// every start, until the admin goes back to the file's.
func TestProvisionStages(t *testing.T) {
	db := storetest.New(t)
	ctx := context.Background()
	svc := app.New(app.Options{Store: db})
	file := map[string]model.StageEvent{"meeting": {Event: "Schedule"}, "won": {Event: "Purchase", Currency: "TRY"}}
	c := &config.Config{Sites: []config.Site{{ID: "dent", Name: "Dent", Origins: []string{"https://dent.example"}, Country: "TR",
		Meta: config.SiteMeta{MetaSettings: model.MetaSettings{Mode: model.ModeDryRun, Stages: file}}}}}
	start := func() map[string]model.StageEvent {
		t.Helper()
		if err := provision(ctx, db, c, time.Now()); err != nil {
			t.Fatal(err)
		}
		s, err := db.SiteByID(ctx, "dent")
		if err != nil {
			t.Fatal(err)
		}
		return s.Settings.Meta.Stages
	}
	if got := start(); !reflect.DeepEqual(got, file) {
		t.Fatalf("first start: %+v", got)
	}
	admin := map[string]model.StageEvent{"visit": {Event: "Schedule"}, "won": {Event: "Purchase", Value: 900, Currency: "TRY"}}
	if err := svc.SiteStagesSave(ctx, "dent", admin, []string{"visit", "won"}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if got := start(); !reflect.DeepEqual(got, admin) {
			t.Fatalf("start %d after the admin's save: %+v", i, got)
		}
	}
	if s, _ := db.SiteByID(ctx, "dent"); !s.Pinned || !s.Settings.StagesEdited || len(s.Settings.StageOrder) != 2 {
		t.Errorf("kept: %+v", s.Settings)
	}
	if err := svc.SiteStagesFromFile(ctx, "dent"); err != nil {
		t.Fatal(err)
	}
	if got := start(); !reflect.DeepEqual(got, file) {
		t.Errorf("start after going back to the file: %+v", got)
	}
}
