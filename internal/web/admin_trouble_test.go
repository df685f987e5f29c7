package web_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/capi"
	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/model"
)

// TestAdminTroubleBanner runs the real delivery runner against the Meta
// stand-in made unreachable, then throttling: the dashboard and the
// deliveries page say once, in plain words, which platform, why, since
// when, how many events wait and until when they can still be sent; the
// deliveries page shows the identical failures as one row with a count,
// and never calls a network error "Meta's message".
func TestAdminTroubleBanner(t *testing.T) {
	cases := []struct {
		name      string
		breakMeta func(g *graphtest.Server)
		en, tr    string
	}{
		{"unreachable", func(g *graphtest.Server) { g.Close() },
			"Meta could not be reached: its servers did not answer.", "Meta: ulaşılamadı, sunucuları yanıt vermedi."},
		{"throttled", func(g *graphtest.Server) { g.FailFor(time.Hour, graphtest.FaultThrottle17) },
			"Meta asked us to slow down: too many requests for now.", "Meta: yavaşlamamızı istedi, şu an çok fazla istek var."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, c := troubledEnv(t, tc.breakMeta, tc.en)
			counts, err := e.db.DeliveryCounts(context.Background(), "dent")
			if err != nil {
				t.Fatal(err)
			}
			waiting := counts[model.DeliveryRetry]
			for _, lang := range []string{"en", "tr"} {
				c.hdr["Accept-Language"] = lang
				cause, wait := tc.en, "events wait, the oldest since"
				if lang == "tr" {
					cause, wait = tc.tr, "olay bekliyor, en eskisi"
				}
				for _, path := range []string{"/admin/dashboard?site=dent", "/admin/deliveries", "/admin/deliveries?state=retry"} {
					p := c.get(path)
					text := mainText(p.body)
					// Once in the banner, and on the deliveries pages once more
					// on the one row that stands for all the failed events.
					want := 1
					if strings.Contains(path, "deliveries") {
						want = 2
					}
					if n := strings.Count(text, cause); n != want {
						t.Errorf("%s %s: the cause said %d times, want %d:\n%s", lang, path, n, want, text)
					}
					if !strings.Contains(text, strconv.Itoa(waiting)+" "+wait) {
						t.Errorf("%s %s: no count of the %d waiting events:\n%s", lang, path, waiting, text)
					}
					if strings.Contains(text, "message: Post") || strings.Contains(text, "mesajı: Post") ||
						strings.Contains(text, "dial tcp") || strings.Contains(text, "connection refused") {
						t.Errorf("%s %s: a network error or throttle shown as Meta's message:\n%s", lang, path, text)
					}
				}
				p := c.get("/admin/deliveries?state=retry")
				if n := strings.Count(p.body, `class="card delivery"`); n != 1 {
					t.Errorf("%s: %d rows for %d identical failures, want 1", lang, n, waiting)
				}
			}
		})
	}
}

// troubledEnv is the admin fixture whose site dent runs live against the
// Meta stand-in, broken by breakMeta after the fixture's own events were
// sent, with three more leads whose events now wait for retry; the client
// is logged in. cause is the banner's English words, absent before.
func troubledEnv(t *testing.T, breakMeta func(g *graphtest.Server), cause string) (*adminEnv, *client) {
	t.Helper()
	e := newAdminEnv(t)
	ctx := context.Background()
	site, _ := e.db.SiteByID(ctx, "dent")
	site.Settings.Meta.Mode = model.ModeLive
	if err := e.db.SiteUpsert(ctx, site, time.Now()); err != nil {
		t.Fatal(err)
	}
	client := capi.NewClient(capi.ClientOptions{BaseURL: e.graph.URL, HTTP: e.graph.Client()})
	runner := deliver.New(deliver.Options{Store: e.db, Sender: client, Node: "node-a", Jitter: func() float64 { return 0.5 }})
	if _, err := runner.RunOnce(ctx); err != nil { // what the fixture queued, while Meta answers
		t.Fatal(err)
	}
	c := e.login()
	if p := c.get("/admin/dashboard?site=dent"); strings.Contains(p.body, cause) {
		t.Fatalf("a banner before any trouble")
	}
	breakMeta(e.graph)
	fill := int64(15000)
	for i, phone := range []string{"0532 111 22 33", "0533 444 55 66", "0541 777 88 99"} {
		if _, _, err := e.svc.Submit(ctx, site, &app.LeadInput{Name: "Kişi", Phone: phone, FillMS: &fill,
			Message: "Merhaba, diş beyazlatma için randevu almak istiyorum, bu hafta uygun musunuz?",
			PageURL: origin + "/beyazlatma", ClientIP: "85.105.2." + string(rune('1'+i)), UserAgent: "Mozilla/5.0"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := runner.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	counts, err := e.db.DeliveryCounts(ctx, "dent")
	if err != nil || counts[model.DeliveryRetry] < 3 {
		t.Fatalf("after the trouble: %v %v", counts, err)
	}
	return e, c
}
