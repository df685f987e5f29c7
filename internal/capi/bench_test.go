package capi

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/capi/graphtest"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/platform"
)

func BenchmarkNormalize(b *testing.B) {
	cases := []struct{ name, field, value, country string }{
		{"em", FieldEmail, "  Ayse.Yilmaz@Example.COM ", ""},
		{"ph/TR national", FieldPhone, "0532 412 87 19", "TR"},
		{"ph/no country", FieldPhone, "+90 532 412 87 19", ""},
		{"fn", FieldFirstName, "Ayşe", ""},
		{"ct", FieldCity, "San Francisco", ""},
		{"country", FieldCountry, "TR", ""},
		{"db", FieldBirthDate, "31.12.1990", ""},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Normalize(c.field, c.value, c.country); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkHash(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Hash("ayse.yilmaz@example.com")
	}
}

// BenchmarkLeadUserData normalises and hashes everything a lead sends:
// e-mail, phone, first and last name, external id and country.
func BenchmarkLeadUserData(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range [][2]string{
			{FieldEmail, " Ayse@Example.com "}, {FieldPhone, "0532 412 87 19"}, {FieldFirstName, "Ayşe"},
			{FieldLastName, "Yılmaz"}, {FieldExternalID, "crm-4711"}, {FieldCountry, "TR"},
		} {
			if _, err := HashField(f[0], f[1], "TR"); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkBuildLeadEvent(b *testing.B) {
	s, l := testSite(), testLead()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildLeadEvent(BuildParams{Site: s, Lead: l}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPrecheck(b *testing.B) {
	e, err := BuildLeadEvent(BuildParams{Site: testSite(), Lead: testLead()})
	if err != nil {
		b.Fatal(err)
	}
	now := submitted.Add(time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		if err := Precheck(&e, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeBatch encodes 1000 built events and the request body.
func BenchmarkEncodeBatch(b *testing.B) {
	e, err := BuildLeadEvent(BuildParams{Site: testSite(), Lead: testLead()})
	if err != nil {
		b.Fatal(err)
	}
	events := make([]Event, MaxBatch)
	for i := range events {
		events[i] = e
	}
	raw := make([]json.RawMessage, MaxBatch)
	b.ReportAllocs()
	for b.Loop() {
		for i := range events {
			if raw[i], err = json.Marshal(&events[i]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := appendBody(nil, SendRequest{Events: raw, AccessToken: "token"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendBatch sends 1000-event requests to the local stand-in and
// reports events per second.
func BenchmarkSendBatch(b *testing.B) {
	g := graphtest.New(b)
	c := NewClient(ClientOptions{BaseURL: g.URL, HTTP: g.Client()})
	events := rawEvents(b, MaxBatch, time.Now())
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	n := 0
	for b.Loop() {
		if _, err := c.Send(context.Background(), SendRequest{PixelID: "1", AccessToken: graphtest.Token, Events: events}); err != nil {
			b.Fatal(err)
		}
		n += MaxBatch
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkMetaCheck checks a stored lead event, as the drain does
// before every send.
func BenchmarkMetaCheck(b *testing.B) {
	e, err := BuildLeadEvent(BuildParams{Site: testSite(), Lead: testLead()})
	if err != nil {
		b.Fatal(err)
	}
	d := &model.Delivery{}
	if d.Payload, err = json.Marshal(e); err != nil {
		b.Fatal(err)
	}
	m, now := NewMeta(nil, platform.Deps{}), submitted.Add(time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Check(nil, d, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRequestBody writes the body of a request of 1000 stored lead
// events.
func BenchmarkRequestBody(b *testing.B) {
	req := SendRequest{AccessToken: "token", Events: rawEvents(b, MaxBatch, submitted)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := appendBody(nil, req); err != nil {
			b.Fatal(err)
		}
	}
}
