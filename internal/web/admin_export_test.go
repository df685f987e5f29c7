package web_test

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/cleanads/cleanads/internal/app"
)

// The inbox as CSV: the inbox's filters, UTF-8 with a byte order mark and
// a header, every matching lead, and cells a spreadsheet would run as a
// formula escaped.
func TestAdminExportCSV(t *testing.T) {
	e := newAdminEnv(t)
	ctx := context.Background()
	site, _ := e.db.SiteByID(ctx, "dent")
	fill := int64(15000)
	evil, _, err := e.svc.Submit(ctx, site, &app.LeadInput{Name: "=HYPERLINK(\"http://evil.example\",\"Ayşe\")",
		Email: "kotu@example.com", Phone: "0542 111 22 33", Message: "@SUM(1+1) -2 randevu istiyorum lütfen", FillMS: &fill,
		ClientIP: "85.105.1.9", UserAgent: "Mozilla/5.0"})
	if err != nil {
		t.Fatal(err)
	}
	c := e.login()
	read := func(query string) (map[string][]string, []string) {
		t.Helper()
		p := c.get("/admin/leads.csv" + query)
		if p.code != 200 || p.hdr.Get("Content-Type") != "text/csv; charset=utf-8" ||
			!strings.HasPrefix(p.hdr.Get("Content-Disposition"), `attachment; filename="cleanads-leads-`) {
			t.Fatalf("%s: %d %v", query, p.code, p.hdr)
		}
		if !strings.HasPrefix(p.body, "\uFEFF") {
			t.Fatalf("%s: no byte order mark", query)
		}
		rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(p.body, "\uFEFF"))).ReadAll()
		if err != nil || len(rows) == 0 {
			t.Fatalf("%s: %v %q", query, err, p.body)
		}
		byID := map[string][]string{}
		for _, r := range rows[1:] {
			byID[r[0]] = r
		}
		return byID, rows[0]
	}
	all, header := read("")
	if strings.Join(header, ",") != "id,site,received_at,verdict,score,decided_by,reasons,name,email,phone,message,source,page_url,external_id,lead_id,stages" {
		t.Errorf("header: %v", header)
	}
	if len(all) != 5 {
		t.Errorf("%d leads, want 5", len(all))
	}
	row := all[string(evil.ID)]
	if row == nil || row[7] != "'=HYPERLINK(\"http://evil.example\",\"Ayşe\")" || row[10] != "'@SUM(1+1) -2 randevu istiyorum lütfen" {
		t.Errorf("a formula was not escaped: %q", row)
	}
	clean := all[string(e.leads["clean"].ID)]
	if clean == nil || clean[7] != "Ayşe Yılmaz" || clean[8] != "ayse.yilmaz@gmail.com" || clean[3] != "clean" {
		t.Errorf("the clean lead: %q", clean)
	}
	// The inbox's filters: verdict, search.
	junk, _ := read("?verdict=junk")
	want := 0
	for _, r := range all {
		if r[3] == "junk" {
			want++
		}
	}
	if len(junk) != want || want == 0 || junk[string(e.leads["junk"].ID)] == nil {
		t.Errorf("verdict=junk: %d rows, want %d", len(junk), want)
	}
	for _, r := range junk {
		if r[3] != "junk" {
			t.Errorf("verdict=junk exported a %s lead", r[3])
		}
	}
	found, _ := read("?q=0532+412")
	if len(found) != 1 || found[string(e.leads["clean"].ID)] == nil {
		t.Errorf("q=0532 412: %v", found)
	}
	// The inbox links to it with its filters.
	if p := c.get("/admin/?verdict=junk&q=test"); !strings.Contains(p.body, `href="/admin/leads.csv?site=&amp;verdict=junk&amp;q=test"`) {
		t.Errorf("the inbox has no export link with its filters")
	}
}
