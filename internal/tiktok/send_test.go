package tiktok_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/testkit"
	"github.com/cleanads/cleanads/internal/tiktok"
	"github.com/cleanads/cleanads/internal/tiktok/tiktoktest"
)

// leadRows builds the web lead events of n leads and their rows.
func leadRows(t testing.TB, p platform.Platform, site *model.Site, n int) []*model.Delivery {
	t.Helper()
	rows := make([]*model.Delivery, n)
	for i := range rows {
		l := webLead(model.LeadID(fmt.Sprintf("L%02d", i)))
		rows[i] = row(site, l, model.KindLead, build(t, p, platform.Input{Site: site, Lead: l, Kind: model.KindLead,
			Cookies: map[string]string{"_ttp": "ttp-" + string(l.ID)}}))
	}
	return rows
}

func TestSendAccepted(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	site := tiktokSite(t, full())
	rows := leadRows(t, p, site, 3)
	out, err := p.Send(context.Background(), site, rows)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if !o.Accepted || o.Mode != model.ModeLive || o.Err != nil || !strings.Contains(string(o.Response), `"code":0`) {
			t.Errorf("row %d: %+v", i, o)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want one for the batch", len(reqs))
	}
	r := reqs[0]
	if r.AccessToken != tiktoktest.AccessToken || r.EventSource != "web" || r.EventSourceID != tiktoktest.PixelCode || r.TestEventCode != "" {
		t.Errorf("request %+v", r)
	}
	if got, want := srv.AcceptedIDs(), []string{"ev-L00", "ev-L01", "ev-L02"}; !slices.Equal(got, want) {
		t.Errorf("accepted %v, want %v", got, want)
	}
	// What is sent is the payload as built, byte for byte.
	if got := srv.Accepted()[1].JSON; string(got) != string(rows[1].Payload) {
		t.Errorf("sent %s\nbuilt %s", got, rows[1].Payload)
	}
}

func TestSendTestModeAndDryRun(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	s := full()
	s.Mode, s.TestEventCode = model.ModeTest, tiktoktest.TestEventCode
	site := tiktokSite(t, s)
	out, err := p.Send(context.Background(), site, leadRows(t, p, site, 2))
	if err != nil || !out[0].Accepted || out[0].Mode != model.ModeTest {
		t.Fatalf("test mode: %v %+v", err, out)
	}
	if r := srv.Requests(); len(r) != 1 || r[0].TestEventCode != tiktoktest.TestEventCode {
		t.Errorf("requests %+v, want the test event code on the request", r)
	}

	// Test mode without its code sends nothing: the events would count.
	noCode := full()
	noCode.Mode = model.ModeTest
	_, err = p.Send(context.Background(), tiktokSite(t, noCode), leadRows(t, p, site, 1))
	if f := platform.Classify(err); err == nil || f.Class != platform.Paused || !strings.Contains(f.Words, "test event code") {
		t.Errorf("test mode without a code: %v", err)
	}

	s.Mode = model.ModeDryRun
	dry := tiktokSite(t, s)
	out, err = p.Send(context.Background(), dry, leadRows(t, p, dry, 2))
	if err != nil || !out[1].Accepted || out[1].Mode != model.ModeDryRun {
		t.Fatalf("dry run: %v %+v", err, out)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests after a dry run, want none more", n)
	}
}

