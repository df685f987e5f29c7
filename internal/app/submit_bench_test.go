package app_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// BenchmarkSubmitParallel measures Submit on SQLite from 128 goroutines, as
// the leads step of scripts/bench.sh drives it without HTTP: varied leads
// (three in five clean, with two events each; the others grey or junk), so
// that the group commit takes many to a transaction. cpu-us/lead is the
// process's CPU time (user and system) per lead, which a busy machine moves
// less than the time per lead.
func BenchmarkSubmitParallel(b *testing.B) {
	db := storetest.SQLite(b)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	site := &model.Site{ID: "dent", Name: "Dent", Settings: model.SiteSettings{
		Origins: []string{"https://www.istanbuldis.example"}, Country: "TR",
		Meta: model.MetaSettings{PixelID: "123456789012345", Mode: model.ModeLive}}}
	if err := db.SiteUpsert(ctx, site, now); err != nil {
		b.Fatal(err)
	}
	site, _ = db.SiteByID(ctx, "dent")
	svc := app.New(app.Options{Store: db})
	var seq atomic.Int64
	msgs := []string{"Merhaba, implant tedavisi için randevu almak istiyorum. Hafta içi öğleden sonra uygundur.",
		"Merhaba, implant tedavisi için randevu almak istiyorum. Hafta içi öğleden sonra uygundur.",
		"Kızım için şeffaf plak tedavisi düşünüyoruz, önce bir muayene olmak istiyoruz.", "fiyat?", "",
		"Merhaba, web siteniz için SEO hizmeti sunuyoruz, Google'da ilk sayfaya çıkarıyoruz."}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.SetParallelism(64)
	start := cpu()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := seq.Add(1)
			in := &app.LeadInput{EventID: model.NewUUID(), Email: fmt.Sprintf("ayse.yilmaz%d@gmail.com", n),
				Phone: fmt.Sprintf("0532 %03d %02d %02d", 200+n%800, n/800%100, n/80000%100), Name: "Ayşe Yılmaz",
				Message: msgs[n%int64(len(msgs))], FillMS: i64(24000), PageURL: "https://www.istanbuldis.example/implant",
				ClientIP: "85.105.1.2", UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"}
			if _, _, err := svc.Submit(ctx, site, in); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((cpu()-start).Microseconds())/float64(b.N), "cpu-us/lead")
}
