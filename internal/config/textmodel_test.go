package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The text model's block under a site's qualify: the switch and the cap.
func TestTextModelSettings(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.yaml")
	os.WriteFile(ok, []byte(`sites:
  - id: dent
    country: TR
    qualify:
      text_model: {enabled: false, max_points: 15}
  - id: kitchen
    country: TR
`), 0o600)
	c, err := Load(ok, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if tm := c.Sites[0].Qualify.TextModel; tm.On() || tm.MaxPoints != 15 {
		t.Errorf("dent: %+v", tm)
	}
	if tm := c.Sites[0].SiteModel().Settings.Qualify.TextModel; tm.On() {
		t.Error("the switch did not reach the site's settings")
	}
	if !c.Sites[1].Qualify.TextModel.On() {
		t.Error("the text model is not on by default")
	}

	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte(`sites:
  - id: dent
    country: TR
    qualify:
      text_model: {max_points: 99}
`), 0o600)
	_, err = Load(bad, envOf(nil))
	var p Problems
	if !errors.As(err, &p) || len(p) != 1 || p[0].Key != "sites[0].qualify.text_model.max_points" {
		t.Errorf("max_points 99: %v", err)
	}
	os.WriteFile(bad, []byte(`sites:
  - id: dent
    country: TR
    qualify:
      text_model: {enabeld: false}
`), 0o600)
	if _, err := Load(bad, envOf(nil)); err == nil {
		t.Error("a misspelt key passed")
	}
}