// TikTok's answers sorted into the platform's classes: every row is left to
// the request-level failure, none is accepted or dead.
func TestSendFailureClasses(t *testing.T) {
	for _, c := range []struct {
		name       string
		fail       func(*tiktoktest.Server)
		class      platform.Class
		retryAfter time.Duration
		words      string
	}{
		{"too many requests", func(s *tiktoktest.Server) { s.FailNext(1, tiktoktest.CodeTooFrequent, "120") },
			platform.Throttled, 2 * time.Minute, ""},
		{"HTTP 429", func(s *tiktoktest.Server) { s.FailNextHTTP(1, http.StatusTooManyRequests) }, platform.Throttled, 0, ""},
		{"system error", func(s *tiktoktest.Server) { s.FailNext(1, tiktoktest.CodeSystemError, "") }, platform.Transient, 0, ""},
		{"system timeout", func(s *tiktoktest.Server) { s.FailNext(1, tiktoktest.CodeSystemTimeout, "") }, platform.Transient, 0, ""},
		{"maintenance", func(s *tiktoktest.Server) { s.FailNext(1, 60001, "") }, platform.Transient, 0, ""},
		{"HTTP 503", func(s *tiktoktest.Server) { s.FailNextHTTP(1, http.StatusServiceUnavailable) }, platform.Transient, 0, ""},
		{"network", func(s *tiktoktest.Server) { s.Close() }, platform.Transient, 0, ""},
		{"revoked token", func(s *tiktoktest.Server) { s.Pause() }, platform.Paused, 0, "generate a new one in Events Manager"},
		{"expired token", func(s *tiktoktest.Server) { s.FailNext(1, tiktoktest.CodeTokenExpired, "") }, platform.Paused, 0, "expired"},
		{"no permission", func(s *tiktoktest.Server) { s.FailNext(1, tiktoktest.CodeNoPermission, "") }, platform.Paused, 0, "no permission"},
		{"HTTP 401", func(s *tiktoktest.Server) { s.FailNextHTTP(1, http.StatusUnauthorized) }, platform.Paused, 0, "access token"},
		{"wrong API version", func(s *tiktoktest.Server) { s.FailNext(1, 40006, "") }, platform.Refused, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := tiktoktest.New(t)
			p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
			site := tiktokSite(t, full())
			rows := leadRows(t, p, site, 3)
			c.fail(srv)
			out, err := p.Send(context.Background(), site, rows)
			if err == nil {
				t.Fatalf("no error; outcomes %+v", out)
			}
			f := platform.Classify(err)
			if f.Class != c.class || f.RetryAfter != c.retryAfter {
				t.Errorf("class %v retry after %v, want %v %v (%v)", f.Class, f.RetryAfter, c.class, c.retryAfter, err)
			}
			if c.words != "" && !strings.Contains(f.Words, c.words) {
				t.Errorf("words %q, want them to say %q", f.Words, c.words)
			}
			for i, o := range out {
				if o.Accepted || o.Err != nil {
					t.Errorf("row %d has an outcome of its own: %+v", i, o)
				}
			}
			if len(srv.Accepted()) != 0 {
				t.Errorf("accepted %v", srv.AcceptedIDs())
			}
		})
	}
}

// One bad event fails TikTok's whole request without naming it: the batch is
// halved until it stands alone, and every other event goes.
func TestSendSplitsOnRefusedEvent(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	site := tiktokSite(t, full())
	rows := leadRows(t, p, site, 5)
	srv.Refuse(rows[2].EventID, "user.email is not a valid hash")
	out, err := p.Send(context.Background(), site, rows)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		switch {
		case i == 2:
			if o.Accepted || o.Err == nil || !strings.Contains(o.Err.Error(), "user.email is not a valid hash") ||
				!strings.Contains(string(o.Response), "40002") {
				t.Errorf("the bad row: %+v", o)
			}
		case !o.Accepted:
			t.Errorf("row %d not accepted: %+v", i, o)
		}
	}
	got := srv.AcceptedIDs()
	slices.Sort(got)
	if want := []string{"ev-L00", "ev-L01", "ev-L03", "ev-L04"}; !slices.Equal(got, want) {
		t.Errorf("accepted %v, want each good event once: %v", got, want)
	}
	// 5 refused; 2 taken; 3 refused; the bad one alone refused; 2 taken.
	var sizes []int
	for _, r := range srv.Requests() {
		sizes = append(sizes, len(r.Events))
	}
	if want := []int{5, 2, 3, 1, 2}; !slices.Equal(sizes, want) {
		t.Errorf("request sizes %v, want %v", sizes, want)
	}
}

// A failure that is not about the data, met while halving, stops the send:
// what was accepted stays accepted, the rest is left to the class.
func TestSendSplitStopsOnOutage(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	site := tiktokSite(t, full())
	rows := leadRows(t, p, site, 4)
	srv.Refuse(rows[3].EventID, "bad event")
	// The 4 are refused, the first half taken, then TikTok fails.
	srv.FailAt(3, tiktoktest.CodeSystemError)
	out, err := p.Send(context.Background(), site, rows)
	if f := platform.Classify(err); err == nil || f.Class != platform.Transient {
		t.Fatalf("error %v, want a transient failure", err)
	}
	if !out[0].Accepted || !out[1].Accepted || out[2].Accepted || out[2].Err != nil || out[3].Accepted || out[3].Err != nil {
		t.Errorf("outcomes %+v: want the first half accepted and the rest left to the failure", out)
	}
}

