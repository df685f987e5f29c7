//go:build unix

package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// BenchmarkDeliveryDrain measures the store's part of draining an outbox
// of 100,000 queued lead events of 8 sites, without the runner or HTTP:
// claims of 5,000 (DeliveryClaimFor) and outcomes of 1,000 recorded sent
// (DeliveryRecord), one after the other from one goroutine, as the writer
// sees them. claim_us/event and record_us/event are this process's CPU
// time (user and system) per event in each, the steadier figures on a
// shared machine; wall_us/event the wall time of both.
func BenchmarkDeliveryDrain(b *testing.B) {
	const sites, perSite = 8, 12500
	ctx := context.Background()
	now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	for range b.N {
		b.StopTimer()
		db := storetest.New(b)
		for s := range sites {
			site := model.SiteID(fmt.Sprint("site", s))
			if err := db.SiteUpsert(ctx, &model.Site{ID: site, Name: "S"}, now); err != nil {
				b.Fatal(err)
			}
			err := db.InTx(ctx, func(tx *store.Tx) error {
				for i := range perSite {
					payload, _ := json.Marshal(map[string]any{"event_name": "Lead", "event_time": now.Unix(),
						"event_id": fmt.Sprintf("ev-%s-%d", site, i), "action_source": "website",
						"event_source_url": "https://www.istanbuldis.example/",
						"user_data": map[string]any{"em": []string{"c2a4e1b8a4d1f0c4c2a4e1b8a4d1f0c4c2a4e1b8a4d1f0c4c2a4e1b8a4d1f0c4"},
							"client_user_agent": "Mozilla/5.0"}})
					d := &model.Delivery{ID: model.NewID("dl_", now), SiteID: site, LeadID: model.LeadID(model.NewID("ld_", now)),
						Kind: model.KindLead, EventName: "Lead", EventID: fmt.Sprintf("ev-%s-%d", site, i), PixelID: "1000",
						Payload: payload, State: model.DeliveryPending, NextAt: now, DeadlineAt: now.Add(7*24*time.Hour - time.Minute),
						CreatedAt: now, UpdatedAt: now}
					if _, err := tx.DeliveryInsert(ctx, d); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		w0 := db.WriterStats()
		b.StartTimer()
		var claimCPU, recordCPU time.Duration
		start := time.Now()
		done := 0
		for done < sites*perSite {
			c0 := cpuTime()
			got, err := db.DeliveryClaimFor(ctx, model.ClaimParams{Owner: "node", Now: now, LeaseUntil: now.Add(10 * time.Minute),
				Limit: 5000, Destinations: []string{model.DestinationMeta}})
			if err != nil || len(got) == 0 {
				b.Fatalf("claim after %d: %d %v", done, len(got), err)
			}
			c1 := cpuTime()
			claimCPU += c1 - c0
			sent := now.Add(time.Second)
			for _, d := range got {
				d.State, d.Attempts, d.SentAt, d.UpdatedAt = model.DeliverySent, d.Attempts+1, &sent, sent
				d.Mode, d.Response = model.ModeLive, []byte(`{"events_received":1000,"messages":[],"fbtrace_id":"Abench"}`)
			}
			for i := 0; i < len(got); i += 1000 {
				if lost, err := db.DeliveryRecord(ctx, "node", got[i:min(i+1000, len(got))], sent); err != nil || lost != 0 {
					b.Fatal(lost, err)
				}
			}
			recordCPU += cpuTime() - c1
			done += len(got)
		}
		wall := time.Since(start)
		b.StopTimer()
		counts, err := db.DeliveryCounts(ctx, "")
		if err != nil || counts[model.DeliverySent] != sites*perSite {
			b.Fatalf("after the drain: %v %v", counts, err)
		}
		n := float64(sites * perSite)
		b.ReportMetric(float64(claimCPU.Microseconds())/n, "claim_us/event")
		b.ReportMetric(float64(recordCPU.Microseconds())/n, "record_us/event")
		b.ReportMetric(float64(wall.Microseconds())/n, "wall_us/event")
		w1 := db.WriterStats()
		b.ReportMetric(float64(w1.Commits-w0.Commits), "commits")
		if syncs := w1.LogSyncs - w0.LogSyncs; syncs > 0 {
			b.ReportMetric((w1.LogSyncSeconds-w0.LogSyncSeconds)*1e6/float64(syncs), "sync_us/sync")
		}
		b.StartTimer()
	}
}

// cpuTime is this process's CPU time, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
