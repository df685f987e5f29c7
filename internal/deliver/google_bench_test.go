package deliver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/google"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
	"github.com/cleanads/cleanads/internal/testkit"
)

// leanGoogle accepts every events:ingest and answers every status SUCCESS,
// doing as little as it can, as leanGraph does for Meta.
type leanGoogle struct{ events atomic.Int64 }

func (g *leanGoogle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodGet {
		fmt.Fprint(w, `{"requestStatusPerDestination":[{"destination":{"reference":"555","productDestinationId":"555"},"requestStatus":"SUCCESS"}]}`)
		return
	}
	var body struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Events) == 0 || len(body.Events) > google.MaxBatch {
		http.Error(w, `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"bad"}}`, http.StatusBadRequest)
		return
	}
	g.events.Add(int64(len(body.Events)))
	fmt.Fprint(w, `{"requestId":"bench"}`)
}

// BenchmarkDrainGoogle drains 40,000 qualified events over 8 sites into
// local stand-ins over HTTP: to Meta alone (meta_only), and to Meta and
// Google, each event with its Google twin (both: 80,000 rows). events/s
// counts every row sent.
func BenchmarkDrainGoogle(b *testing.B) {
	b.Run("meta_only", func(b *testing.B) { drainBoth(b, false) })
	b.Run("both", func(b *testing.B) { drainBoth(b, true) })
}

func drainBoth(b *testing.B, withGoogle bool) {
	const sites, perSite = 8, 5000
	for range b.N {
		b.StopTimer()
		db := storetest.SQLite(b)
		ctx := context.Background()
		clk := testkit.NewClock(time.Now().UTC())
		mg, gg := &leanGraph{}, &leanGoogle{}
		msrv, gsrv := httptest.NewServer(mg), httptest.NewServer(gg)
		f := &fixture{ctx: ctx, db: db, clk: clk}
		gs := &model.GoogleSettings{OperatingAccountID: "1234567890", QualifiedConversionAction: "555"}
		for i := range sites {
			site := &model.Site{ID: model.SiteID(fmt.Sprintf("site%d", i)), Name: "S", AccessToken: "token",
				Settings: model.SiteSettings{Country: "TR", Meta: model.MetaSettings{PixelID: fmt.Sprint(1000 + i), Mode: model.ModeLive}}}
			if withGoogle {
				site.Settings.Google = gs
			}
			if err := db.SiteUpsert(ctx, site, clk.Now()); err != nil {
				b.Fatal(err)
			}
			for part := 0; part < perSite; part += 2500 {
				f.site = site
				f.queue(b, site, 2500, func(j int, d *model.Delivery, e *capi.Event) {
					d.ID = fmt.Sprintf("dl_%s_%06d", site.ID, part+j)
					e.EventID = fmt.Sprintf("ev-%s-%d", site.ID, part+j)
					d.EventID = e.EventID
				})
				if withGoogle {
					queueGoogle(b, db, site, part, 2500, clk.Now())
				}
			}
		}
		dests := map[string]deliver.Handler{}
		if withGoogle {
			ts := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "bench"})
			dests[model.DestinationGoogle] = deliver.NewGoogle(deliver.GoogleOptions{Store: db,
				Sender: google.NewClient(google.ClientOptions{BaseURL: gsrv.URL, HTTP: gsrv.Client()}),
				Tokens: func(model.SiteID) (oauth2.TokenSource, error) { return ts, nil }, Now: clk.Now})
		}
		r := deliver.New(deliver.Options{Store: db, Now: clk.Now, Workers: 4, Handlers: dests,
			Sender: capi.NewClient(capi.ClientOptions{BaseURL: msrv.URL, HTTP: msrv.Client(), Now: clk.Now})})
		want := int64(sites * perSite)
		b.StartTimer()
		start := time.Now()
		if err := r.Start(ctx); err != nil {
			b.Fatal(err)
		}
		for mg.events.Load() < want || withGoogle && gg.events.Load() < want {
			time.Sleep(5 * time.Millisecond)
		}
		r.Stop(ctx)
		elapsed := time.Since(start)
		b.StopTimer()
		msrv.Close()
		gsrv.Close()
		rows := want
		if withGoogle {
			rows *= 2
		}
		counts, err := db.DeliveryCounts(ctx, "")
		if err != nil || int64(counts[model.DeliverySent]) != rows {
			b.Fatalf("after the drain: %v %v", counts, err)
		}
		b.ReportMetric(float64(rows)/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(want)/elapsed.Seconds(), "leads/s")
	}
}

// queueGoogle puts n Google rows of site in the outbox, as app does beside
// each qualified event, in one transaction.
func queueGoogle(b *testing.B, db *store.DB, site *model.Site, from, n int, now time.Time) {
	b.Helper()
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		for i := from; i < from+n; i++ {
			l := &model.Lead{ID: model.LeadID(fmt.Sprintf("ld_%s_%d", site.ID, i)), Email: fmt.Sprintf("p%d@gmail.com", i),
				GClid: "gclid", SubmittedAt: now}
			e, err := google.BuildEvent(google.Params{Settings: site.Settings.Google, Country: "TR", Lead: l,
				Clicks: model.ClickIDs{GClid: l.GClid}, Kind: model.KindQualified})
			if err != nil {
				return err
			}
			p, _ := json.Marshal(e)
			d := &model.Delivery{ID: fmt.Sprintf("dg_%s_%06d", site.ID, i), SiteID: site.ID, LeadID: l.ID,
				Destination: model.DestinationGoogle, Kind: model.KindQualified, EventName: "QualifiedLead",
				EventID: e.TransactionID, Payload: p, State: model.DeliveryPending, NextAt: now,
				DeadlineAt: now.Add(model.GoogleMaxEventAge), CreatedAt: now, UpdatedAt: now}
			if _, err := tx.DeliveryInsert(context.Background(), d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
