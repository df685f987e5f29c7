package app

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

func testSite(t *testing.T, db *store.DB, now time.Time) *model.Site {
	t.Helper()
	return testkit.AddSite(t, db, testkit.Site(testkit.WithMeta("111", model.ModeTest), func(s *model.Site) {
		s.AccessToken, s.Settings.Meta.TestEventCode = graphtest.Token, "TEST1"
	}), now)
}

// TestEnqueueByVerdict: junk queues nothing, review only the raw lead event
// (the pixel sent it too), clean the raw and the qualified event.
func TestEnqueueByVerdict(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		verdict model.Verdict
		want    []string
	}{
		{model.VerdictJunk, nil},
		{model.VerdictReview, []string{"Lead"}},
		{model.VerdictClean, []string{"Lead", "QualifiedLead"}},
	} {
		t.Run(string(tt.verdict), func(t *testing.T) {
			db := storetest.New(t)
			now := time.Now().UTC().Truncate(time.Millisecond)
			site := testSite(t, db, now)
			s := New(Options{Store: db, Now: func() time.Time { return now }})
			lead := &model.Lead{ID: "ld_1", SiteID: site.ID, EventID: "ev-1", Email: "a@example.com",
				UserAgent: "UA", PageURL: "https://www.istanbuldis.example/", SubmittedAt: now,
				Decision: model.Decision{Verdict: tt.verdict}}
			err := db.InTx(context.Background(), func(tx *store.Tx) error {
				if err := tx.LeadInsert(context.Background(), lead); err != nil {
					return err
				}
				return s.enqueueLead(context.Background(), tx, site, lead, nil, now)
			})
			if err != nil {
				t.Fatal(err)
			}
			ds, err := db.DeliveriesByLead(context.Background(), lead.ID)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, d := range ds {
				names = append(names, d.EventName)
				var e capi.Event
				if err := json.Unmarshal(d.Payload, &e); err != nil || e.EventID != d.EventID || e.EventName != d.EventName {
					t.Errorf("payload %s does not match the row %+v", d.Payload, d)
				}
				if d.State != model.DeliveryPending || d.PixelID != "111" ||
					!d.DeadlineAt.Equal(now.Truncate(time.Second).Add(model.MaxEventAge)) {
					t.Errorf("row %+v", d)
				}
				if strings.Contains(string(d.Payload), "a@example.com") {
					t.Errorf("raw e-mail in the payload")
				}
			}
			sort.Strings(names)
			if strings.Join(names, ",") != strings.Join(tt.want, ",") {
				t.Errorf("queued %v, want %v", names, tt.want)
			}
		})
	}
}

func TestSendTest(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	g := graphtest.New(t)
	now := time.Now().UTC()
	site := testSite(t, db, now)
	s := New(Options{Store: db, Graph: capi.NewClient(capi.ClientOptions{BaseURL: g.URL, HTTP: g.Client()})})
	res, err := s.SendTest(context.Background(), site.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := g.Events()
	if len(got) != 1 || got[0].TestEventCode != "TEST1" || got[0].PixelID != "111" || got[0].ActionSource != "website" {
		t.Fatalf("Meta received %+v", got)
	}
	var e capi.Event
	json.Unmarshal(res.Event, &e)
	if len(e.UserData.Phone) != 1 || len(e.UserData.Email) != 1 || e.UserData.FBP == "" || e.EventID != got[0].EventID {
		t.Errorf("sample event %s", res.Event)
	}
	if !strings.Contains(string(res.Answer), `"events_received":1`) {
		t.Errorf("answer %s", res.Answer)
	}
	if n, _ := db.LeadCount(context.Background(), site.ID); n != 0 {
		t.Errorf("send-test stored %d leads", n)
	}

	// No test code: refused before anything is sent.
	site.Settings.Meta.TestEventCode = ""
	db.SiteUpsert(context.Background(), site, now)
	var ie *model.InputError
	if _, err := s.SendTest(context.Background(), site.ID); !errors.As(err, &ie) || ie.Field != "test_event_code" {
		t.Errorf("without a code: %v", err)
	}
	// Meta's refusal comes back with what was sent.
	site.Settings.Meta.TestEventCode = "TEST1"
	db.SiteUpsert(context.Background(), site, now)
	g.SetTokens("other")
	res, err = s.SendTest(context.Background(), site.ID)
	if capi.Classify(err) != capi.ClassAuth || res == nil || len(res.Event) == 0 {
		t.Errorf("refused token: %v %+v", err, res)
	}
	if _, err := s.SendTest(context.Background(), "nope"); !errors.Is(err, model.ErrNotFound) {
		t.Errorf("unknown site: %v", err)
	}
	if len(g.Events()) != 1 {
		t.Errorf("Meta has %d events", len(g.Events()))
	}
}
