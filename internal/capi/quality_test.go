package capi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
)

// TestDatasetQuality reads Meta's figures of a dataset from the stand-in:
// an answer with the score, each key's coverage and the dedupe feedback,
// and Meta's refusals (a bad token, a dataset the token cannot read) as
// *APIError with Meta's message.
func TestDatasetQuality(t *testing.T) {
	g := graphtest.New(t)
	g.SetDatasetQuality("111", graphtest.QualityEvent{EventName: "Lead", Score: 6.4,
		Keys: map[string]float64{"email": 92.5, "phone": 80}, EventIDShare: 100})
	c := capi.NewClient(capi.ClientOptions{BaseURL: g.URL})
	ctx := context.Background()

	q, err := c.DatasetQuality(ctx, capi.GraphAuth{AccessToken: graphtest.Token}, "111")
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Web) != 1 || q.Web[0].EventName != "Lead" || q.Web[0].EventMatchQuality == nil {
		t.Fatalf("answer = %+v", q)
	}
	emq := q.Web[0].EventMatchQuality
	if emq.CompositeScore.String() != "6.4" || len(emq.MatchKeyFeedback) != 2 ||
		emq.MatchKeyFeedback[0].Identifier != "email" || emq.MatchKeyFeedback[0].Coverage.Percentage.String() != "92.5" {
		t.Errorf("event match quality = %+v", emq)
	}
	if d := q.Web[0].DedupeKeyFeedback; len(d) != 1 || d[0].DedupeKey != "event_id" || d[0].ServerEventsWithDedupeKey.Percentage.String() != "100" {
		t.Errorf("dedupe feedback = %+v", d)
	}

	for name, tc := range map[string]struct {
		token, dataset string
		code, subcode  int
	}{
		"token refused":      {"wrong", "111", 190, 0},
		"dataset not theirs": {graphtest.Token, "222", 100, 33},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.DatasetQuality(ctx, capi.GraphAuth{AccessToken: tc.token}, tc.dataset)
			var ae *capi.APIError
			if !errors.As(err, &ae) || ae.Code != tc.code || ae.Subcode != tc.subcode || ae.Message == "" {
				t.Fatalf("err = %v, want Meta's code %d/%d with its message", err, tc.code, tc.subcode)
			}
		})
	}
	if _, err := c.DatasetQuality(ctx, capi.GraphAuth{AccessToken: graphtest.Token}, "not-an-id"); !errors.Is(err, capi.ErrInvalidRequest) {
		t.Errorf("a dataset id that is not digits: err = %v", err)
	}
	if g.QualityReads() != 1 {
		t.Errorf("quality reads answered = %d, want 1", g.QualityReads())
	}
}
