package model

import (
	"testing"
	"time"
)

// TestCheckReadinessStage checks the stage a site could optimise for and
// what to do when it is too common, too rare or too slow, against Meta's
// 1-40% and 28 days.
func TestCheckReadinessStage(t *testing.T) {
	from := time.Date(2026, 11, 7, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 0, ReadyPeriodDays)
	lead := StageFigure{EventName: "Lead", Kind: KindLead, Leads: 300}
	for _, tc := range []struct {
		name      string
		stages    []StageFigure
		rate, tim string // the fixes; "" when met
		stage     string
	}{
		{"deepest in range", []StageFigure{lead, {"QualifiedLead", KindQualified, 150, 0.2}, {"Schedule", "stage:meeting", 60, 4},
			{"Purchase", "stage:won", 15, 12}}, "", "", "Purchase"},
		{"too common", []StageFigure{lead, {"QualifiedLead", KindQualified, 250, 0.2}}, FixDeeperStage, "", "QualifiedLead"},
		{"too rare", []StageFigure{lead, {"Purchase", "stage:won", 1, 3}}, FixEarlierStage, "", "Purchase"},
		{"too slow", []StageFigure{lead, {"Purchase", "stage:won", 30, 35}}, "", FixSoonerStage, "Purchase"},
		{"none after the lead", []StageFigure{lead}, FixSendStages, FixSendStages, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &ReadinessFigures{From: from, To: to, Leads: 300, Stages: tc.stages}
			for _, r := range CheckReadiness(f) {
				switch r.Code {
				case ReqRate:
					if r.Fix != tc.rate || r.OK != (tc.rate == "") || r.Stage != tc.stage {
						t.Errorf("rate: %+v; want fix %q on %q", r, tc.rate, tc.stage)
					}
				case ReqTiming:
					if r.Fix != tc.tim || r.OK != (tc.tim == "") || r.Stage != tc.stage {
						t.Errorf("timing: %+v; want fix %q on %q", r, tc.tim, tc.stage)
					}
				}
			}
		})
	}
	if m := MedianDays([]time.Duration{72 * time.Hour, 24 * time.Hour, 48 * time.Hour, 96 * time.Hour}); m != 2.5 {
		t.Errorf("median = %v, want 2.5", m)
	}
}