func TestSendGroupsByAccount(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	site := tiktokSite(t, full())
	l := webLead("L1")
	rows := []*model.Delivery{
		row(site, l, model.KindLead, build(t, p, platform.Input{Site: site, Lead: l, Kind: model.KindLead})),
		row(site, l, model.KindQualified, build(t, p, platform.Input{Site: site, Lead: l, Kind: model.KindQualified, At: at})),
	}
	out, err := p.Send(context.Background(), site, rows)
	if err != nil || !out[0].Accepted || !out[1].Accepted {
		t.Fatalf("%v %+v", err, out)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].EventSource != "web" || reqs[1].EventSource != "crm" || reqs[1].EventSourceID != tiktoktest.CRMEventSetID {
		t.Errorf("requests %+v, want one web and one crm", reqs)
	}
	// A stored payload that is not JSON is dead on its own; the others go.
	rows[0].Payload = json.RawMessage(`{"event":`)
	out, err = p.Send(context.Background(), site, rows)
	if err != nil || out[0].Err == nil || out[0].Accepted || !out[1].Accepted {
		t.Errorf("a broken payload: %v %+v", err, out)
	}
}

// A web event older than TikTok takes is refused by the stand-in; the
// platform's deadline keeps such a row from being sent at all.
func TestStandInRefusesOldWebEvent(t *testing.T) {
	srv := tiktoktest.New(t)
	clock := testkit.NewClock(at.Add(time.Hour))
	p := newPlatform(srv, clock)
	site := tiktokSite(t, full())
	rows := leadRows(t, p, site, 1)
	clock.Add(tiktok.WebMaxAge)
	out, err := p.Send(context.Background(), site, rows)
	if err != nil || out[0].Err == nil || !strings.Contains(out[0].Err.Error(), "older than 7 days") {
		t.Errorf("an 8-day-old web event: %v %+v", err, out)
	}
	if !rows[0].DeadlineAt.Before(clock.Now()) {
		t.Errorf("deadline %v is not before %v", rows[0].DeadlineAt, clock.Now())
	}
}

func TestRedact(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	site := tiktokSite(t, full())
	l := webLead("L1")
	ev := build(t, p, platform.Input{Site: site, Lead: l, Kind: model.KindLead,
		Clicks: model.ClickIDs{TTClid: "E.C.P.click"}, Cookies: map[string]string{"_ttp": "cookie-value"}})
	red := p.Redact(ev.Payload)
	for _, secret := range []string{"E.C.P.click", "cookie-value", "203.0.113.9", "iPhone", "E.C.P.secret"} {
		if strings.Contains(string(red), secret) {
			t.Errorf("redacted payload shows %q: %s", secret, red)
		}
	}
	e := decode(t, red)
	if e.User.Email != sha("ayse.yilmaz@example.com") || e.User.Phone == "" || e.User.ExternalID == "" {
		t.Errorf("hashes lost: %+v", e.User)
	}
	if e.Page == nil || e.Page.URL != testkit.Origin+"/implant" || e.Event != "Lead" || e.EventID != l.EventID {
		t.Errorf("redacted event %+v page %+v", e, e.Page)
	}
	if got := p.Redact(json.RawMessage(`not json`)); string(got) != "{}" {
		t.Errorf("unreadable payload shown as %s", got)
	}
}

func TestSendTest(t *testing.T) {
	srv := tiktoktest.New(t)
	p := newPlatform(srv, testkit.NewClock(at.Add(time.Hour)))
	s := full()
	if _, err := p.SendTest(context.Background(), tiktokSite(t, s)); err == nil || !strings.Contains(err.Error(), "test event code") {
		t.Errorf("no test event code: %v", err)
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("a request without a test event code")
	}
	s.TestEventCode = tiktoktest.TestEventCode
	site := tiktokSite(t, s)
	res, err := p.SendTest(context.Background(), site)
	if err != nil {
		t.Fatal(err)
	}
	if res.Account != tiktoktest.PixelCode || res.Code != tiktoktest.TestEventCode || !strings.Contains(string(res.Answer), `"code":0`) {
		t.Errorf("result %+v answer %s", res, res.Answer)
	}
	got := srv.Accepted()
	if len(got) != 1 || got[0].TestEventCode != tiktoktest.TestEventCode || got[0].Name != tiktok.DefaultLeadEvent ||
		string(got[0].JSON) != string(res.Event) {
		t.Errorf("accepted %+v", got)
	}
	srv.Pause()
	_, err = p.SendTest(context.Background(), site)
	if f := platform.Classify(err); err == nil || f.Class != platform.Paused {
		t.Errorf("revoked token: %v", err)
	}
	var f *platform.Failure
	if !errors.As(err, &f) || !strings.Contains(f.Error(), "40105") {
		t.Errorf("the failure does not carry TikTok's code: %v", err)
	}
}
